package cli

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apexagent/apex/device/hub"
	"github.com/apexagent/apex/internal/patience"
)

// TestPlaygroundBoots: the playground boots simulated phones on demand,
// each a real apex sim process under its platform's session host: the
// run cap refuses the boot past it, a booted phone opens as the session's
// device, and DELETE /devices/ID stops it (not while it is the session's).
func TestPlaygroundBoots(t *testing.T) {
	base := startPlayground(t, &PlaygroundOptions{Port: 0, Boot: BootCaps{RunCap: 1}})

	code, a := getJSON(t, "POST", base+"devices/boot", map[string]any{"platform": "android"})
	id, _ := a["id"].(string)
	if code != 201 || !strings.HasPrefix(id, "booted/127.0.0.1:") || a["state"] != "device" || a["model"] == "" {
		t.Fatalf("POST /devices/boot android: %d %v", code, a)
	}
	if code, m := getJSON(t, "POST", base+"devices/boot", map[string]any{"platform": "android"}); code != 409 || !strings.Contains(m["error"].(string), "run cap reached: 1 of 1") {
		t.Errorf("a boot past run cap 1: %d %v; want 409 naming the cap", code, m)
	}
	_, setup := getJSON(t, "GET", base+"session/setup", nil)
	if got := setup["boot"].([]any); len(got) != 2 || got[0] != "android" || got[1] != "ios" {
		t.Errorf("setup offers to boot %v; want android and ios", got)
	}
	listed := false
	for _, o := range setup["fields"].([]any)[0].(map[string]any)["options"].([]any) {
		o := o.(map[string]any)
		listed = listed || o["value"] == id && o["booted"] == true && o["disabled"] == nil
	}
	if !listed {
		t.Errorf("the devices list does not offer the booted phone %s: %v", id, setup["fields"])
	}
	pid := sessionPID(t, id)

	// The booted phone becomes the session's device.
	getJSON(t, "DELETE", base+"session", nil)
	if code, m := getJSON(t, "POST", base+"session", map[string]any{"deviceId": id}); code != 200 || m["state"] != "ready" {
		t.Fatalf("open the booted phone: %d %v", code, m)
	}
	if code, m := getJSON(t, "POST", base+"interact", map[string]any{"action": "Launch", "params": map[string]any{"app": "com.android.settings"}}); code != 200 {
		t.Fatalf("launch Settings on the booted phone: %d %v", code, m)
	}
	if _, m := getJSON(t, "GET", base+"foreground-app", nil); m["device"] != id || m["app"] != "com.android.settings" {
		t.Errorf("foreground app of the session: %v", m)
	}
	shut := base + "devices/" + url.PathEscape(id)
	if code, m := getJSON(t, "DELETE", shut, nil); code != 409 || !strings.Contains(m["error"].(string), "disconnect it first") {
		t.Errorf("shut down the session's device: %d %v; want 409", code, m)
	}
	getJSON(t, "DELETE", base+"session", nil)
	if code, m := getJSON(t, "DELETE", shut, nil); code != 200 {
		t.Fatalf("DELETE /devices/%s: %d %v", id, code, m)
	}
	if processRuns(pid) {
		t.Errorf("the booted phone's process %d runs after its shutdown", pid)
	}
	if code, m := getJSON(t, "DELETE", shut, nil); code != 404 {
		t.Errorf("shut down twice: %d %v; want 404", code, m)
	}

	// The cap counts each platform's phones: an iPhone boots beside.
	code, i := getJSON(t, "POST", base+"devices/boot", map[string]any{"platform": "ios"})
	if code != 201 || !strings.HasPrefix(i["id"].(string), "booted-ios/127.0.0.1:") || i["platform"] != "ios" {
		t.Fatalf("POST /devices/boot ios: %d %v", code, i)
	}
	if code, m := getJSON(t, "POST", base+"session", map[string]any{"deviceId": i["id"]}); code != 200 || m["state"] != "ready" {
		t.Fatalf("open the booted iPhone: %d %v", code, m)
	}
	if code, m := getJSON(t, "POST", base+"devices/boot", map[string]any{"platform": "windows"}); code != 400 {
		t.Errorf("boot an unknown platform: %d %v; want 400", code, m)
	}
}

// sessionPID is the process serving the booted phone id, as its session
// host recorded it.
func sessionPID(t *testing.T, id string) int {
	t.Helper()
	ss, err := hub.ReadSessions(os.Getenv("APEX_SESSIONS_DIR"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		if s.Target.ID == id && s.PID > 0 {
			return s.PID
		}
	}
	t.Fatalf("no session recorded for %s: %+v", id, ss)
	return 0
}

// processRuns reports whether pid runs, waiting up to 10s (stretched by
// patience) for it to end.
func processRuns(pid int) bool {
	return patience.Until(10*time.Second, func() error {
		if syscall.Kill(pid, 0) == nil {
			return fmt.Errorf("process %d runs", pid)
		}
		return nil
	}) != nil
}
