package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/internal/lazy"
	"github.com/apexagent/apex/runner"
	"github.com/apexagent/apex/script"
)

// ExecuteRequest is the body of POST /execute: exactly one of a goal, a
// script step or an action of the action space.
type ExecuteRequest struct {
	// Goal is a natural-language goal for the AI runtime.
	Goal string `json:"goal,omitempty"`
	// Step is one flow step of an apex run script, as JSON:
	// {"aiTap": "Login"}, {"aiAssert": "the cart shows 2 items"},
	// {"tap": {"text": "Login"}}.
	Step json.RawMessage `json:"step,omitempty"`
	// Action and Params call one action of the action space, as
	// POST /interact does, but as a recorded task with a report.
	Action string          `json:"action,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	// Async answers 202 with the requestId at once; by default the answer
	// waits for the task's end.
	Async bool `json:"async,omitempty"`
	// RequestID, when set, names the task (letters, digits, - and _), so a
	// client can follow /task-progress while the answer waits.
	RequestID string `json:"requestId,omitempty"`
	// ReportHTML asks a synchronous answer for the report itself, one
	// HTML page with its screenshots inside (a Midscene request always
	// gets it); report.url is where it is served either way.
	ReportHTML bool `json:"reportHTML,omitempty"`
	// MidsceneRequest is the body Midscene's PlaygroundSDK sends
	// ({type, prompt, params, …}; midscene_execute.go).
	MidsceneRequest
}

// job is what a task runs: a goal through the runtime, or a one-step
// script through the runner (which hands ai* steps to the runtime).
type job struct {
	kind   string // goal, step or action
	title  string
	script *script.Script
	// midscene is the Midscene type the job was asked for ("aiTap",
	// "aiQuery", "Tap"…): its answer takes Midscene's shapes.
	midscene string
}

var requestIDPattern = lazy.Regexp(`^[A-Za-z0-9_-]{1,64}$`)

// shellKinds are the steps that run commands on the device beyond the
// action space; they need Options.AllowShell.
var shellKinds = map[script.Kind]bool{script.RunAdbShell: true, script.RunWdaRequest: true, script.JavaScript: true}

// parseJob checks a request against the session's action space.
func (s *Server) parseJob(req ExecuteRequest, space *action.Space) (job, error) {
	if req.RequestID != "" && !requestIDPattern().MatchString(req.RequestID) {
		return job{}, errorf(http.StatusBadRequest, "requestId %q: use 1 to 64 letters, digits, - or _", req.RequestID)
	}
	given := 0
	for _, set := range []bool{strings.TrimSpace(req.Goal) != "", len(req.Step) > 0 && string(req.Step) != "null", req.Action != "", req.Type != ""} {
		if set {
			given++
		}
	}
	if given != 1 {
		return job{}, errorf(http.StatusBadRequest, `say what to do, one of: {"goal": "tap \"Settings\""}, {"step": {"aiTap": "Settings"}} {"action": "Tap", "params": {%q: "Settings"}} or Midscene's {"type": "aiTap", "prompt": "Settings"}`, action.Tap.LocatorFields()[0])
	}
	switch {
	case len(req.Goal) > MaxText:
		return job{}, tooLong("goal", len(req.Goal))
	case req.Goal != "":
		return job{kind: "goal", title: req.Goal}, nil
	case req.Type != "":
		return s.midsceneJob(req, space)
	case req.Action != "":
		a, ok := space.Lookup(req.Action)
		if !ok {
			return job{}, errorf(http.StatusBadRequest, "no action %q on %s: use one of %s (GET /action-space)",
				req.Action, space.Platform(), strings.Join(space.Names(), ", "))
		}
		return actionJob(a, req.Params)
	}
	sc, err := s.stepScript(req.Step, space)
	if err != nil {
		return job{}, err
	}
	return job{kind: "step", title: runner.StepName(sc.Tasks[0].Steps[0]), script: sc}, nil
}

// actionJob runs one action of the space with params (JSON; none: {}).
func actionJob(a *action.Action, params json.RawMessage) (job, error) {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	if _, err := a.Decode(params); err != nil {
		return job{}, errorf(http.StatusBadRequest, "%v", err)
	}
	// The runner runs an action of the space as a step of its own kind.
	st := script.Step{Kind: script.Action, Key: a.Name(), Params: params, Pos: script.Pos{File: stepScriptName, Line: 1, Col: 1}}
	sc := &script.Script{File: stepScriptName, Tasks: []script.Task{{Name: "playground", Steps: []script.Step{st}}}}
	return job{kind: "action", title: runner.StepName(sc.Tasks[0].Steps[0]), script: sc}, nil
}

// stepScriptName is the file name of the scripts /execute makes of a
// step or an action, as their runs record it.
const stepScriptName = "step"

// stepScript is a script of one task with one step, checked as apex run
// checks a file.
func (s *Server) stepScript(step json.RawMessage, space *action.Space) (*script.Script, error) {
	// JSON is YAML, so the script loader reads the step as a file's flow.
	doc := `{"tasks": [{"name": "playground", "flow": [` + string(step) + `]}]}`
	sc, err := script.Load([]byte(doc), stepScriptName, &script.Options{
		LookupEnv: func(string) (string, bool) { return "", false },
		Action: func(name string, params json.RawMessage) (bool, error) {
			a, ok := space.Lookup(name)
			if !ok || params == nil {
				return ok, nil
			}
			_, err := a.Decode(params)
			return true, err
		},
	})
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "%v", err)
	}
	if n := len(sc.Tasks); n != 1 || len(sc.Tasks[0].Steps) != 1 {
		return nil, errorf(http.StatusBadRequest, "step: want exactly one step, as one JSON object")
	}
	if k := sc.Tasks[0].Steps[0].Kind; shellKinds[k] && !s.opts.AllowShell {
		return nil, errorf(http.StatusForbidden, "%s runs commands on the device, which this playground does not allow (apex playground --allow-shell)", k)
	}
	return sc, nil
}

var errDuplicateID = errors.New("requestId already used")

func duplicateID(id string) *apiError {
	return &apiError{code: http.StatusConflict, err: fmt.Errorf("requestId %s: %w: choose another", id, errDuplicateID),
		fields: map[string]any{"requestId": id}}
}
