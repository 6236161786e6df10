package mcp

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

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
}

// Handler serves MCP's streamable HTTP transport: one session per client,
// each with its own device leases.
func (s *Server) Handler(opts *HTTPOptions) http.Handler {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = s.opts.IdleTimeout
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv },
		&sdk.StreamableHTTPOptions{SessionTimeout: o.SessionTimeout, Logger: s.opts.Log})
	if o.Token == "" {
		return h
	}
	want := []byte("Bearer " + o.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="apex"`)
			http.Error(w, "apex mcp: missing or wrong bearer token (send Authorization: Bearer <token>)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ErrTokenRequired refuses a non-loopback address without a token.
var ErrTokenRequired = errors.New("a bearer token is required when listening beyond loopback: set one (--token or APEX_MCP_TOKEN) or bind to 127.0.0.1")

// Loopback reports whether addr (host:port) binds to loopback only.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ListenHTTP listens on addr for ServeHTTP, refusing a non-loopback address
// without a token before anything is bound.
func ListenHTTP(addr string, opts *HTTPOptions) (net.Listener, error) {
	if !Loopback(addr) && (opts == nil || opts.Token == "") {
		return nil, fmt.Errorf("listen on %s: %w", addr, ErrTokenRequired)
	}
	return net.Listen("tcp", addr)
}

// ServeHTTP serves the streamable HTTP transport on ln (at path /mcp and /)
// until ctx ends, sweeping idle leases meanwhile; it then shuts down and
// releases every device.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, opts *HTTPOptions) error {
	defer s.Close()
	hs := &http.Server{Handler: s.Handler(opts), ReadHeaderTimeout: 10 * time.Second}
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
