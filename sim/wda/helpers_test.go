package wda_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/sim"
	"github.com/apexagent/apex/sim/wda"
)

// fakeClock is a settable clock, so delayed elements and popups need no
// sleeping.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

// rig is a simulated iPhone behind an httptest WebDriverAgent.
type rig struct {
	t     *testing.T
	phone *sim.Phone
	srv   *httptest.Server
	clock *fakeClock
}

// newRig starts a phone whose clock stands still, so Shop's delayed sale
// popup never shows unless a test moves the clock.
func newRig(t *testing.T) *rig { return newRigSeed(t, 0) }

func newRigSeed(t *testing.T, seed int64) *rig {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 5, 1, 9, 41, 0, 0, time.UTC)}
	p, err := sim.NewPhone(sim.Options{Platform: sim.PlatformIOS, Clock: clock, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(wda.NewServer(p, nil))
	t.Cleanup(srv.Close)
	return &rig{t: t, phone: p, srv: srv, clock: clock}
}

// reply is a decoded WebDriverAgent response.
type reply struct {
	Status    int
	Value     json.RawMessage
	SessionID *string
	raw       []byte
}

func (r reply) errorCode() string {
	var e struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	json.Unmarshal(r.Value, &e)
	return e.Error
}

func (r reply) message() string {
	var e struct {
		Message string `json:"message"`
	}
	json.Unmarshal(r.Value, &e)
	return e.Message
}

func (r reply) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Value, v); err != nil {
		t.Fatalf("decode %s: %v", r.raw, err)
	}
}

// do sends a request; body is JSON-encoded unless it is a string.
func (r *rig) do(method, path string, body any) reply {
	r.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			r.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, r.srv.URL+path, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		r.t.Fatalf("%s %s: content type %q", method, path, ct)
	}
	var env struct {
		Value     json.RawMessage `json:"value"`
		SessionID *string         `json:"sessionId"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		r.t.Fatalf("%s %s: body %q is not JSON: %v", method, path, data, err)
	}
	return reply{Status: resp.StatusCode, Value: env.Value, SessionID: env.SessionID, raw: data}
}

// ok sends a request that must succeed.
func (r *rig) ok(method, path string, body any) reply {
	r.t.Helper()
	rep := r.do(method, path, body)
	if rep.Status != http.StatusOK {
		r.t.Fatalf("%s %s: status %d: %s", method, path, rep.Status, rep.raw)
	}
	return rep
}

// session opens a session and returns its path prefix.
func (r *rig) session(caps map[string]any) string {
	r.t.Helper()
	rep := r.ok("POST", "/session", map[string]any{"capabilities": map[string]any{"alwaysMatch": caps}})
	var v struct {
		SessionID string `json:"sessionId"`
	}
	rep.decode(r.t, &v)
	if v.SessionID == "" || rep.SessionID == nil || *rep.SessionID != v.SessionID {
		r.t.Fatalf("new session: %s", rep.raw)
	}
	return "/session/" + v.SessionID
}

// find returns the element id of a lookup that must succeed.
func (r *rig) find(prefix, using, value string) string {
	r.t.Helper()
	rep := r.ok("POST", prefix+"/element", map[string]string{"using": using, "value": value})
	var v map[string]string
	rep.decode(r.t, &v)
	id := v["element-6066-11e4-a52e-4f735466cecf"]
	if id == "" || v["ELEMENT"] != id {
		r.t.Fatalf("find %s %q: %s", using, value, rep.raw)
	}
	return id
}

func (r *rig) str(method, path string, body any) string {
	r.t.Helper()
	var s string
	r.ok(method, path, body).decode(r.t, &s)
	return s
}

func (r *rig) fg() string {
	pkg, _ := r.phone.Foreground()
	return pkg
}
