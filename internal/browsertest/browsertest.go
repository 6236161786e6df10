// Package browsertest starts Debian's headless chromium for tests that
// prove a page works in a real browser (the run report, the playground).
package browsertest

import (
	"os"
	"testing"

	"github.com/chromedp/chromedp"
)

// Path is Debian's chromium, which `make deps-apt` installs.
const Path = "/usr/bin/chromium"

// Require skips t when chromium is absent; why says what the test would
// have proved in it.
func Require(t testing.TB, why string) {
	t.Helper()
	if _, err := os.Stat(Path); err != nil {
		t.Skipf("%s not found: install Debian's chromium (make deps-apt) to %s", Path, why)
	}
}

// Options are the flags every test browser starts with: headless, no
// sandbox (tests run as root), none of chromium's background connections
// (the network here is closed and refuses them), and the given fresh
// profile directory.
func Options(profile string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	}
}
