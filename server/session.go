package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/engine"
)

// The session states. A session goes required → creating → ready, and
// ready → running → ready for each task; DELETE /session goes through
// destroying back to required. A failed create returns to required with
// the error.
const (
	StateRequired   = "required"
	StateCreating   = "creating"
	StateReady      = "ready"
	StateRunning    = "running"
	StateDestroying = "destroying"
	// StateRecreating is a session whose device link broke being opened
	// again.
	StateRecreating = "recreating"
	// StateBlocked is no session, and none possible until what
	// Options.Blocked names is fixed; Error says what.
	StateBlocked = "blocked"
)

// session is the one device the playground drives.
type session struct {
	mu      sync.Mutex
	state   string
	err     string // why the last create failed
	drv     device.Driver
	target  device.Target
	space   *action.Space
	steps   *engine.Session // runs manual actions: observes (the tree, OCR where it cannot be trusted), acts, settles
	release func()
	running *task
	openID  string // the id the session was opened with, to reopen it
}

// SessionView is the session as clients see it.
type SessionView struct {
	State  string         `json:"state"`
	Device *device.Target `json:"device,omitempty"`
	// Error is why the last create failed (state required).
	Error string `json:"error,omitempty"`
	// RequestID is the running task's (state running).
	RequestID string `json:"requestId,omitempty"`
}

func (ss *session) init() { ss.state = StateRequired }

func (ss *session) view() SessionView {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.viewLocked()
}

func (ss *session) viewLocked() SessionView {
	v := SessionView{State: ss.state, Error: ss.err}
	if ss.drv != nil {
		t := ss.target
		v.Device = &t
	}
	if ss.running != nil {
		v.RequestID = ss.running.id
	}
	return v
}

// device is the open session's device, whether or not a task runs; the
// preview and the action space use it.
type sessionDevice struct {
	drv    device.Driver
	target device.Target
	space  *action.Space
	steps  *engine.Session
}

// device is the session's device (ss.mu held).
func (ss *session) device() sessionDevice {
	return sessionDevice{ss.drv, ss.target, ss.space, ss.steps}
}

// attach makes drv the session's device (ss.mu held); release, as stored,
// also stops the OCR its step engine started.
func (ss *session) attach(drv device.Driver, t device.Target, release func(), opts *engine.Options) {
	space := action.ForPlatform(t.Platform)
	o := *opts
	o.Space = space
	steps := engine.New(drv, &o)
	ss.drv, ss.target, ss.space, ss.steps = drv, t, space, steps
	ss.release = func() { steps.Close(); release() }
}

// errRecreating answers a request while the session's device link is
// checked or opened again.
var errRecreating = &apiError{code: http.StatusServiceUnavailable,
	err:    errors.New("reconnecting to the device: retry in a moment"),
	fields: map[string]any{"retry": true}} // like every answer that asks for a retry

var errNoSession = errorf(http.StatusConflict, "no device session: POST /session with a deviceId first")

// open returns the session's device. With idle set, a running task is a
// conflict (manual input would interleave with the task's).
func (ss *session) open(idle bool) (sessionDevice, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case ss.state == StateRunning && idle:
		return sessionDevice{}, runningError(ss.running)
	case ss.state == StateRecreating:
		return sessionDevice{}, errRecreating
	case ss.state != StateReady && ss.state != StateRunning:
		return sessionDevice{}, errNoSession
	}
	return ss.device(), nil
}

func runningError(t *task) *apiError {
	return &apiError{code: http.StatusConflict, err: fmt.Errorf("task %s is running: wait for it or POST /cancel/%s", t.id, t.id),
		fields: map[string]any{"requestId": t.id}}
}

// SessionTarget is a device a session can open, as GET /session/targets
// lists it: the device, with a label and a status as Midscene shows them.
type SessionTarget struct {
	device.Target
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
	Status      string `json:"status"`
}

func (s *Server) targets(w http.ResponseWriter, r *http.Request) {
	out := []SessionTarget{}
	if s.opts.Targets == nil {
		writeJSON(w, http.StatusOK, out)
		return
	}
	ts, err := s.opts.Targets(r.Context())
	if err != nil {
		writeError(w, http.StatusBadGateway, fmt.Errorf("listing devices: %w", err))
		return
	}
	for _, t := range ts {
		out = append(out, SessionTarget{Target: t, Label: describeTarget(t), Description: t.Hint, Status: t.State})
	}
	writeJSON(w, http.StatusOK, out)
}

// createSession opens the device; it answers when the session is ready or
// the create has failed (and cleaned up).
func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var body struct {
		DeviceID string `json:"deviceId"`
	}
	if err := readJSON(r, &body); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, 0, err)
		return
	}
	v, err := s.Connect(r.Context(), body.DeviceID)
	if err != nil {
		writeError(w, 0, err)
		return
	}
	writeJSON(w, http.StatusOK, s.sessionAnswer(v))
}

