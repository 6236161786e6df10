// Package console serves the farm's web console: one embedded page (no
// build step) over a small JSON API listing devices, leases and runs, and
// letting a person lease a device and drive it through its host.
package console

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/records"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/farm/remote"
	"github.com/nats-io/nats.go/jetstream"
)

//go:embed index.html
var page []byte

// cookieName carries the token after /?token=T.
const cookieName = "apex_farm"

// Options configure a console.
type Options struct {
	// Token, when set, is required: as a Bearer header, or the cookie
	// that opening /?token=TOKEN sets.
	Token string
	// Member says whether the request's user may see project's runs and
	// records; nil lets everyone holding the token see every project.
	Member func(r *http.Request, project string) bool
	Log    *slog.Logger
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

	mu   sync.Mutex
	held map[string]*lease.Lease // device ID → the console's lease
	// good holds the SHA-256 of tokens that matched: with a hashed
	// --token, bcrypt on every screenshot would cost ~100ms.
	good sync.Map
}

// New opens the farm's assets on js.
func New(ctx context.Context, js jetstream.JetStream, o Options) (*Console, error) {
	c := &Console{o: o, js: js, held: map[string]*lease.Lease{}, mux: http.NewServeMux()}
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
	if c.records, err = records.Open(ctx, js); err != nil {
		return nil, err
	}
	c.mux.HandleFunc("GET /{$}", c.index)
	c.mux.HandleFunc("GET /api/devices", c.devices)
	c.mux.HandleFunc("GET /api/runs", c.runs)
	c.mux.HandleFunc("GET /api/leases", c.leaseList)
	c.mux.HandleFunc("POST /api/lease", c.lease)
	c.mux.HandleFunc("DELETE /api/lease", c.release)
	c.mux.HandleFunc("GET /api/screenshot", c.screenshot)
	c.mux.HandleFunc("POST /api/tap", c.tap)
	c.mux.HandleFunc("GET /api/records", c.recordList)
	c.mux.HandleFunc("GET /records/{run}/{file...}", c.recordFile)
	context.AfterFunc(ctx, c.releaseAll)
	return c, nil
}

func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !c.authorized(w, r) {
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	c.mux.ServeHTTP(w, r)
}

// authorized checks the token; /?token=T trades it for a cookie and
// redirects, so the token leaves the address bar.
func (c *Console) authorized(w http.ResponseWriter, r *http.Request) bool {
	if c.o.Token == "" {
		return true
	}
	matches := func(t string) bool {
		sum := sha256.Sum256([]byte(t))
		if _, ok := c.good.Load(sum); ok {
			return true
		}
		if !farm.TokenMatches(t, c.o.Token) {
			return false
		}
		c.good.Store(sum, true)
		return true
	}
	if t := r.URL.Query().Get("token"); t != "" && r.URL.Path == "/" && matches(t) {
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return false
	}
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && matches(t) {
		return true
	}
	if ck, err := r.Cookie(cookieName); err == nil && matches(ck.Value) {
		return true
	}
	http.Error(w, "the farm console needs its token: open /?token=TOKEN (apex farm serve --token), or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
	return false
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
	out := make([]deviceView, 0, len(devs))
	for _, d := range devs {
		v := deviceView{Device: d}
		if rec, ok, err := c.leases.Current(r.Context(), d.ID); err == nil && ok {
			v.Holder, v.Run = rec.Holder, rec.Run
		}
		c.mu.Lock()
		_, v.Mine = c.held[d.ID]
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
	for i := range runs {
		runs[i].Script = nil
	}
	// Newest first, at most 200.
	out := make([]queue.Run, 0, min(len(runs), 200))
	for i := len(runs) - 1; i >= 0 && len(out) < 200; i-- {
		if c.member(r, runs[i].Project) {
			out = append(out, runs[i])
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
	writeJSON(w, recs)
}

// lease takes the device for the console's user; the console renews it
// until released.
func (c *Console) lease(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.held[id]; ok {
		writeJSON(w, map[string]any{"id": id})
		return
	}
	l, err := c.leases.Acquire(r.Context(), id, "console", "")
	if errors.Is(err, lease.ErrHeld) {
		writeError(w, http.StatusConflict, err)
		return
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	c.held[id] = l
	go func() {
		<-l.Done()
		c.mu.Lock()
		if c.held[id] == l {
			delete(c.held, id)
		}
		c.mu.Unlock()
	}()
	writeJSON(w, map[string]any{"id": id, "fence": l.Fence()})
}

func (c *Console) release(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	c.mu.Lock()
	l, ok := c.held[id]
	delete(c.held, id)
	c.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, errors.New("the console does not hold "+id))
		return
	}
	remote.NewDriver(c.js.Conn(), id, l.Fence()).Close()
	l.Release(r.Context())
	w.WriteHeader(http.StatusNoContent)
}

func (c *Console) releaseAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, l := range c.held {
		l.Release(context.Background())
		delete(c.held, id)
	}
}

// driver is the remote driver of a device the console holds.
func (c *Console) driver(w http.ResponseWriter, r *http.Request) (*remote.Driver, bool) {
	id := r.URL.Query().Get("id")
	c.mu.Lock()
	l, ok := c.held[id]
	c.mu.Unlock()
	if !ok {
		writeError(w, http.StatusConflict, errors.New("lease "+id+" first (Open)"))
		return nil, false
	}
	return remote.NewDriver(c.js.Conn(), id, l.Fence()), true
}

func (c *Console) screenshot(w http.ResponseWriter, r *http.Request) {
	d, ok := c.driver(w, r)
	if !ok {
		return
	}
	png, err := d.Screenshot(r.Context())
	if err != nil {
		writeError(w, http.StatusBadGateway, err)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store, no-transform")
	w.Write(png)
}

func (c *Console) tap(w http.ResponseWriter, r *http.Request) {
	d, ok := c.driver(w, r)
	if !ok {
		return
	}
	var p device.Point
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10)).Decode(&p); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if err := d.Tap(r.Context(), p); err != nil {
		writeError(w, http.StatusBadGateway, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}
