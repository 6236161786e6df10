package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apexagent/apex/device"
)

func TestSessionLifecycle(t *testing.T) {
	entered, proceed := make(chan struct{}), make(chan struct{})
	var first sync.Once
	p := startPhone(t, &phoneOptions{open: func(ctx context.Context, id string, real func() (device.Driver, device.Target, func(), error)) (device.Driver, device.Target, func(), error) {
		first.Do(func() {
			close(entered)
			<-proceed
		})
		return real()
	}})

	st := p.mustDo(200, "GET", "/status", nil)
	if st["id"] != p.srv.ID() || p.srv.ID() == "" {
		t.Errorf("status id = %v, want %q", st["id"], p.srv.ID())
	}
	info := p.mustDo(200, "GET", "/runtime-info", nil)
	if got := info["session"].(map[string]any)["state"]; got != "required" {
		t.Errorf("state before a session = %v, want required", got)
	}
	if kinds := fmt.Sprint(info["previewKinds"]); kinds != "[screenshot mjpeg h264 webrtc]" || info["previewTransport"] != "auto" {
		t.Errorf("previewKinds = %v, previewTransport = %v; want the four kinds, auto", kinds, info["previewTransport"])
	}
	var ts []map[string]any
	if code, data := p.raw("GET", "/session/targets", nil, nil); code != 200 || json.Unmarshal(data, &ts) != nil {
		t.Fatalf("GET /session/targets: %d %s, want a list", code, data)
	}
	if len(ts) != 1 || ts[0]["serial"] != p.dev.Serial || ts[0]["label"] == "" {
		t.Errorf("targets = %v, want the simulated phone %s", ts, p.dev.Serial)
	}
	for _, path := range []string{"/action-space", "/screenshot", "/mjpeg"} {
		if code, m := p.do("GET", path, nil); code != 409 || !strings.Contains(m["error"].(string), "POST /session") {
			t.Errorf("GET %s with no session: %d %v, want 409 saying to POST /session", path, code, m)
		}
	}

	created := make(chan map[string]any)
	go func() {
		code, m := p.do("POST", "/session", map[string]string{"deviceId": "sim/" + p.dev.Serial})
		m["code"] = code
		created <- m
	}()
	<-entered
	if got := p.state(); got != "creating" {
		t.Errorf("state while opening = %q, want creating", got)
	}
	if code, _ := p.do("POST", "/session", map[string]string{}); code != 409 {
		t.Errorf("POST /session while creating: %d, want 409", code)
	}
	close(proceed)
	m := <-created
	if m["code"] != 200 || m["state"] != "ready" || m["device"].(map[string]any)["platform"] != "android" {
		t.Fatalf("POST /session = %v, want 200, ready on an android device", m)
	}
	if info := p.mustDo(200, "GET", "/runtime-info", nil); info["platform"] != "android" || p.state() != "ready" {
		t.Errorf("runtime-info after create = %v", info)
	}
	// An idle session is replaced (Midscene's clients expect it): the old
	// device link is released and a new one opened.
	if code, m := p.do("POST", "/session", map[string]string{}); code != 200 || m["state"] != "ready" || len(p.opened) != 1 {
		t.Errorf("second POST /session: %d %v with %d links open, want the session replaced", code, m, len(p.opened))
	}

	space := p.mustDo(200, "GET", "/action-space", nil)
	if space["platform"] != "android" {
		t.Errorf("action-space platform = %v", space["platform"])
	}
	byName := map[string]map[string]any{}
	for _, a := range space["actions"].([]any) {
		a := a.(map[string]any)
		byName[a["name"].(string)] = a
	}
	for _, name := range []string{"Tap", "Input", "Scroll", "Back", "Home"} {
		a, ok := byName[name]
		if !ok {
			t.Errorf("action-space lacks %s: %v", name, byName)
			continue
		}
		if a["description"] == "" || a["schema"].(map[string]any)["type"] != "object" {
			t.Errorf("%s: description %q, schema %v", name, a["description"], a["schema"])
		}
	}
	if props := byName["Tap"]["schema"].(map[string]any)["properties"].(map[string]any); props["locate"] == nil {
		t.Errorf("Tap schema has no locate param: %v", props)
	}

	if m := p.mustDo(200, "DELETE", "/session", nil); m["state"] != "required" || m["device"] != nil {
		t.Errorf("DELETE /session = %v, want required with no device", m)
	}
	if len(p.opened) != 0 {
		t.Errorf("the device link is still open after DELETE /session")
	}
	if m := p.mustDo(200, "DELETE", "/session", nil); m["state"] != "required" {
		t.Errorf("second DELETE /session = %v", m)
	}
	// The server outlives its sessions; no body picks the only device.
	if code, data := p.raw("POST", "/session", nil, nil); code != 200 {
		t.Errorf("POST /session with no body: %d %s", code, data)
	}
	if p.state() != "ready" {
		t.Errorf("state after a second create = %q", p.state())
	}
}

