package lab

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestWebdriverIO drives a simulated iPhone with webdriverio (pinned in
// test/npm) attached to its WebDriverAgent: finds by every strategy,
// swipe and scrollIntoView (which look for the XCUIElementTypeApplication),
// orientation and alerts.
func TestWebdriverIO(t *testing.T) {
	node, script := npmClient(t, "webdriverio", "wdio-client.mjs")
	l := startLab(t, Options{IOS: 1, Seed: 1})
	d := l.Devices()[0]
	got := runWdio(t, node, script, d.URL)
	want := map[string]any{
		"swiped": true, "scrolled": true,
		"byAccessibilityId": 1.0, "byPredicate": 1.0, "byClassChain": 1.0, "byXPath": 1.0,
		"byIndexedXPath": "forgot_password", "byClassName": 1.0, "appByPredicate": 1.0,
		"focus": true, "orientation": "PORTRAIT", "landscape": []any{"LANDSCAPE", 844.0},
		"noAlert": "no such alert", "alert": "Reset password\nPassword reset is handled by your administrator. The demo account is demo / apex123.",
		"alertAfter": "no such alert",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("webdriverio saw (-want +got):\n%s", diff)
	}
	if st, _ := d.Phone.State("com.apex.login"); st["username"] != "demo" {
		t.Errorf("login username = %v", st["username"])
	}
}

// TestWebdriverIOGestures sends WebDriverAgent's gesture endpoints from
// webdriverio: element swipe, scroll and pinch, /wda/touch/perform and
// its multi-finger form, W3C actions with two pointers, a URL opened with
// browser.url (/url), and reads the MJPEG server /appium/settings names.
func TestWebdriverIOGestures(t *testing.T) {
	node, script := npmClient(t, "webdriverio", "wdio-gestures-client.mjs")
	l := startLab(t, Options{IOS: 1, Seed: 1})
	d := l.Devices()[0]
	got := runWdio(t, node, script, d.URL)
	want := map[string]any{
		"elementSwipe": true, "elementScroll": true, "touchPerform": true, "url": true,
		"elementPinch": "Page, zoom 200%", "multiTouchPerform": "Page, zoom 600%", "twoPointerActions": "Page, zoom 200%",
		"mjpeg": []any{"multipart/x-mixed-replace; boundary=--BoundaryString", true, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("webdriverio saw (-want +got):\n%s", diff)
	}
}

// runWdio runs a webdriverio client script against a WebDriverAgent URL
// and returns the JSON object it prints last.
func runWdio(t *testing.T, node, script, url string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, url)
	cmd.Dir = filepath.Dir(script)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("webdriverio client: %v\n%s\n%s", err, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	return got
}

// TestWebdriverIOApps sends WebDriverAgent's app and device endpoints from
// webdriverio: a new session with a bundle id and /wda/apps/launch
// cold-start the app (the username typed before is gone) while
// /wda/apps/activate keeps it; contexts and windows, timeouts, appium
// settings, the pasteboard, the running apps, the battery, deactivateApp
// (the app comes back as it was) and an element's screenshot.
func TestWebdriverIOApps(t *testing.T) {
	node, script := npmClient(t, "webdriverio", "wdio-apps-client.mjs")
	l := startLab(t, Options{IOS: 1, Seed: 1})
	d := l.Devices()[0]
	got := runWdio(t, node, script, d.URL)
	want := map[string]any{
		"typed": 1.0, "afterNewSession": 0.0, "afterActivate": 1.0, "afterLaunch": 0.0,
		"contexts": []any{"NATIVE_APP", []any{"NATIVE_APP"}, "NATIVE_APP", []any{"NATIVE_APP"}},
		"timeouts": nil, "settings": 30.0,
		"pasteboard":      "pasted 中文",
		"pasteboardImage": "WebDriverError: Unsupported content type: image (the simulated pasteboard holds plaintext)",
		"apps":            []any{"com.apex.login"}, "battery": map[string]any{"level": 1.0, "state": 3.0},
		"deactivate": nil, "deactivateWaited": true, "afterDeactivate": 1.0,
		"elementShot":  []any{"PNG", 3.0, true},
		"mobileScript": "WebDriverError: Unhandled endpoint: POST /session/:id/execute/sync",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("webdriverio saw (-want +got):\n%s", diff)
	}
	if fg, _ := d.Phone.Foreground(); fg != "com.apex.login" {
		t.Errorf("after deactivateApp %s is in front", fg)
	}
}
