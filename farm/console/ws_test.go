package console_test

import (
	"context"
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
	"github.com/coder/websocket"
)

// TestWebSocketThroughTheDoor: the H.264 preview's WebSocket opens through
// the front door (its messages over NATS, the host dialing nothing in):
// the viewer gets the config and a key frame, the host never sees the
// token, and releasing the lease closes the socket.
func TestWebSocketThroughTheDoor(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("no ffmpeg: the simulated phone cannot encode H.264 here (apt-get install ffmpeg)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	rec := &seen{}
	_, srv := doorFarm(ctx, t, rec, nil)
	admin := http.Header{"Authorization": {"Bearer the-farm-admin-token"}}
	do := func(method, path string) int {
		req, _ := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader("{}"))
		req.Header = admin.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for do("POST", "/api/lease?id=h1/sim-1") != 200 {
		select {
		case <-ctx.Done():
			t.Fatal("the host's phone never showed up")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if code := do("POST", "/devices/h1/sim-1/playground/session"); code != 200 {
		t.Fatalf("open a session through the door: %d", code)
	}

	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/devices/h1/sim-1/playground/preview/h264", &websocket.DialOptions{HTTPHeader: admin})
	if err != nil {
		t.Fatalf("open the H.264 WebSocket through the door: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	c.SetReadLimit(16 << 20)
	var kinds []byte
	for len(kinds) < 2 {
		_, msg, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("after %v: %v", kinds, err)
		}
		kinds = append(kinds, msg[0])
	}
	if kinds[0] != 1 || kinds[1] != 2 {
		t.Errorf("the first messages are of kinds %v, want the config (1) then a key frame (2)", kinds)
	}

	if code := do("DELETE", "/api/lease?id=h1/sim-1"); code != http.StatusNoContent {
		t.Fatalf("release: %d", code)
	}
	for {
		if _, _, err = c.Read(ctx); err != nil {
			break
		}
	}
	var ce websocket.CloseError
	// The release ends the playground's session first (its stream says
	// so), or the door closes the socket as the lease ends.
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "lease ended") && !strings.Contains(ce.Reason, "session ended") {
		t.Errorf("the socket after the release: %v, want closed as the session or lease ended", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, r := range rec.reqs {
		if r.Header.Get("Authorization") != "" || r.Header.Get("Origin") != "" {
			t.Errorf("the host saw %s %s with %v", r.Method, r.URL, r.Header)
		}
	}
}
