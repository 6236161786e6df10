// Package console serves the farm's web console: one embedded page (no
// build step) over a small JSON API listing devices, leases and runs, and
// letting a person lease a device and drive it through its host.
package console

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/api"
	"github.com/apexagent/apex/farm/audit"
	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/records"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/farm/remote"
	"github.com/apexagent/apex/internal/httpguard"
	"github.com/nats-io/nats.go/jetstream"
)

//go:embed index.html
var page []byte

// cookieName carries the token after /?token=T.
const cookieName = "apex_farm"

// Options configure a console.
type Options struct {
	// Token, when set, turns authentication on: a request gives this
	// token (the farm's admin token, or its bcrypt hash here) or a user's
	// API token, as a Bearer header or the cookie that opening
	// /?token=TOKEN sets. Users see every device, the runs of their
	// projects, and lease (open) devices for a project they drive.
	// Without Token everyone is an admin (loopback only).
	Token string
	Log   *slog.Logger
}

// held is a lease the console holds for one of its users.
type held struct {
	l       *lease.Lease
	user    string
	project string
	token   string // the hash of the token that leased it: its revocation releases the lease
}

// Console is the console's handler. The leases it takes for people are
// held (and renewed) by the console until released or until ctx ends.
type Console struct {
	o      Options
	js     jetstream.JetStream
	reg    *registry.Registry
	q      *queue.Queue
	leases *lease.Leaser
	// records reads the runs' records (reports, screenshots).
	records *records.Store
	mux     *http.ServeMux

	auth *auth.Store

	mu   sync.Mutex
	held map[string]held // device ID → the console's lease
	// good maps the SHA-256 of tokens that matched to whom they speak
	// for: with a hashed --token, bcrypt on every screenshot would cost
	// ~100ms.
	good sync.Map
	// tickets are the short-lived ones a page puts in an <img> or
	// WebSocket address, where it cannot send a header.
	tickets tickets
	// live cancels the requests in flight (streams) of a token revoked.
	live live
	// fails refuses an address that sent too many wrong tokens (429 with
	// Retry-After), as the playground does.
	fails *httpguard.Failures
}

// principalKey is where a request's context keeps whom it speaks for.
type principalKey struct{}

func principal(r *http.Request) auth.Principal {
	p, _ := r.Context().Value(principalKey{}).(auth.Principal)
	return p
}

// New opens the farm's assets on js.
func New(ctx context.Context, js jetstream.JetStream, o Options) (*Console, error) {
	c := &Console{o: o, js: js, held: map[string]held{}, mux: http.NewServeMux(), fails: httpguard.NewFailures(0, 0, nil)}
	if c.o.Log == nil {
		c.o.Log = slog.New(slog.DiscardHandler)
	}
	var err error
	if c.reg, err = registry.Open(ctx, js); err != nil {
		return nil, err
	}
	if c.q, err = queue.Open(ctx, js); err != nil {
		return nil, err
	}
	if c.leases, err = lease.New(ctx, js); err != nil {
		return nil, err
	}
	if c.auth, err = auth.Open(ctx, js); err != nil {
		return nil, err
	}
	if c.records, err = records.Open(ctx, js); err != nil {
		return nil, err
	}
	c.mux.HandleFunc("GET /{$}", c.index)
	c.mux.HandleFunc("GET /api/devices", c.devices)
	c.mux.HandleFunc("GET /api/runs", c.runs)
	c.mux.HandleFunc("GET /api/leases", c.leaseList)
	c.mux.HandleFunc("POST /api/lease", c.lease)
	c.mux.HandleFunc("DELETE /api/lease", c.release)
	c.mux.HandleFunc("POST /api/ticket", c.ticket)
	c.mux.HandleFunc("/devices/", c.frontDoor) // /devices/{id}/playground/{path...}; an ID has a slash
	c.mux.HandleFunc("GET /api/records", c.recordList)
	c.mux.HandleFunc("GET /records/{run}/{file...}", c.recordFile)
	context.AfterFunc(ctx, c.releaseAll)
	if err := c.auth.WatchRevoked(ctx, c.revoked); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, ok := c.authorized(w, r)
	if !ok {
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	ctx := context.WithValue(r.Context(), principalKey{}, p)
	if p.Token != "" {
		var done func()
		ctx, done = c.live.add(ctx, p.Token)
		defer done()
	}
	c.mux.ServeHTTP(w, r.WithContext(ctx))
}

// revoked ends what a revoked token opened: its cached check, its
// tickets and its requests in flight (an MJPEG stream, a WebSocket).
func (c *Console) revoked(hash string) {
	var sum [sha256.Size]byte
	if _, err := hex.Decode(sum[:], []byte(hash)); err == nil {
		c.good.Delete(sum)
	}
	c.tickets.revoke(hash)
	c.live.revoke(hash)
	var drop map[string]held
	c.mu.Lock()
	for id, h := range c.held {
		if h.token == hash {
			if drop == nil {
				drop = map[string]held{}
			}
			drop[id] = h
			delete(c.held, id)
		}
	}
	c.mu.Unlock()
	for id, h := range drop {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			audit.Log(ctx, c.js, audit.Event{Kind: audit.LeaseRevoked, Actor: "console", Resource: id,
				Fence: h.l.Fence(), Detail: "the token " + h.user + " leased it with was revoked"})
			c.end(ctx, id, h)
		}()
	}
}

