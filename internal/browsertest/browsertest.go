// Package browsertest starts Debian's headless chromium for tests that
// prove a page works in a real browser (the run report, the playground).
package browsertest

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
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

// Shared is one chromium for a test binary, started by the first Tab and
// stopped by Close (from TestMain). Each tab has a browser context of its
// own: cookies and storage apart, as a fresh profile would keep them.
type Shared struct {
	once   sync.Once
	ctx    context.Context // the browser; tabs are opened from it
	cancel context.CancelFunc
	err    error
}

// Tab opens a tab, closed when t ends, whose actions time out after
// timeout (stretched by patience on a slow machine), or skips t when
// chromium is absent; why says what t would have proved in it.
func (s *Shared) Tab(t testing.TB, timeout time.Duration, why string) context.Context {
	t.Helper()
	Require(t, why)
	s.once.Do(func() {
		profile, err := os.MkdirTemp("", "apex-chromium-")
		if err != nil {
			s.err = err
			return
		}
		actx, acancel := chromedp.NewExecAllocator(context.Background(), Options(profile)...)
		bctx, bcancel := chromedp.NewContext(actx)
		s.ctx = bctx
		s.cancel = func() { bcancel(); acancel(); os.RemoveAll(profile) }
		s.err = chromedp.Do(bctx) // starts the browser
	})
	if s.err != nil {
		t.Fatalf("start %s: %v", Path, s.err)
	}
	tab, closeTab := chromedp.NewContext(s.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(closeTab)
	ctx, cancel := context.WithTimeout(tab, patience.Of(timeout))
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab of %s: %v", Path, err)
	}
	return ctx
}

// Close stops the browser, if a Tab started it.
func (s *Shared) Close() {
	if s.cancel != nil {
		s.cancel()
	}
}
