package server

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// guarded is h behind the guard: loopback names only without a token;
// with Options.Token, any name but every request authenticated (auth.go).
func (s *Server) guarded(h http.Handler) http.Handler {
	var g *gate
	if s.opts.Token != "" {
		g = newGate(s.opts.Token, s.id)
	}
	return guard(h, g)
}

// guard limits bodies and refuses requests that change state from another
// origin: a page elsewhere must not drive the phone through the user's
// browser. With a nil gate only loopback host names are served; with one,
// any host name, once the gate lets the request in.
func guard(h http.Handler, g *gate) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g == nil && !Loopback(r.Host) {
			// A page whose name was rebound to 127.0.0.1 sends its own
			// name as Host (and Origin); only loopback names reach the API.
			writeError(w, http.StatusForbidden, fmt.Errorf("host %q refused: the playground answers on 127.0.0.1 or localhost only (start it with --host and a token to serve other names)", r.Host))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
			// Cookie authentication needs this too: it is what keeps
			// another site's form from posting with the user's cookie.
			if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
				writeError(w, http.StatusForbidden, fmt.Errorf("cross-origin request from %s refused: open the playground at http://%s", o, r.Host))
				return
			}
		}
		if g != nil {
			var ok bool
			if r, ok = g.admit(w, r); !ok {
				return
			}
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		}
		h.ServeHTTP(w, r)
	})
}

// Loopback reports whether hostport (a host name or address, with or
// without a port) names this machine's loopback interface: the only names a
// playground without a token answers to.
func Loopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host == host
}
