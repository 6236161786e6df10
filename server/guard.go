package server

import (
	"net/http"

	"github.com/apexagent/apex/internal/httpguard"
)

// guarded is h behind the guard: loopback names only without a token;
// with Options.Token, any name but every request authenticated (auth.go).
func (s *Server) guarded(h http.Handler) http.Handler {
	var g *gate
	if s.opts.Token != "" {
		g = newGate(s.opts.Token, s.id, s.opts.Limits.AuthFailures)
	}
	return guard(h, g)
}

// guard limits bodies and refuses requests that change state from another
// origin: a page elsewhere must not drive the phone through the user's
// browser. With a nil gate only loopback host names are served; with one,
// any host name, once the gate lets the request in. A request let in is
// admitted (httpguard.Admit): its connection no longer counts against its
// address's cap on connections not yet authorised.
func guard(h http.Handler, g *gate) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := httpguard.CheckRequest(r, g != nil, "the playground", "start it with --host and a token"); err != nil {
			writeError(w, http.StatusForbidden, err)
			return
		}
		if g != nil {
			var ok bool
			if r, ok = g.admit(w, r); !ok {
				return
			}
		}
		httpguard.Admit(r)
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		}
		h.ServeHTTP(w, r)
	})
}
