package mcp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/apexagent/apex/internal/httpguard"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure the streamable HTTP transport.
type HTTPOptions struct {
	// Token, when set, must come as "Authorization: Bearer <token>" on
	// every request. Required unless the server listens on loopback only.
	Token string
	// SessionTimeout ends HTTP sessions idle this long (releasing their
	// devices); 0 means the lease IdleTimeout.
	SessionTimeout time.Duration
	// MaxSessions bounds the sessions open at once (default
	// DefaultMaxSessions); a client past it is answered 429.
	MaxSessions int
}

// DefaultMaxSessions is how many MCP sessions a server keeps at once
// unless HTTPOptions.MaxSessions says otherwise.
const DefaultMaxSessions = 64

// Handler serves MCP's streamable HTTP transport: one session per client,
// each with its own device leases. Without a token it answers loopback
// host names only (a page whose name was rebound to 127.0.0.1 sends its
// own); with one, any name, once the bearer token is right. Either way it
// refuses a request from another origin's page.
func (s *Server) Handler(opts *HTTPOptions) http.Handler {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = s.opts.IdleTimeout
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv },
		&sdk.StreamableHTTPOptions{SessionTimeout: o.SessionTimeout, Logger: s.opts.Log})
	want := sha256.Sum256([]byte(o.Token))
	fails := httpguard.NewFailures(0, 0, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := httpguard.CheckRequest(r, o.Token != "", "apex mcp", "serve it with --token"); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		if o.Token != "" {
			if e := fails.Refused(r, "apex mcp"); e != nil {
				e.SetHeader(w)
				http.Error(w, e.Error(), http.StatusTooManyRequests)
				return
			}
			scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
			if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				if tok != "" {
					fails.Failed(r)
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="apex"`)
				http.Error(w, "apex mcp: missing or wrong bearer token (send Authorization: Bearer <token>)", http.StatusUnauthorized)
				return
			}
		}
		httpguard.Admit(r)
		if r.Header.Get("Mcp-Session-Id") == "" && r.Method == http.MethodPost && s.sessionCount() >= o.MaxSessions {
			w.Header().Set("Retry-After", "60")
			http.Error(w, fmt.Sprintf("apex mcp: %d sessions are open, the most this server keeps: close one (DELETE with its Mcp-Session-Id) or wait for idle ones to end (after %v)", o.MaxSessions, o.SessionTimeout), http.StatusTooManyRequests)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		h.ServeHTTP(w, r)
	})
}

// MaxBody bounds a request body of the HTTP transport: a JSON-RPC message.
const MaxBody = 8 << 20

func (s *Server) sessionCount() int {
	n := 0
	for range s.srv.Sessions() {
		n++
	}
	return n
}

// ErrTokenRequired refuses a non-loopback address without a token.
var ErrTokenRequired = errors.New("a bearer token is required when listening beyond loopback: set one (--token or APEX_MCP_TOKEN) or bind to 127.0.0.1")

// ListenHTTP listens on addr for ServeHTTP, refusing a non-loopback address
// without a token before anything is bound.
func ListenHTTP(addr string, opts *HTTPOptions) (net.Listener, error) {
	if !httpguard.Loopback(addr) && (opts == nil || opts.Token == "") {
		return nil, fmt.Errorf("listen on %s: %w", addr, ErrTokenRequired)
	}
	return net.Listen("tcp", addr)
}

// ServeHTTP serves the streamable HTTP transport on ln (at path /mcp and /)
// until ctx ends, sweeping idle leases meanwhile; it then shuts down and
// releases every device.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, opts *HTTPOptions) error {
	defer s.Close()
	hs := httpguard.NewServer(s.Handler(opts), nil)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	sweep, stop := context.WithCancel(ctx)
	defer stop()
	go s.sweepEvery(sweep)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
		return nil
	}
}
