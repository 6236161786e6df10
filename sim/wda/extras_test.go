package wda_test

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"strings"
	"testing"
)

// TestColdStart: a session with a bundle id and /wda/apps/launch start the
// app afresh, /wda/apps/activate keeps it as it is.
func TestColdStart(t *testing.T) {
	r := newRig(t)
	r.session(map[string]any{"bundleId": "com.apex.login"})
	id := r.find("", "accessibility id", "username")
	r.ok("POST", "/element/"+id+"/value", map[string]any{"value": []string{"demo"}})
	r.ok("POST", "/wda/homescreen", nil)
	r.ok("POST", "/wda/apps/activate", map[string]any{"bundleId": "com.apex.login"})
	if st, _ := r.phone.State("com.apex.login"); st["username"] != "demo" {
		t.Fatalf("activate lost the typed text: %v", st["username"])
	}
	r.ok("POST", "/wda/apps/launch", map[string]any{"bundleId": "com.apex.login"})
	if st, _ := r.phone.State("com.apex.login"); st["username"] != "" {
		t.Fatalf("launch kept the typed text %v; WDA cold-starts the app", st["username"])
	}
}

func TestExtraEndpoints(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.apex.login"})
	if got := r.str("GET", s+"/orientation", nil); got != "PORTRAIT" {
		t.Errorf("orientation = %q", got)
	}
	r.ok("POST", s+"/orientation", map[string]any{"orientation": "LANDSCAPE"})
	var rot map[string]int
	r.ok("GET", s+"/rotation", nil).decode(t, &rot)
	var size map[string]int
	r.ok("GET", s+"/window/size", nil).decode(t, &size)
	if rot["z"] != 90 || size["width"] != 844 || r.phone.Rotation() != 1 {
		t.Errorf("after LANDSCAPE: rotation %v, window %v", rot, size)
	}
	r.ok("POST", s+"/rotation", map[string]any{"x": 0, "y": 0, "z": 0})
	if r.phone.Rotation() != 0 {
		t.Error("rotation z=0 did not return to portrait")
	}
	if rep := r.do("POST", s+"/orientation", map[string]any{"orientation": "SIDEWAYS"}); rep.Status == 200 {
		t.Error("an unknown orientation was accepted")
	}
	r.ok("POST", s+"/timeouts", map[string]any{"implicit": 0})
	r.ok("POST", s+"/appium/settings", map[string]any{"settings": map[string]any{"snapshotMaxDepth": 10}})
	var settings map[string]any
	r.ok("GET", s+"/appium/settings", nil).decode(t, &settings)
	if settings["snapshotMaxDepth"] != 10.0 || settings["mjpegServerFramerate"] == nil {
		t.Errorf("settings = %v", settings)
	}
	r.ok("POST", s+"/wda/setPasteboard", map[string]any{"content": base64.StdEncoding.EncodeToString([]byte("剪贴板")), "contentType": "plaintext"})
	if b, _ := base64.StdEncoding.DecodeString(r.str("POST", s+"/wda/getPasteboard", map[string]any{})); string(b) != "剪贴板" {
		t.Errorf("pasteboard = %q", b)
	}
	var apps []map[string]any
	r.ok("GET", s+"/wda/apps/list", nil).decode(t, &apps)
	if len(apps) != 1 || apps[0]["bundleId"] != "com.apex.login" || apps[0]["pid"] == nil {
		t.Errorf("apps list = %v", apps)
	}
	var battery map[string]any
	r.ok("GET", s+"/wda/batteryInfo", nil).decode(t, &battery)
	if battery["level"] != 1.0 {
		t.Errorf("battery = %v", battery)
	}
	id := r.find(s, "accessibility id", "username")
	img, err := png.DecodeConfig(base64NewReader(r.str("GET", s+"/element/"+id+"/screenshot", nil)))
	var rect map[string]int
	r.ok("GET", s+"/element/"+id+"/rect", nil).decode(t, &rect)
	if err != nil || img.Width != rect["width"]*3 || img.Height != rect["height"]*3 {
		t.Errorf("element screenshot %dx%d (%v); the element is %v points at scale 3", img.Width, img.Height, err, rect)
	}
	r.ok("POST", s+"/element/"+id+"/click", nil)
	var focus bool
	r.ok("GET", s+"/element/"+id+"/attribute/hasKeyboardFocus", nil).decode(t, &focus)
	if !focus {
		t.Error("the tapped field has no keyboard focus")
	}
	r.ok("POST", s+"/wda/deactivateApp", map[string]any{"duration": 0})
	if fg, _ := r.phone.Foreground(); fg != "com.apex.login" {
		t.Errorf("after deactivateApp the app on screen is %q", fg)
	}
	r.ok("POST", s+"/url", map[string]any{"url": "https://example.com/ios"})
	if st, _ := r.phone.State("com.android.browser"); st["url"] != "https://example.com/ios" {
		t.Errorf("POST /url: browser url %v", st["url"])
	}
	var found []map[string]string
	r.ok("POST", s+"/elements", map[string]any{"using": "class name", "value": "XCUIElementTypeApplication"}).decode(t, &found)
	if len(found) != 1 {
		t.Errorf("class name XCUIElementTypeApplication found %d elements; want the application", len(found))
	}
	if rep := r.do("POST", s+"/element", map[string]any{"using": "xpath", "value": "(//XCUIElementTypeOther)[last()"}); rep.Status == 200 || !strings.Contains(rep.message(), "invalid xpath") {
		t.Errorf("a broken indexed xpath: %s", rep.raw)
	}
}

func base64NewReader(s string) *bytes.Reader {
	b, _ := base64.StdEncoding.DecodeString(s)
	return bytes.NewReader(b)
}
