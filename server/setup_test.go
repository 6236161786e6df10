package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/server"
)

func setupOf(t *testing.T, targets func(context.Context) ([]device.Target, error)) server.Setup {
	t.Helper()
	srv, err := server.New(server.Options{
		Open: func(context.Context, string) (device.Driver, device.Target, func(), error) {
			return nil, device.Target{}, nil, errors.New("not in this test")
		},
		Targets: targets,
		NewAgent: func(_ server.ModelSettings, on func(event.Event)) (agent.AI, error) {
			return agent.New(agent.Config{OnEvent: on})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1:5800/session/setup", nil))
	var s server.Setup
	if err := json.Unmarshal(rec.Body.Bytes(), &s); rec.Code != 200 || err != nil {
		t.Fatalf("GET /session/setup: %d %v %s", rec.Code, err, rec.Body)
	}
	return s
}

func TestSessionSetup(t *testing.T) {
	pixel := device.Target{ID: "adb/emulator-5554", Serial: "emulator-5554", Model: "Pixel 8", State: "device", Platform: device.Android}
	phone2 := device.Target{ID: "adb/R58M", Serial: "R58M", State: "device", Platform: device.Android}
	locked := device.Target{ID: "adb/X1", Serial: "X1", State: "unauthorized", Hint: "accept the USB debugging prompt on the phone"}
	list := func(ts ...device.Target) func(context.Context) ([]device.Target, error) {
		return func(context.Context) ([]device.Target, error) { return ts, nil }
	}
	for _, tc := range []struct {
		name     string
		targets  func(context.Context) ([]device.Target, error)
		auto     bool
		def      string
		options  int
		disabled []string
		warning  string
	}{
		{"one online", list(pixel), true, pixel.ID, 1, nil, ""},
		{"one online, one unauthorized", list(pixel, locked), true, pixel.ID, 2, []string{locked.ID}, ""},
		{"two online", list(pixel, phone2), false, "", 2, nil, ""},
		{"none online", list(locked), false, "", 1, []string{locked.ID}, "no device is online"},
		{"none", list(), false, "", 0, nil, "no device found"},
		{"discovery fails", func(context.Context) ([]device.Target, error) { return nil, errors.New("adb server not running") }, false, "", 0, nil, "adb server not running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := setupOf(t, tc.targets)
			if s.Submit.Method != "POST" || s.Submit.Path != "/session" || len(s.Fields) != 1 || s.Fields[0].Name != "deviceId" {
				t.Fatalf("form = %+v", s)
			}
			f := s.Fields[0]
			if s.AutoSubmit != tc.auto || f.Default != tc.def || len(f.Options) != tc.options {
				t.Errorf("autoSubmit %v default %q options %d, want %v %q %d", s.AutoSubmit, f.Default, len(f.Options), tc.auto, tc.def, tc.options)
			}
			var disabled []string
			for _, o := range f.Options {
				if o.Disabled {
					disabled = append(disabled, o.Value)
					if o.Hint == "" {
						t.Errorf("disabled option %v has no hint", o)
					}
				}
			}
			if strings.Join(disabled, ",") != strings.Join(tc.disabled, ",") {
				t.Errorf("disabled %v, want %v", disabled, tc.disabled)
			}
			if got := strings.Join(s.Warnings, "; "); (tc.warning == "") != (got == "") || !strings.Contains(got, tc.warning) {
				t.Errorf("warnings %q, want one mentioning %q", got, tc.warning)
			}
		})
	}
	if s := setupOf(t, list(pixel)); s.Fields[0].Options[0].Label != "Pixel 8 (adb/emulator-5554)" {
		t.Errorf("label = %q", s.Fields[0].Options[0].Label)
	}
}

// TestSessionSetupWithSession: the form no longer auto-submits once a
// session is open.
func TestSessionSetupWithSession(t *testing.T) {
	p := startPhone(t, nil)
	if m := p.mustDo(200, "GET", "/session/setup", nil); m["autoSubmit"] != true {
		t.Errorf("before a session: %v", m)
	}
	p.ready()
	m := p.mustDo(200, "GET", "/session/setup", nil)
	if m["autoSubmit"] != false || m["session"].(map[string]any)["state"] != "ready" {
		t.Errorf("with a session: %v", m)
	}
}

// TestSetupBlocked: while the platform says no session can be set up, the
// form says why and cannot be submitted, POST /session is refused with the
// reason, and the session is blocked; once fixed, it is required again.
func TestSetupBlocked(t *testing.T) {
	var blocked atomic.Bool
	blocked.Store(true)
	p := startPhone(t, &phoneOptions{opts: server.Options{Blocked: func(context.Context) error {
		if blocked.Load() {
			return errors.New("adb is not installed: apt-get install adb, or start with --sim")
		}
		return nil
	}}})
	s := p.mustDo(200, "GET", "/session/setup", nil)
	if !strings.Contains(s["blocked"].(string), "apt-get install adb") || s["autoSubmit"] != false {
		t.Errorf("setup while blocked: %v", s)
	}
	if st := p.state(); st != "blocked" {
		t.Errorf("state while blocked = %q", st)
	}
	if code, m := p.do("POST", "/session", map[string]string{"deviceId": ""}); code != 409 || !strings.Contains(m["error"].(string), "apt-get install adb") {
		t.Errorf("POST /session while blocked: %d %v", code, m)
	}
	blocked.Store(false)
	if s := p.mustDo(200, "GET", "/session/setup", nil); s["blocked"] != nil || s["autoSubmit"] != true {
		t.Errorf("setup once fixed: %v", s)
	}
	if st := p.state(); st != "required" {
		t.Errorf("state once fixed = %q, want required", st)
	}
	p.ready()
}