// live holds the cancel funcs of requests in flight, by token hash.
type live struct {
	mu sync.Mutex
	n  int
	m  map[string]map[int]context.CancelFunc
}

func (l *live) add(ctx context.Context, hash string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]map[int]context.CancelFunc{}
	}
	if l.m[hash] == nil {
		l.m[hash] = map[int]context.CancelFunc{}
	}
	l.n++
	id := l.n
	l.m[hash][id] = cancel
	return ctx, func() {
		cancel()
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.m[hash], id)
		if len(l.m[hash]) == 0 {
			delete(l.m, hash)
		}
	}
}

func (l *live) revoke(hash string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, cancel := range l.m[hash] {
		cancel()
	}
}

// authorized finds whom the request speaks for; /?token=T trades the
// token for a cookie and redirects, so the token leaves the address bar.
func (c *Console) authorized(w http.ResponseWriter, r *http.Request) (auth.Principal, bool) {
	if c.o.Token == "" {
		return auth.Principal{User: "local", Role: auth.Admin}, true
	}
	if e := c.fails.Refused(r, "the farm console"); e != nil {
		e.SetHeader(w)
		writeError(w, http.StatusTooManyRequests, e)
		return auth.Principal{}, false
	}
	presented := false // a wrong token counts against the address; none does not
	who := func(t string) (auth.Principal, bool) {
		presented = true
		sum := sha256.Sum256([]byte(t))
		if p, ok := c.good.Load(sum); ok {
			return p.(auth.Principal), true
		}
		var p auth.Principal
		if farm.TokenMatches(t, c.o.Token) {
			p = auth.Principal{User: "admin", Role: auth.Admin}
		} else if u, err := c.auth.Verify(r.Context(), t); err == nil && !u.Host {
			p = u
		} else {
			return p, false
		}
		c.good.Store(sum, p)
		return p, true
	}
	if t := r.URL.Query().Get("token"); t != "" && r.URL.Path == "/" {
		if _, ok := who(t); ok {
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return auth.Principal{}, false
		}
	}
	if t := r.URL.Query().Get("ticket"); t != "" && strings.HasPrefix(r.URL.Path, "/devices/") {
		if p, ok := c.tickets.use(t, r.URL.Path); ok {
			return p, true
		}
		presented = true
	}
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		if p, ok := who(t); ok {
			return p, true
		}
	}
	if ck, err := r.Cookie(cookieName); err == nil {
		if p, ok := who(ck.Value); ok {
			return p, true
		}
	}
	if presented {
		c.fails.Failed(r)
	}
	http.Error(w, "the farm console needs a token: open /?token=TOKEN (yours from apex farm token create, or the farm's --token), or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
	return auth.Principal{}, false
}

func (c *Console) index(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(page)
}

// deviceView is a device as the console shows it.
type deviceView struct {
	registry.Device
	Holder string `json:"holder,omitempty"`
	Run    string `json:"run,omitempty"`
	Mine   bool   `json:"mine,omitempty"` // held by this console
}

