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

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7300": true, "[::1]:7300": true, "localhost:0": true, "127.1.2.3:1": true,
		"0.0.0.0:7300": false, ":7300": false, "192.168.1.5:80": false, "example.com:80": false, "nonsense": false,
	} {
		if got := mcp.Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
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
