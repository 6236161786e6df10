package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/scene"
)

// ActionInfo is one action of GET /action-space.
type ActionInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Signature   string          `json:"signature"`
	Aliases     []string        `json:"aliases,omitempty"`
	Locators    []string        `json:"locators,omitempty"` // params found on screen
	Schema      json.RawMessage `json:"schema"`
}

func (s *Server) actionSpace(w http.ResponseWriter, r *http.Request) {
	dev, err := s.sess.open(false)
	if err != nil {
		writeError(w, 0, err)
		return
	}
	var as []ActionInfo
	for _, a := range dev.space.Actions() {
		as = append(as, ActionInfo{Name: a.Name(), Description: a.Description(), Signature: a.Signature(),
			Aliases: a.Aliases(), Locators: a.LocatorFields(), Schema: a.SchemaJSON()})
	}
	writeJSON(w, http.StatusOK, map[string]any{"platform": dev.space.Platform(), "actions": as})
}

// InteractResult is the answer of POST /interact.
type InteractResult struct {
	Action string `json:"action"`
	OK     bool   `json:"ok"`
	Ms     int64  `json:"ms"`
	// Element is the first element a locator param found, with the point
	// touched.
	Element *scene.Element `json:"element,omitempty"`
	Point   *device.Point  `json:"point,omitempty"`
	// Scene is the screen after the action, as Scene text.
	Scene string `json:"scene"`
}

// interact runs one action of the session's action space with no model:
// locator params are found on a fresh Scene of the screen.
func (s *Server) interact(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Action string          `json:"action"`
		Params json.RawMessage `json:"params"`
	}
	if err := readJSON(r, &body); err != nil {
		writeError(w, 0, err)
		return
	}
	dev, err := s.sess.open(true)
	if err != nil {
		writeError(w, 0, err)
		return
	}
	a, ok := dev.space.Lookup(body.Action)
	if !ok {
		writeError(w, http.StatusBadRequest, fmt.Errorf("no action %q on %s: use one of %s (GET /action-space)",
			body.Action, dev.space.Platform(), strings.Join(dev.space.Names(), ", ")))
		return
	}
	if len(body.Params) == 0 || string(body.Params) == "null" {
		body.Params = json.RawMessage("{}")
	}
	s.input.Lock()
	defer s.input.Unlock()
	// A task may have begun while this waited for the device.
	if _, err := s.sess.open(true); err != nil {
		writeError(w, 0, err)
		return
	}
	ctx := r.Context()
	res := &firstTarget{}
	res.live = &locate.Live{Observe: perceived(dev, true), Observed: func(sc *scene.Scene) {
		if res.scene == nil {
			res.scene = sc
		}
	}}
	recording := s.rec.recording()
	var before []byte
	if recording {
		before = s.shot(ctx, dev)
	}
	start := time.Now()
	if err := a.Run(ctx, &action.Env{Driver: dev.drv, Resolver: res, Log: s.log}, body.Params); err != nil {
		if errors.Is(err, device.ErrOffline) {
			s.relinkAnswer(w, r, dev, a.Name(), err)
			return
		}
		writeError(w, actionStatus(err), fmt.Errorf("%s: %w", a.Name(), err))
		return
	}
	out := InteractResult{Action: a.Name(), OK: true, Ms: time.Since(start).Milliseconds()}
	if res.first != nil {
		out.Element, out.Point = res.first.Element, &res.first.Point
	}
	sc, err := perceived(dev, false)(ctx)
	if err != nil {
		writeError(w, http.StatusBadGateway, fmt.Errorf("%s done, but reading the screen after failed: %w", a.Name(), err))
		return
	}
	out.Scene = sc.Text()
	if recording {
		var params bytes.Buffer
		_ = json.Compact(&params, replayable(body.Params, a.LocatorFields(), res)) // valid: the action decoded it
		s.rec.add(Recorded{Time: start, Action: a.Name(), Params: params.Bytes(), Element: out.Element, Point: out.Point,
			Device: dev.target.ID, before: before, after: s.shot(ctx, dev)})
	}
	writeJSON(w, http.StatusOK, out)
}