func (c *Console) devices(w http.ResponseWriter, r *http.Request) {
	devs, err := c.reg.Devices(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	// Who holds a device shows in the user's projects only.
	views := api.Views(r.Context(), c.auth, principal(r))
	out := make([]deviceView, 0, len(devs))
	for _, d := range devs {
		v := deviceView{Device: d}
		if rec, ok, err := c.leases.Current(r.Context(), d.ID); err == nil && ok {
			rec = api.Shown(rec, views)
			v.Holder, v.Run = rec.Holder, rec.Run
		}
		c.mu.Lock()
		h, ok := c.held[d.ID]
		v.Mine = ok && h.user == principal(r).User
		c.mu.Unlock()
		out = append(out, v)
	}
	writeJSON(w, out)
}

func (c *Console) runs(w http.ResponseWriter, r *http.Request) {
	runs, err := c.q.List(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	// Newest first, at most 200, of the projects the user may see.
	views := api.Views(r.Context(), c.auth, principal(r))
	out := make([]queue.Run, 0, min(len(runs), 200))
	for i := len(runs) - 1; i >= 0 && len(out) < 200; i-- {
		run := runs[i]
		if views(run.Project) {
			run.Script = nil
			out = append(out, run)
		}
	}
	writeJSON(w, out)
}

func (c *Console) leaseList(w http.ResponseWriter, r *http.Request) {
	recs, err := c.leases.List(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	views := api.Views(r.Context(), c.auth, principal(r))
	for i := range recs {
		recs[i] = api.Shown(recs[i], views)
	}
	writeJSON(w, recs)
}

// lease takes the device for the console's user, for a project the user
// drives (?project=, default the device's project label, else
// "default"); a device labelled project=P serves only P. The console
// renews the lease until released.
func (c *Console) lease(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	p := principal(r)
	dev, err := c.reg.Device(r.Context(), id)
	if err != nil {
		writeError(w, http.StatusNotFound, err)
		return
	}
	project, err := api.LeaseProject(dev, r.URL.Query().Get("project"))
	if err != nil {
		writeError(w, http.StatusForbidden, err)
		return
	}
	if err := c.auth.Allow(r.Context(), p, auth.Drive, project); err != nil {
		writeError(w, http.StatusForbidden, err)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.held[id]; ok {
		if h.user != p.User {
			writeError(w, http.StatusConflict, fmt.Errorf("%s is open in the console for %s", id, h.user))
			return
		}
		writeJSON(w, map[string]any{"id": id})
		return
	}
	l, err := c.leases.Acquire(r.Context(), lease.Record{Resource: id, Holder: "console:" + p.User, Project: project})
	if errors.Is(err, lease.ErrHeld) {
		writeError(w, http.StatusConflict, err)
		return
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	c.held[id] = held{l: l, user: p.User, project: project, token: p.Token}
	go func() {
		<-l.Done()
		c.mu.Lock()
		if c.held[id].l == l {
			delete(c.held, id)
		}
		c.mu.Unlock()
	}()
	writeJSON(w, map[string]any{"id": id, "fence": l.Fence()})
}

func (c *Console) release(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	c.mu.Lock()
	h, ok := c.held[id]
	if ok && h.user == principal(r).User {
		delete(c.held, id)
	}
	c.mu.Unlock()
	if !ok || h.user != principal(r).User {
		writeError(w, http.StatusNotFound, errors.New("you do not hold "+id+" in the console"))
		return
	}
	c.end(r.Context(), id, h)
	w.WriteHeader(http.StatusNoContent)
}

// end closes the device's session and playground under the console's
// lease h, and releases it.
func (c *Console) end(ctx context.Context, id string, h held) {
	remote.NewDriver(c.js.Conn(), id, h.l.Record()).Close()
	// The playground's session ends with the lease (its phone is freed).
	end, _ := http.NewRequestWithContext(ctx, http.MethodDelete, "/session", http.NoBody)
	remote.Proxy(c.js.Conn(), id, h.l.Record(), "/session", discard{header: http.Header{}}, end)
	h.l.Release(ctx)
}

func (c *Console) releaseAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, h := range c.held {
		h.l.Release(context.Background())
		delete(c.held, id)
	}
}

// discard is a ResponseWriter for answers no one reads.
type discard struct{ header http.Header }

func (d discard) Header() http.Header       { return d.header }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}
