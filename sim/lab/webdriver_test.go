package lab

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWebdriverClient drives a simulated iPhone with a real third-party
// client: WebdriverIO's W3C protocol client (npm `webdriver`, pinned in
// test/npm), which speaks to WebDriverAgent as scripts without Appium do.
func TestWebdriverClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	dir, _ := filepath.Abs("../../test/npm")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "webdriver")); err != nil {
		t.Skip("test/npm/node_modules/webdriver missing: run `make deps-npm`")
	}
	l := startLab(t, Options{IOS: 1, Seed: 1})
	d := l.Devices()[0]
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "wda-webdriver-client.mjs"), d.URL)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("webdriver client: %v\n%s\n%s", err, out, stderr)
	}
	var got struct {
		SessionID  string
		Status     bool
		Window     struct{ Width, Height int }
		Username   string
		Rect       struct{ X, Y, Width, Height float64 }
		Switches   int
		Missing    string
		Source     bool
		Screenshot int
		Alert      string
	}
	// WebdriverIO logs a line to stdout before the script's JSON.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if got.SessionID == "" || !got.Status || got.Window.Width != 390 || got.Window.Height != 844 {
		t.Errorf("session/status/window: %+v", got)
	}
	if got.Username != "demo" || got.Rect.Width <= 0 || got.Switches != 1 {
		t.Errorf("elements: %+v", got)
	}
	if !strings.Contains(strings.ToLower(got.Missing), "no such element") {
		t.Errorf("missing element error %q; want no such element", got.Missing)
	}
	if !got.Source || got.Screenshot < 10000 {
		t.Errorf("after signing in: welcome %v, screenshot %d base64 bytes", got.Source, got.Screenshot)
	}
	if !strings.Contains(strings.ToLower(got.Alert), "no such alert") {
		t.Errorf("alert text without an alert: %q", got.Alert)
	}
	if st, _ := d.Phone.State("com.apex.login"); st["user"] != "demo" {
		t.Errorf("phone state user = %v", st["user"])
	}
}