// Connect opens a session on the device id names ("" picks the only one),
// as POST /session does. An idle session is replaced; one running a task
// is not. A failed open leaves the session required, with the error.
func (s *Server) Connect(ctx context.Context, id string) (SessionView, error) {
	if err := s.checkBlocked(ctx); err != nil {
		return s.sess.view(), &apiError{code: http.StatusConflict, err: fmt.Errorf("no session can be set up: %w", err),
			fields: map[string]any{"session": s.sess.view()}}
	}
	ss := &s.sess
	ss.mu.Lock()
	if ss.state == StateReady {
		ss.mu.Unlock()
		if err := s.destroy(); err != nil {
			return s.sess.view(), err
		}
		ss.mu.Lock()
	}
	if ss.state != StateRequired {
		v := ss.viewLocked()
		ss.mu.Unlock()
		return v, &apiError{code: http.StatusConflict, err: fmt.Errorf("the session is %s: wait for it (a running task: POST /cancel/ID), then open the device again", v.State),
			fields: map[string]any{"session": v}}
	}
	ss.state, ss.err = StateCreating, ""
	ss.mu.Unlock()
	s.publishSession()

	drv, t, release, err := s.opts.Open(ctx, id)
	ss.mu.Lock()
	if err != nil {
		ss.state, ss.err = StateRequired, err.Error()
	} else {
		ss.state, ss.openID = StateReady, id
		ss.attach(drv, t, release, s.stepOptions())
	}
	v := ss.viewLocked()
	ss.mu.Unlock()
	s.publishSession()
	if err != nil {
		s.log.Warn("open device", "device", id, "err", err)
		return v, &apiError{code: http.StatusBadRequest, err: fmt.Errorf("opening device %q: %w", id, err),
			fields: map[string]any{"session": v}}
	}
	return v, nil
}

// checkBlocked asks Options.Blocked whether a session can be set up and
// moves between required and blocked to match.
func (s *Server) checkBlocked(ctx context.Context) error {
	if s.opts.Blocked == nil {
		return nil
	}
	err := s.opts.Blocked(ctx)
	ss := &s.sess
	ss.mu.Lock()
	changed := false
	switch {
	case err != nil && ss.state == StateRequired:
		ss.state, ss.err, changed = StateBlocked, err.Error(), true
	case err == nil && ss.state == StateBlocked:
		ss.state, ss.err, changed = StateRequired, "", true
	}
	ss.mu.Unlock()
	if changed {
		s.publishSession()
	}
	return err
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	if err := s.destroy(); err != nil {
		writeError(w, 0, err)
		return
	}
	writeJSON(w, http.StatusOK, s.sessionAnswer(s.sess.view()))
}

// destroy cancels a running task, waits for it and releases the device.
// With no session it does nothing.
func (s *Server) destroy() error {
	ss := &s.sess
	ss.mu.Lock()
	switch ss.state {
	case StateRequired, StateBlocked:
		ss.mu.Unlock()
		return nil
	case StateCreating, StateDestroying, StateRecreating:
		st := ss.state
		ss.mu.Unlock()
		return errorf(http.StatusConflict, "the session is %s: try again when it is done", st)
	}
	ss.state = StateDestroying
	t := ss.running
	ss.mu.Unlock()
	s.publishSession()
	if t != nil {
		// Waiting even when ctx ends keeps the task's last events and
		// device calls from meeting the next session: a cancelled task
		// ends promptly, as device calls are bounded.
		t.cancel()
		<-t.done
	}
	ss.mu.Lock()
	release := ss.release
	ss.state, ss.drv, ss.target, ss.space, ss.steps, ss.release = StateRequired, nil, device.Target{}, nil, nil, nil
	ss.mu.Unlock()
	if release != nil {
		release()
	}
	s.publishSession()
	return nil
}

// manualFind is how long a manual action waits for its target to show.
const manualFind = 2 * time.Second

// stepOptions are how a session's manual actions run: how they read the
// screen and how long they wait for a target.
func (s *Server) stepOptions() *engine.Options {
	return &engine.Options{Perception: s.opts.Perception, FindTimeout: manualFind, Log: s.log}
}

// publishSession publishes the session's state, read in the order it is
// published: two changes published at once never leave the older last.
func (s *Server) publishSession() {
	s.events.publishNow(func() Message { return Message{Type: "session", Session: ptr(s.sess.view())} })
}

func ptr[T any](v T) *T { return &v }

// relink opens the session's device again after its link broke (an error
// wrapping device.ErrOffline from broken). Nothing is repeated on the
// device: the caller tells its client to retry. When the device cannot be
// opened the session is required again, with the error.
func (s *Server) relink(ctx context.Context, broken device.Driver) error {
	ss := &s.sess
	ss.mu.Lock()
	if ss.drv != broken || ss.state != StateReady {
		// Relinked by another caller already, or no longer ours to fix.
		ss.mu.Unlock()
		return nil
	}
	ss.state = StateRecreating
	ss.mu.Unlock()
	s.publishSession()
	return s.reopen(ctx)
}

// reopen releases the recreating session's device and opens it again:
// ready with the new link, or required with the error.
func (s *Server) reopen(ctx context.Context) error {
	ss := &s.sess
	ss.mu.Lock()
	release, id := ss.release, ss.openID
	ss.mu.Unlock()
	release()
	drv, t, rel, err := s.opts.Open(ctx, id)
	ss.mu.Lock()
	if err != nil {
		ss.state, ss.err, ss.drv, ss.target, ss.space, ss.steps, ss.release = StateRequired, err.Error(), nil, device.Target{}, nil, nil, nil
	} else {
		ss.state = StateReady
		ss.attach(drv, t, rel, s.stepOptions())
	}
	ss.mu.Unlock()
	s.publishSession()
	if err != nil {
		s.log.Warn("reopen device", "device", id, "err", err)
	}
	return err
}
