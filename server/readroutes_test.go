package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestReadRoutes: the accessibility tree, the foreground app and the log
// of the simulated phone through GET; other methods are refused.
func TestReadRoutes(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Launch", "params": map[string]any{"app": "com.android.settings"}})

	m := p.mustDo(200, "GET", "/foreground-app", nil)
	if m["app"] != "com.android.settings" {
		t.Errorf("GET /foreground-app = %v; want com.android.settings", m)
	}
	m = p.mustDo(200, "GET", "/a11y-tree", nil)
	if tree, _ := m["tree"].(string); m["format"] != "uiautomator" || !strings.Contains(tree, `text="Network &amp; internet"`) {
		t.Errorf("GET /a11y-tree = %v; want the Settings app's uiautomator tree", m)
	}

	m = p.mustDo(200, "GET", "/events/log", nil)
	entries, _ := m["entries"].([]any)
	if len(entries) == 0 || !strings.Contains(logText(entries), "com.android.settings") {
		t.Fatalf("GET /events/log has no line about the launch: %v", m)
	}
	next, _ := m["next"].(string)
	if _, err := time.Parse(time.RFC3339Nano, next); err != nil {
		t.Fatalf("next = %q: %v", next, err)
	}
	// After next, only what happened since.
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Terminate", "params": map[string]any{"app": "com.android.settings"}})
	m = p.mustDo(200, "GET", "/events/log?since="+next, nil)
	later, _ := m["entries"].([]any)
	if len(later) == 0 || len(later) >= len(entries) || strings.Contains(logText(later), "System now ready") {
		t.Errorf("GET /events/log?since=%s = %d lines; want only the lines since (%d before):\n%s", next, len(later), len(entries), logText(later))
	}
	if code, m := p.do("GET", "/events/log?since=yesterday", nil); code != 400 || !strings.Contains(m["error"].(string), "RFC 3339") {
		t.Errorf("a bad since: %d %v; want 400 saying the form", code, m)
	}

	for _, path := range []string{"/a11y-tree", "/foreground-app", "/events/log"} {
		for _, method := range []string{"POST", "PUT", "DELETE"} {
			if code, _ := p.raw(method, path, nil, nil); code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s = %d; want 405", method, path, code)
			}
		}
	}
	// Screenshot capture is the one non-GET besides the actions.
	if code, b := p.raw("POST", "/screenshot", nil, nil); code != 200 || !strings.HasPrefix(string(b), "\x89PNG") {
		t.Errorf("POST /screenshot = %d; want a PNG", code)
	}
}

// TestSettingThroughInteract: a setting run through /interact answers
// with the value read back, and the phone follows.
func TestSettingThroughInteract(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	m := p.mustDo(200, "POST", "/interact", map[string]any{"action": "SetAppearance", "params": map[string]any{"appearance": "dark"}})
	if a, _ := m["answer"].(map[string]any); a == nil || a["dark"] != true {
		t.Errorf("answer = %v; want {dark: true}", m["answer"])
	}
	if !p.dev.Phone.NightMode() {
		t.Error("the phone is not in dark mode")
	}
}

func logText(entries []any) string {
	var b strings.Builder
	for _, e := range entries {
		if m, ok := e.(map[string]any); ok {
			b.WriteString(m["line"].(string))
			b.WriteByte('\n')
		}
	}
	return b.String()
}
