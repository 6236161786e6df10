package server

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// guarded is h behind the guard.
func (s *Server) guarded(h http.Handler) http.Handler { return guard(h) }

// guard limits bodies and refuses requests that change state from another
// origin: a page elsewhere must not drive the phone through the user's
// browser.
func guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			// A page whose name was rebound to 127.0.0.1 sends its own
			// name as Host (and Origin); only loopback names reach the API.
			writeError(w, http.StatusForbidden, fmt.Errorf("host %q refused: the playground answers on 127.0.0.1 or localhost only", r.Host))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
			if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
				writeError(w, http.StatusForbidden, fmt.Errorf("cross-origin request from %s refused: open the playground at http://%s", o, r.Host))
				return
			}
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		}
		h.ServeHTTP(w, r)
	})
}

func loopbackHost(hostport string) bool {
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

// authAPI is the endpoints of token authentication.
func (s *Server) authAPI() []route { return nil }
