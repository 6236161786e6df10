package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/hub"
)

// Booter starts simulated phones on demand for the playground (POST
// /devices/boot) and stops those it started (DELETE /devices/{id}).
// Implementations are safe for concurrent use; a session host's caps
// apply to Boot.
type Booter interface {
	// Platforms are the platforms Boot starts.
	Platforms() []device.Platform
	// Boot starts one more phone of the platform and returns it once it
	// can be opened.
	Boot(ctx context.Context, p device.Platform) (device.Target, error)
	// Shutdown stops a phone Boot started.
	Shutdown(ctx context.Context, id string) error
}

// booted is the set of device ids this server booted: the only ones it
// shuts down.
type booted struct {
	mu  sync.Mutex
	ids []string
}

func (b *booted) add(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ids = append(b.ids, id)
}

func (b *booted) has(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Contains(b.ids, id)
}

func (b *booted) remove(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ids = slices.DeleteFunc(b.ids, func(s string) bool { return s == id })
}

func (s *Server) bootAPI() []route {
	return []route{
		{"POST /devices/boot", s.bootDevice},
		{"DELETE /devices/{id...}", s.shutdownDevice},
	}
}

// BootRequest is the body of POST /devices/boot.
type BootRequest struct {
	// Platform is android or ios (default: the first Booter offers).
	Platform device.Platform `json:"platform"`
}

// bootDevice starts one more simulated phone: 201 with its target, 409
// past the host's run cap, 501 where the playground boots none.
func (s *Server) bootDevice(w http.ResponseWriter, r *http.Request) {
	b := s.opts.Booter
	if b == nil {
		writeError(w, http.StatusNotImplemented, errors.New("this playground boots no devices: start it with apex playground (not --device) to boot simulated phones"))
		return
	}
	var req BootRequest
	if r.ContentLength != 0 {
		if err := readJSON(r, &req); err != nil {
			writeError(w, 0, err)
			return
		}
	}
	ps := b.Platforms()
	if req.Platform == "" && len(ps) > 0 {
		req.Platform = ps[0]
	}
	if !slices.Contains(ps, req.Platform) {
		writeError(w, http.StatusBadRequest, fmt.Errorf("platform %q: this playground boots %v", req.Platform, ps))
		return
	}
	t, err := b.Boot(r.Context(), req.Platform)
	switch {
	case errors.Is(err, hub.ErrRunCap):
		writeError(w, http.StatusConflict, err)
		return
	case err != nil:
		writeError(w, http.StatusBadGateway, fmt.Errorf("boot a simulated %s phone: %w", req.Platform, err))
		return
	}
	s.booted.add(t.ID)
	s.log.Info("booted a device", "device", t.ID)
	writeJSON(w, http.StatusCreated, t)
}

// shutdownDevice stops a phone this server booted; the session's device
// must be disconnected first.
func (s *Server) shutdownDevice(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if s.opts.Booter == nil || !s.booted.has(id) {
		writeError(w, http.StatusNotFound, fmt.Errorf("device %s was not booted by this playground: only those it booted are shut down here", id))
		return
	}
	if v := s.sess.view(); v.Device != nil && v.Device.ID == id {
		writeError(w, http.StatusConflict, fmt.Errorf("device %s is the session's: disconnect it first (DELETE /session)", id))
		return
	}
	err := s.opts.Booter.Shutdown(r.Context(), id)
	if err != nil && !errors.Is(err, device.ErrNotFound) {
		writeError(w, http.StatusBadGateway, fmt.Errorf("shut down %s: %w", id, err))
		return
	}
	// Not found: its idle cap stopped it already.
	s.booted.remove(id)
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "state": "shut down"})
}
