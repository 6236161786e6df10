package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apexagent/apex/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestListenHTTPNeedsATokenBeyondLoopback(t *testing.T) {
	if _, err := mcp.ListenHTTP("0.0.0.0:0", nil); !errors.Is(err, mcp.ErrTokenRequired) {
		t.Errorf("ListenHTTP beyond loopback without a token: %v", err)
	}
	ln, err := mcp.ListenHTTP("127.0.0.1:0", nil)
	if err != nil {
		t.Fatalf("ListenHTTP on loopback without a token: %v", err)
	}
	ln.Close()
}

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestHTTPToken(t *testing.T) {
	l, hosts := simHosts(t, 1)
	s := newServer(t, &mcp.Options{Hosts: hosts})
	hs := httptest.NewServer(s.Handler(&mcp.HTTPOptions{Token: "s3cret"}))
	defer hs.Close()

	connect := func(token string) (*sdk.ClientSession, error) {
		tr := &sdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{token}}}
		return sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(context.Background(), tr, nil)
	}
	if _, err := connect("wrong"); err == nil {
		t.Fatal("a wrong token connected")
	}
	cs, err := connect("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "device_open", Arguments: map[string]any{"device": simID(l, 0)}})
	if err != nil || r.IsError {
		t.Fatalf("device_open over HTTP: %v %v", err, r)
	}
	if got := textOf(r); !strings.Contains(got, "opened") {
		t.Errorf("device_open: %s", got)
	}

	// Closing the HTTP session ends it on the server, which frees the device.
	other, err := connect("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	b := &session{t: t, cs: other}
	b.fails("device_open", map[string]any{"device": simID(l, 0)})
	cs.Close()
	b.openWhenReleased(simID(l, 0))
}

// TestHTTPGuard: the bearer scheme in any case; foreign host names
// refused without a token, cross-origin pages always; sessions capped.
func TestHTTPGuard(t *testing.T) {
	_, hosts := simHosts(t, 1)
	s := newServer(t, &mcp.Options{Hosts: hosts})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	post := func(h http.Handler, host string, header map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "http://"+host+"/mcp", strings.NewReader(init))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	withToken := s.Handler(&mcp.HTTPOptions{Token: "s3cret", MaxSessions: 2})
	open := s.Handler(nil)
	tests := []struct {
		name   string
		h      http.Handler
		host   string
		header map[string]string
		want   int
	}{
		{"lower-case bearer", withToken, "10.0.0.7:7300", map[string]string{"Authorization": "bearer s3cret"}, 200},
		{"wrong token", withToken, "10.0.0.7:7300", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"rebound name without a token", open, "evil.example:7300", nil, 403},
		{"cross-origin page", open, "127.0.0.1:7300", map[string]string{"Origin": "http://evil.example"}, 403},
		{"cross-origin page with the token", withToken, "10.0.0.7:7300", map[string]string{"Authorization": "Bearer s3cret", "Origin": "http://evil.example"}, 403},
		{"second session", withToken, "10.0.0.7:7300", map[string]string{"Authorization": "Bearer s3cret"}, 200},
		{"third session past the cap", withToken, "10.0.0.7:7300", map[string]string{"Authorization": "Bearer s3cret"}, 429},
	}
	for _, tt := range tests {
		w := post(tt.h, tt.host, tt.header)
		if w.Code != tt.want {
			t.Errorf("%s: %d %s, want %d", tt.name, w.Code, w.Body, tt.want)
		}
	}
}
