package console_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/farm/api"
	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/host"
	"github.com/apexagent/apex/farm/plane"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/server"
)

// seen records what reached the playground on the host.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (s *seen) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Clone(context.Background()))
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// playgrounds builds each device's real playground on the host, as
// `apex farm host` does, and records the requests it is given; transport
// is its Options.PreviewTransport, if given.
func playgrounds(t *testing.T, rec *seen, transport ...string) func(registry.Device, host.OpenFunc) http.Handler {
	return func(dev registry.Device, open host.OpenFunc) http.Handler {
		srv, err := server.New(server.Options{
			Open:    open,
			Targets: func(context.Context) ([]device.Target, error) { return []device.Target{dev.Target()}, nil },
			NewAgent: func(_ server.ModelSettings, onEvent func(event.Event)) (agent.AI, error) {
				return agent.New(agent.Config{OnEvent: onEvent})
			},
			PreviewTransport: strings.Join(transport, ""),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		return rec.wrap(srv.Handler())
	}
}

// doorFarm starts a farm whose host "h1" serves one simulated phone,
// labelled labels, with real playgrounds recorded by rec (transport: their
// preview transport, if given), and the farm's console in front of it;
// all stop when t ends.
func doorFarm(ctx context.Context, t *testing.T, rec *seen, labels map[string]string, transport ...string) (*plane.Plane, *httptest.Server) {
	t.Helper()
	p := farmtest.Start(ctx, t, 0)
	_, js := p.Conn()
	farmtest.StartHost(ctx, t, js, host.Options{ID: "h1", Sim: 1, RunsDir: t.TempDir(), Labels: labels, Playground: playgrounds(t, rec, transport...)})
	return p, serveConsole(ctx, t, js)
}

// TestFrontDoor: the console's origin proxies a leased phone's real
// playground on its host, through NATS: its screenshot is a PNG, a tap
// changes the phone, the MJPEG stream flows with no-transform; the host
// never sees the ticket, cookie or token; a viewer of the project may
// watch but not tap, and a user of another project gets nothing.
func TestFrontDoor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	rec := &seen{}
	p, srv := doorFarm(ctx, t, rec, map[string]string{"project": "shop"})
	tokens := farmtest.Users(ctx, t, p, []string{"shop", "bank"}, farmtest.Member{User: "alice", Role: auth.Tester, Projects: []string{"shop"}},
		farmtest.Member{User: "vera", Role: auth.Viewer, Projects: []string{"shop"}}, farmtest.Member{User: "bob", Role: auth.Tester, Projects: []string{"bank"}})

	do := consoleClient(ctx, t, srv.URL, tokens)
	waitDevice(ctx, t, do, "alice", "h1/sim-1")
	const door = "/devices/h1/sim-1/playground"
	if code, data, _ := do("alice", "GET", door+"/screenshot", nil); code != http.StatusConflict {
		t.Errorf("the front door of a device no one opened: %d %s, want 409", code, data)
	}
	// A ticket (what an <img> carries) lets the screenshot in.
	ticket := openPlayground(t, do, "alice", "h1/sim-1")
	// Who holds it shows to the members of its project only.
	for _, tc := range []struct{ user, holder string }{{"alice", "console:alice"}, {"vera", "console:alice"}, {"bob", api.Hidden}} {
		for _, path := range []string{"/api/devices", "/api/leases"} {
			code, data, _ := do(tc.user, "GET", path, nil)
			if code != 200 || !strings.Contains(string(data), `"holder":"`+tc.holder+`"`) || strings.Contains(string(data), "key_hash") ||
				tc.holder == api.Hidden && strings.Contains(string(data), "alice") {
				t.Errorf("GET %s as %s: %d %s, want the holder shown as %q", path, tc.user, code, data, tc.holder)
			}
		}
	}
	shot := func() []byte {
		t.Helper()
		code, png, h := do("", "GET", door+"/screenshot?ticket="+ticket, nil)
		if code != 200 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Fatalf("screenshot through the front door: %d %q (%s)", code, png[:min(len(png), 80)], h.Get("Content-Type"))
		}
		if cc := h.Get("Cache-Control"); !strings.Contains(cc, "no-transform") {
			t.Errorf("screenshot Cache-Control %q, want no-transform", cc)
		}
		return png
	}
	before := shot()
	code, data, _ := do("alice", "POST", door+"/interact", map[string]any{"action": "tap", "params": map[string]any{"locate": "Settings"}})
	if code != 200 || !strings.Contains(string(data), "Network \\u0026 internet") && !strings.Contains(string(data), "Network & internet") {
		t.Fatalf("alice taps Settings through the front door: %d %s", code, data)
	}
	if bytes.Equal(before, shot()) {
		t.Error("the screen is the same after the tap")
	}

	// The stream: MJPEG frames with no-transform, by ticket.
	sctx, scancel := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(sctx, "GET", srv.URL+door+"/mjpeg?ticket="+ticket, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct, cc := resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"); resp.StatusCode != 200 ||
		!strings.HasPrefix(ct, "multipart/x-mixed-replace") || !strings.Contains(cc, "no-transform") {
		t.Errorf("mjpeg: %d %q %q", resp.StatusCode, ct, cc)
	}
	frames := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for frames < 2 && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "Content-Type: image/jpeg") {
			frames++
		}
	}
	scancel()
	resp.Body.Close()
	if frames < 2 {
		t.Errorf("the stream brought %d frames, want 2 (%v)", frames, sc.Err())
	}

	// Vera (a viewer of shop) watches but may not tap; bob (bank) gets nothing.
	for _, tc := range []struct {
		user, method, path string
		want               int
	}{
		{"vera", "GET", door + "/screenshot", 200},
		{"vera", "POST", door + "/interact", http.StatusForbidden},
		{"vera", "POST", door + "/session", http.StatusForbidden},
		{"vera", "POST", door + "/preview/webrtc", http.StatusBadRequest}, // let in to watch; the body is no offer
		{"bob", "GET", door + "/screenshot", http.StatusForbidden},
		{"bob", "POST", door + "/interact", http.StatusForbidden},
		{"alice", "GET", door + "/config", http.StatusForbidden}, // not on a tester's list
		{"", "GET", door + "/screenshot", http.StatusUnauthorized},
	} {
		var body any
		if tc.method == "POST" {
			body = map[string]any{"action": "Back"}
		}
		if code, data, _ := do(tc.user, tc.method, tc.path, body); code != tc.want {
			t.Errorf("%s %s %s: %d %s, want %d", tc.user, tc.method, tc.path, code, data, tc.want)
		}
	}
	// A ticket opens only its own device's door.
	if code, _, _ := do("", "GET", "/api/devices?ticket="+ticket, nil); code != http.StatusUnauthorized {
		t.Errorf("a ticket on /api/devices: %d, want 401", code)
	}

	// Releasing the device ends its playground session on the host.
	if code, data, _ := do("alice", "DELETE", "/api/lease?id=h1/sim-1", nil); code != http.StatusNoContent {
		t.Errorf("release: %d %s", code, data)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if last := rec.reqs[len(rec.reqs)-1]; last.Method != "DELETE" || last.URL.Path != "/session" {
		t.Errorf("the last request the host saw is %s %s, want DELETE /session (the release)", last.Method, last.URL.Path)
	}
	if len(rec.reqs) < 4 {
		t.Fatalf("the host's playground saw %d requests", len(rec.reqs))
	}
	for _, r := range rec.reqs {
		if r.URL.Query().Has("ticket") || r.Header.Get("Cookie") != "" || r.Header.Get("Authorization") != "" {
			t.Errorf("the host saw %s %s with %v", r.Method, r.URL, r.Header)
		}
	}
}

