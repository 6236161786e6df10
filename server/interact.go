package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/engine"
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
	// Setting marks a device setting: it answers with the value read back.
	Setting bool `json:"setting,omitempty"`
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
			Aliases: a.Aliases(), Locators: a.LocatorFields(), Schema: a.SchemaJSON(), Setting: a.IsSetting()})
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
	// Answer is what the action answered: a setting's value read back
	// from the device ({"dark": true} for SetAppearance).
	Answer any `json:"answer,omitempty"`
}

// interact runs one action of the session's action space with no model:
// locator params are found on a fresh Scene of the screen.
func (s *Server) interact(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Action string          `json:"action"`
		Params json.RawMessage `json:"params"`
		// MidsceneInteract is Midscene's body (midscene_interact.go).
		MidsceneInteract
	}
	if err := readJSON(r, &body); err != nil {
		writeError(w, 0, err)
		return
	}
	if body.ActionType != "" {
		var err error
		if body.Action, body.Params, err = body.action(); err != nil {
			writeError(w, 0, err)
			return
		}
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
	params, err := a.Decode(body.Params)
	if err != nil {
		writeError(w, actionStatus(err), err)
		return
	}
	if err := s.rec.full(body.Params); err != nil {
		writeError(w, 0, err)
		return
	}
	s.input.Lock()
	defer s.input.Unlock()
	// A task may have begun while this waited for the device.
	if _, err := s.sess.open(true); err != nil {
		writeError(w, 0, err)
		return
	}
	ctx := r.Context()
	rec := dev.steps.Run(ctx, engine.Step{Call: action.Call{Action: a, Params: params}, Name: a.Name()})
	if err := rec.Err; err != nil {
		if errors.Is(err, device.ErrOffline) {
			s.relinkAnswer(w, r, dev, a.Name(), err)
			return
		}
		if !strings.HasPrefix(err.Error(), a.Name()+": ") { // a call's own errors name it already
			err = fmt.Errorf("%s: %w", a.Name(), err)
		}
		writeError(w, actionStatus(err), err)
		return
	}
	out := InteractResult{Action: a.Name(), OK: true, Ms: rec.Duration.Milliseconds(), Element: rec.Element, Point: rec.Point,
		Scene: rec.After.Scene.Text(), Answer: rec.Result}
	if s.rec.recording() {
		var compact bytes.Buffer
		_ = json.Compact(&compact, replayable(rec)) // valid: the action encoded it
		s.rec.add(Recorded{Time: rec.Started, Action: a.Name(), Params: compact.Bytes(), Element: out.Element, Point: out.Point,
			Device: dev.target.ID, App: rec.Before.Scene.Package, platform: dev.target.Platform}, rec.Before.PNG, rec.After.PNG)
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

// replayable is the params to record for an action: a point locator (a
// click on the preview) becomes the element it touched when that element's
// text, description or resource id finds it again on the same screen, so
// the script replays on other screen sizes; otherwise the point stays.
func replayable(rec *engine.Record) json.RawMessage {
	c := rec.Call.Clone()
	for i, ref := range rec.Call.Locators() {
		l := ref.Locator
		if l == nil || l.Point == nil || !l.Resolved() || l.Target().Element == nil {
			continue
		}
		e := l.Target().Element
		for _, cand := range []action.Locator{{Text: e.Text}, {Desc: e.Desc}, {ID: e.ResourceID}} {
			if cand.IsZero() {
				continue
			}
			if found, err := locate.Find(rec.Before.Scene, cand); err == nil && found.ID == e.ID {
				_ = c.SetLocator(c.Locators()[i].Name, cand) // the same action's own field
				break
			}
		}
	}
	return c.ParamsJSON()
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
