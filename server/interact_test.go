package server_test

import (
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/server"
)

func TestInteractTapByText(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	if fg, _ := p.dev.Phone.Foreground(); fg == "com.android.settings" {
		t.Fatalf("settings is already in front")
	}
	m := p.mustDo(200, "POST", "/interact", map[string]any{"action": "tap", "params": map[string]any{"locate": "Settings"}})
	if fg, _ := p.dev.Phone.Foreground(); fg != "com.android.settings" {
		t.Errorf("after tapping Settings the foreground app is %q, want com.android.settings", fg)
	}
	if m["action"] != "Tap" || m["ok"] != true {
		t.Errorf("interact = %v", m)
	}
	if el, _ := m["element"].(map[string]any); el == nil || !strings.Contains(el["text"].(string), "Settings") {
		t.Errorf("touched element = %v, want the Settings icon", m["element"])
	}
	if pt, _ := m["point"].(map[string]any); pt == nil || pt["x"].(float64) <= 0 {
		t.Errorf("touched point = %v", m["point"])
	}
	if sc := m["scene"].(string); !strings.Contains(sc, "Network & internet") {
		t.Errorf("scene after the tap is not the Settings app:\n%s", sc)
	}

	// An action with no locator, by its Midscene alias.
	m = p.mustDo(200, "POST", "/interact", map[string]any{"action": "AndroidBackButton"})
	if m["action"] != "Back" || strings.Contains(m["scene"].(string), "Network & internet") {
		t.Errorf("after Back: %v", m)
	}
}

func TestInteractErrors(t *testing.T) {
	p := startPhone(t, nil)
	if code, _ := p.do("POST", "/interact", map[string]any{"action": "Back"}); code != 409 {
		t.Errorf("interact with no session: %d, want 409", code)
	}
	p.ready()
	for _, tc := range []struct {
		name string
		body any
		code int
		msg  string
	}{
		{"unknown action", map[string]any{"action": "Teleport"}, 400, "GET /action-space"},
		{"missing param", map[string]any{"action": "Tap", "params": map[string]any{}}, 400, "locate"},
		{"wrong param type", map[string]any{"action": "Sleep", "params": map[string]any{"ms": "soon"}}, 400, "ms"},
		{"not on screen", map[string]any{"action": "Tap", "params": map[string]any{"locate": "No Such Button Anywhere"}}, 422, "No Such Button"},
		{"unknown field", map[string]any{"action": "Back", "extra": 1}, 400, "extra"},
		{"app not installed", map[string]any{"action": "Launch", "params": map[string]any{"app": "com.nope"}}, 0, "com.nope"},
		{"not an object", []int{1}, 400, "JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, m := p.on(t).do("POST", "/interact", tc.body)
			msg, _ := m["error"].(string)
			if code != tc.code && tc.code != 0 || code < 400 || !strings.Contains(msg, tc.msg) {
				t.Errorf("%d %v, want %d mentioning %q", code, m["error"], tc.code, tc.msg)
			}
			// The playground shows "Tap: …": the action once, not "Tap: Tap: …".
			if body, ok := tc.body.(map[string]any); ok && strings.Count(msg, body["action"].(string)+": ") > 1 {
				t.Errorf("the error names the action twice: %s", msg)
			}
		})
	}
}

// TestInteractConcurrent sends manual actions at once: they run one at a
// time and all succeed, and the phone ends where the last left it.
func TestInteractConcurrent(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	var wg sync.WaitGroup
	codes := make([]int, 4)
	for i := range codes {
		wg.Go(func() {
			codes[i], _ = p.do("POST", "/interact", map[string]any{"action": "Home"})
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Errorf("interact %d: %d", i, c)
		}
	}
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Tap", "params": map[string]any{"locate": "Settings"}})
	if fg, _ := p.dev.Phone.Foreground(); fg != "com.android.settings" {
		t.Errorf("foreground = %q", fg)
	}
}

// TestInteractSeesPixels: a button that exists only in the screenshot (the
// Arcade's canvas) is found by its text through OCR, and the tap lands.
func TestInteractSeesPixels(t *testing.T) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		t.Skip("tesseract is not installed (make deps-apt installs it)")
	}
	p := startPhone(t, &phoneOptions{apps: []string{"../examples/apps/arcade.yaml"}})
	p.ready()
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Launch", "params": map[string]string{"app": "com.apex.arcade"}})
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Tap", "params": map[string]any{"locate": "Play"}})
	m := p.mustDo(200, "POST", "/interact", map[string]any{"action": "Tap", "params": map[string]any{"locate": "Start game"}})
	if el, _ := m["element"].(map[string]any); el == nil || el["source"] != "ocr" {
		t.Errorf("the tap touched %v, want the button OCR read", m["element"])
	}
	if st, err := p.dev.Phone.State("com.apex.arcade"); err != nil || (st["games"] != 1.0 && st["games"] != 1) {
		t.Errorf("games = %v (%v): the tap on the pixel-only button did not start a game", st["games"], err)
	}
}

// TestInteractOCROff: with OCR off, manual actions read the tree only,
// so the pixel-only button is not found.
func TestInteractOCROff(t *testing.T) {
	p := startPhone(t, &phoneOptions{apps: []string{"../examples/apps/arcade.yaml"}, opts: server.Options{Perception: perceive.Options{Mode: perceive.Off}}})
	p.ready()
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Launch", "params": map[string]string{"app": "com.apex.arcade"}})
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Tap", "params": map[string]any{"locate": "Play"}})
	if code, m := p.do("POST", "/interact", map[string]any{"action": "Tap", "params": map[string]any{"locate": "Start game"}}); code != 422 {
		t.Errorf("tap on the pixel-only button with OCR off: %d %v, want 422 (not found)", code, m)
	}
}