// consoleClient returns a func that calls the console at base as user (its
// token from tokens as a Bearer header; "" sends none) and returns the
// answer's status, body and header.
func consoleClient(ctx context.Context, t *testing.T, base string, tokens map[string]string) func(user, method, path string, body any) (int, []byte, http.Header) {
	return func(user, method, path string, body any) (int, []byte, http.Header) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequestWithContext(ctx, method, base+path, rd)
		if user != "" {
			req.Header.Set("Authorization", "Bearer "+tokens[user])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, data, resp.Header
	}
}

// waitDevice waits until the console lists device id to user.
func waitDevice(ctx context.Context, t *testing.T, do func(user, method, path string, body any) (int, []byte, http.Header), user, id string) {
	t.Helper()
	for {
		code, data, _ := do(user, "GET", "/api/devices", nil)
		if code == 200 && strings.Contains(string(data), `"`+id+`"`) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("device %s never showed up", id)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// openPlayground leases device id in the console as user, opens a
// playground session through the front door, and returns a ticket for it.
func openPlayground(t *testing.T, do func(user, method, path string, body any) (int, []byte, http.Header), user, id string) string {
	t.Helper()
	if code, data, _ := do(user, "POST", "/api/lease?id="+id, nil); code != 200 {
		t.Fatalf("%s leases %s: %d %s", user, id, code, data)
	}
	if code, data, _ := do(user, "POST", "/devices/"+id+"/playground/session", map[string]string{}); code != 200 {
		t.Fatalf("%s opens a playground session on %s through the front door: %d %s", user, id, code, data)
	}
	code, data, _ := do(user, "POST", "/api/ticket?id="+id, nil)
	var tk struct{ Ticket string }
	if code != 200 || json.Unmarshal(data, &tk) != nil || tk.Ticket == "" {
		t.Fatalf("ticket: %d %s", code, data)
	}
	return tk.Ticket
}
