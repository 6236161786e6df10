package attack

import (
	"fmt"
	"strings"
	"testing"
)

// TestWDADeviceIDSSRF: POST /session with a wda: URL the operator did not
// configure makes the playground fetch nothing, and its error echoes no
// remote body; --allow-wda-any opens loopback URLs (so the listener would
// see the fetch this test guards against).
func TestWDADeviceIDSSRF(t *testing.T) {
	inner := newListener(t)
	// The operator's WebDriverAgent (nothing listens there: the session
	// at start fails, which is fine).
	args := []string{"--device", "wda:http://127.0.0.1:1"}
	url, _ := playground(t, "", nil, args...)
	for _, id := range []string{"wda:" + inner.URL + "/#", "wda:" + inner.URL + "/status?x=1"} {
		code, m := call(t, "POST", url+"session", "", map[string]string{"deviceId": id})
		if code < 400 || !strings.Contains(fmt.Sprint(m["error"]), "configured") {
			t.Errorf("POST /session %s: %d %v, want a refusal naming the configured URLs", id, code, m)
		}
		if strings.Contains(fmt.Sprint(m), "pong") {
			t.Errorf("the answer echoes the inner server's body: %v", m)
		}
	}
	if n := len(inner.requests()); n != 0 {
		t.Fatalf("the inner server got %d requests from the playground: %q", n, inner.requests())
	}

	url, _ = playground(t, "", nil, append(args, "--allow-wda-any")...)
	call(t, "POST", url+"session", "", map[string]string{"deviceId": "wda:" + inner.URL})
	if len(inner.requests()) == 0 {
		t.Errorf("with --allow-wda-any the playground never asked the loopback WebDriverAgent: the test above proves nothing")
	}
}