// actionStatus answers bad params with 400, an element not on screen with
// 422 and a device failure with 502.
func actionStatus(err error) int {
	switch {
	case errors.Is(err, action.ErrInvalidParams), errors.Is(err, action.ErrUnknownAction):
		return http.StatusBadRequest
	case errors.Is(err, action.ErrNotFound):
		return http.StatusUnprocessableEntity
	case errors.Is(err, context.Canceled):
		return http.StatusRequestTimeout
	}
	return http.StatusBadGateway
}

// perceived reads the session's screen as a Scene: the tree, with OCR
// fused in where it cannot be trusted. With acting set, the screen is the
// one the action about to run acts on, so a tree that does not change
// after it is suspected of being stale.
func perceived(dev sessionDevice, acting bool) locate.Observer {
	return func(ctx context.Context) (*scene.Scene, error) {
		s, err := dev.percept.Observe(ctx)
		if err != nil {
			return nil, err
		}
		if err := dev.percept.Perceive(ctx, s); err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if acting {
			dev.percept.ActedOn(s)
		}
		return s.Scene, nil
	}
}

// firstTarget remembers the first element found, the one a manual action
// touched, and the screen it was found on.
type firstTarget struct {
	live  *locate.Live
	first *action.Target
	scene *scene.Scene
}

// replayable is the params to record for an action: a point locator (a
// click on the preview) becomes the element it touched when that element's
// text, description or resource id finds it again on the same screen, so
// the script replays on other screen sizes; otherwise the point stays.
func replayable(params json.RawMessage, locators []string, f *firstTarget) json.RawMessage {
	var m map[string]json.RawMessage
	if f.first == nil || f.first.Element == nil || f.scene == nil || json.Unmarshal(params, &m) != nil {
		return params
	}
	for _, k := range locators {
		var l action.Locator
		if raw, ok := m[k]; !ok || json.Unmarshal(raw, &l) != nil || l.Point == nil {
			continue
		}
		e := f.first.Element
		for _, cand := range []action.Locator{{Text: e.Text}, {Desc: e.Desc}, {ID: e.ResourceID}} {
			if cand.IsZero() {
				continue
			}
			if found, err := locate.Find(f.scene, cand); err == nil && found.ID == e.ID {
				m[k], _ = json.Marshal(cand)
				break
			}
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return params
	}
	return out
}

func (f *firstTarget) Resolve(ctx context.Context, l action.Locator) (action.Target, error) {
	t, err := f.live.Resolve(ctx, l)
	if err == nil && f.first == nil {
		f.first = &t
	}
	return t, err
}

// shot is a screenshot for the record, nil when it fails.
func (s *Server) shot(ctx context.Context, dev sessionDevice) []byte {
	img, err := dev.drv.Screenshot(ctx)
	if err != nil {
		s.log.Warn("recorder screenshot", "device", dev.target.ID, "err", err)
		return nil
	}
	return img
}

// relinkAnswer reconnects a broken device link and tells the client: the
// action may or may not have reached the device, so it is never repeated
// here; the client retries once the session is ready.
func (s *Server) relinkAnswer(w http.ResponseWriter, r *http.Request, dev sessionDevice, name string, cause error) {
	if err := s.relink(r.Context(), dev.drv); err != nil {
		writeError(w, 0, &apiError{code: http.StatusBadGateway,
			err:    fmt.Errorf("%s: the link to %s broke (%v) and reopening it failed: %w; POST /session to start again", name, dev.target.ID, cause, err),
			fields: map[string]any{"session": s.sess.view()}})
		return
	}
	writeError(w, 0, &apiError{code: http.StatusServiceUnavailable,
		err:    fmt.Errorf("%s: the link to %s broke (%v); it is reconnected and the action was not repeated: check the screen and retry", name, dev.target.ID, cause),
		fields: map[string]any{"retry": true, "session": s.sess.view()}})
}