func TestSessionCreateFails(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	p := startPhone(t, &phoneOptions{open: func(ctx context.Context, id string, real func() (device.Driver, device.Target, func(), error)) (device.Driver, device.Target, func(), error) {
		if fail.Load() {
			// A link opened and closed again: the create cleans up.
			d, _, release, err := real()
			if err != nil {
				return nil, device.Target{}, nil, err
			}
			if _, err := d.Info(ctx); err != nil {
				t.Error(err)
			}
			release()
			return nil, device.Target{}, nil, errors.New("device went away while opening")
		}
		return real()
	}})
	code, m := p.do("POST", "/session", map[string]string{})
	if code != 400 || !strings.Contains(m["error"].(string), "device went away") {
		t.Fatalf("failed create: %d %v, want 400 with the cause", code, m)
	}
	sess := p.mustDo(200, "GET", "/runtime-info", nil)["session"].(map[string]any)
	if sess["state"] != "required" || !strings.Contains(sess["error"].(string), "device went away") {
		t.Errorf("session after a failed create = %v, want required with the error", sess)
	}
	if len(p.opened) != 0 {
		t.Errorf("a failed create left a device link open")
	}
	if code, _ := p.do("POST", "/session", map[string]string{"deviceId": "sim/nowhere"}); code != 400 {
		t.Errorf("unknown device: %d, want 400", code)
	}
	fail.Store(false)
	p.ready()
	if sess := p.mustDo(200, "GET", "/runtime-info", nil)["session"].(map[string]any); sess["state"] != "ready" || sess["error"] != nil {
		t.Errorf("session after a good create = %v, want ready with the old error gone", sess)
	}
}

func TestConnectAndIndex(t *testing.T) {
	p := startPhone(t, nil)
	v, err := p.srv.Connect(testCtx(t), "")
	if err != nil || v.State != "ready" || v.Device == nil || v.Device.Serial != p.dev.Serial {
		t.Fatalf("Connect = %+v, %v", v, err)
	}
	// An idle session is replaced, as Midscene's playground does.
	if v2, err := p.srv.Connect(testCtx(t), ""); err != nil || v2.State != "ready" || len(p.opened) != 1 {
		t.Errorf("second Connect: %+v, %v with %d links open, want the session replaced", v2, err, len(p.opened))
	}
	idx := p.mustDo(200, "GET", "/", nil)
	var list []string
	for _, e := range idx["endpoints"].([]any) {
		list = append(list, e.(string))
	}
	for _, want := range []string{"POST /session", "POST /execute", "GET /mjpeg"} {
		if !strings.Contains(strings.Join(list, "\n"), want) {
			t.Errorf("GET / lists %v, lacking %s", list, want)
		}
	}
	if code, _ := p.raw("GET", "/nowhere", nil, nil); code != 404 {
		t.Errorf("GET /nowhere: %d, want 404", code)
	}
}

func TestInterfaceInfo(t *testing.T) {
	p := startPhone(t, nil)
	m := p.mustDo(200, "GET", "/interface-info", nil)
	if m["type"] != "none" || !strings.Contains(m["description"].(string), "POST /session") {
		t.Errorf("interface-info with no session: %v", m)
	}
	p.ready()
	m = p.mustDo(200, "GET", "/interface-info", nil)
	actions, _ := m["actions"].([]any)
	if m["type"] != "android" || !strings.HasPrefix(m["description"].(string), "Android · ") || len(actions) < 10 {
		t.Errorf("interface-info of the simulated phone: %v", m)
	}
	if m["device"].(map[string]any)["id"] == "" {
		t.Errorf("interface-info names no device: %v", m)
	}
}
