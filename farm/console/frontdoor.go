package console

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/remote"
)

// ticketTTL is how long a ticket lets a page's <img> or WebSocket in.
const ticketTTL = time.Minute

type ticket struct {
	p       auth.Principal
	device  string
	expires time.Time
}

// tickets are short-lived stand-ins for a user's token, each good for one
// device's front door.
type tickets struct {
	mu sync.Mutex
	m  map[string]ticket
}

func (ts *tickets) issue(p auth.Principal, id string) string {
	b := make([]byte, 18)
	rand.Read(b)
	t := hex.EncodeToString(b)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.m == nil {
		ts.m = map[string]ticket{}
	}
	now := time.Now()
	for k, v := range ts.m {
		if now.After(v.expires) {
			delete(ts.m, k)
		}
	}
	ts.m[t] = ticket{p: p, device: id, expires: now.Add(ticketTTL)}
	return t
}

// revoke ends the tickets of a revoked token.
func (ts *tickets) revoke(hash string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for k, v := range ts.m {
		if v.p.Token == hash {
			delete(ts.m, k)
		}
	}
}

// use answers whom ticket t speaks for, if it is alive and path is its
// device's front door.
func (ts *tickets) use(t, path string) (auth.Principal, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	k, ok := ts.m[t]
	if !ok || time.Now().After(k.expires) || !strings.HasPrefix(path, frontDoorPrefix(k.device)) {
		return auth.Principal{}, false
	}
	return k.p, true
}

func frontDoorPrefix(id string) string { return "/devices/" + id + "/playground/" }

// ticket gives the user a ticket for the front door of device ?id=.
func (c *Console) ticket(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	writeJSON(w, map[string]any{"ticket": c.tickets.issue(principal(r), id), "expires_in": ticketTTL.Seconds(),
		"playground": frontDoorPrefix(id)})
}

// viewRoutes are what every project member may do on a device's
// playground: watch it (its page, its streams, its runs' reports).
// driveRoutes add driving it (testers); an admin may use every route.
var (
	viewRoutes = []string{"GET /", "GET /ui/", "GET /screenshot", "GET /mjpeg", "GET /preview/h264", "POST /preview/webrtc", "GET /status",
		"GET /interface-info", "GET /runtime-info", "GET /action-space", "GET /session/setup", "GET /session/targets",
		"GET /events", "GET /task-progress/", "GET /runs", "GET /report/"}
	driveRoutes = []string{"POST /session", "DELETE /session", "POST /interact", "POST /execute", "POST /cancel/",
		"GET /recorder/", "POST /recorder/"}
)

// allowed reports whether role may call method path on a playground.
func allowed(role auth.Role, method, path string) bool {
	if role >= auth.Admin {
		return true
	}
	match := func(routes []string) bool {
		for _, rt := range routes {
			m, p, _ := strings.Cut(rt, " ")
			// A route ending in a slash is every path under it; "/" is the page.
			if m == method && (path == p || p != "/" && strings.HasSuffix(p, "/") && strings.HasPrefix(path, p)) {
				return true
			}
		}
		return false
	}
	return match(viewRoutes) || role >= auth.Tester && match(driveRoutes)
}

// frontDoor proxies /devices/{id}/playground/{path...} to the playground of
// a device the console holds, on its host, through NATS. The lease holder
// and the members of the lease's project get in, each to the routes of
// their role; the ticket, cookie and token stay here.
func (c *Console) frontDoor(w http.ResponseWriter, r *http.Request) {
	id, path, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/devices/"), "/playground/")
	if !ok {
		if strings.HasSuffix(r.URL.Path, "/playground") && r.Method == http.MethodGet {
			// The page resolves its API under its address: it must end in a slash.
			u := *r.URL
			u.Path += "/"
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		http.NotFound(w, r)
		return
	}
	path = "/" + path
	p := principal(r)
	c.mu.Lock()
	h, ok := c.held[id]
	c.mu.Unlock()
	if !ok {
		writeError(w, http.StatusConflict, fmt.Errorf("%s is not open in the console: lease it first (Open)", id))
		return
	}
	if h.user != p.User {
		if err := c.auth.Allow(r.Context(), p, auth.View, h.project); err != nil {
			writeError(w, http.StatusForbidden, fmt.Errorf("%s is open for project %s: %w", id, h.project, err))
			return
		}
	}
	if !allowed(p.Role, r.Method, path) {
		writeError(w, http.StatusForbidden, fmt.Errorf("%w: a %s may not %s %s on a device's playground", auth.ErrForbidden, p.Role, r.Method, path))
		return
	}
	if h.user != p.User && !allowed(auth.Viewer, r.Method, path) && p.Role < auth.Admin {
		writeError(w, http.StatusForbidden, errors.New(id+" is driven by "+h.user+": you may watch it only"))
		return
	}
	up := r.Clone(r.Context()) // what the host sees
	strip(up)
	if remote.IsWebSocket(r) {
		remote.ProxyWebSocket(c.js.Conn(), id, h.l.Record(), path, w, r, up, h.l.Done())
		return
	}
	remote.Proxy(c.js.Conn(), id, h.l.Record(), path, w, up)
}

// strip removes what lets a request in here from what the host sees.
func strip(r *http.Request) {
	q := r.URL.Query()
	q.Del("ticket")
	q.Del("token")
	r.URL.RawQuery = q.Encode()
	for _, k := range []string{"Cookie", "Authorization", "Origin", "Referer", "X-Forwarded-For"} {
		r.Header.Del(k)
	}
}
