package attack

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// listener is a scripted server on loopback that records every request
// it gets and answers as an OpenAI-compatible model would.
type listener struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // each request: method, path, headers and body
}

func newListener(t *testing.T) *listener {
	l := &listener{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL)
		r.Header.Write(&b)
		b.Write(body)
		l.mu.Lock()
		l.seen = append(l.seen, b.String())
		l.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "pong"}}},
			"usage":   map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *listener) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// TestOperatorKeyStaysHome: a client that moves the model to its own
// server (POST /config, /config/test, then a goal) never receives the
// operator's key, which was configured for another base URL.
func TestOperatorKeyStaysHome(t *testing.T) {
	const key = "sk-operator-secret-5b1e"
	attacker := newListener(t)
	url, _ := playground(t, "", []string{"APEX_MODEL_NAME=m", "APEX_MODEL_BASE_URL=https://models.invalid/v1", "APEX_MODEL_API_KEY=" + key}, "--sim")

	if code, m := call(t, "POST", url+"config", "", map[string]string{"baseUrl": attacker.URL + "/v1"}); code != 200 || m["changed"] != true {
		t.Fatalf("POST /config to the attacker's URL: %d %v", code, m)
	}
	if code, m := call(t, "POST", url+"config/test", "", nil); code != 200 {
		t.Fatalf("POST /config/test: %d %v", code, m)
	}
	call(t, "POST", url+"config/test", "", map[string]string{"baseUrl": attacker.URL + "/v2", "model": "other"})
	call(t, "POST", url+"execute", "", map[string]any{"goal": "open the settings"})
	// The reset brings the key home; a test with the attacker's URL in its
	// body must not carry it there either.
	call(t, "POST", url+"config", "", map[string]any{"reset": true})
	call(t, "POST", url+"config/test", "", map[string]string{"baseUrl": attacker.URL + "/v3"})

	seen := attacker.requests()
	if len(seen) < 3 {
		t.Fatalf("the attacker's server saw %d requests, want the tests' and the goal's: %q", len(seen), seen)
	}
	for _, r := range seen {
		if strings.Contains(r, key) {
			t.Errorf("the operator's key reached the attacker:\n%s", r)
		}
	}
}

// TestClientKeyGoesWithTheMove: the key a client sends with its base URL
// is the one used there (the binding does not break moving a model).
func TestClientKeyGoesWithTheMove(t *testing.T) {
	model := newListener(t)
	url, _ := playground(t, "", []string{"APEX_MODEL_NAME=m", "APEX_MODEL_API_KEY=sk-operator"}, "--sim")
	call(t, "POST", url+"config", "", map[string]string{"baseUrl": model.URL + "/v1", "apiKey": "sk-client"})
	if code, m := call(t, "POST", url+"config/test", "", nil); code != 200 || m["ok"] != true {
		t.Fatalf("POST /config/test: %d %v", code, m)
	}
	seen := model.requests()
	if len(seen) == 0 || !strings.Contains(seen[0], "Bearer sk-client") || strings.Contains(strings.Join(seen, ""), "sk-operator") {
		t.Errorf("the model saw %q, want the client's key and never the operator's", seen)
	}
}

// TestModelURLOffLoopbackRefused: a client may point the model only at
// https or loopback, so the playground is no proxy into its network.
func TestModelURLOffLoopbackRefused(t *testing.T) {
	url, _ := playground(t, "", nil, "--sim")
	for _, path := range []string{"config", "config/test"} {
		code, m := call(t, "POST", url+path, "", map[string]string{"baseUrl": "http://169.254.169.254/latest", "model": "m"})
		if code != 403 || !strings.Contains(fmt.Sprint(m["error"]), "--allow-model-url") {
			t.Errorf("POST /%s with a link-local base URL: %d %v, want 403 naming --allow-model-url", path, code, m)
		}
	}
}
