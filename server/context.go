package server

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/store"
)

// MaxText bounds a goal (POST /execute) and a context's goal and note
// (POST /playground-with-context): a goal is a sentence or a paragraph,
// and each is kept in memory, sent to models and recorded.
const MaxText = 64 << 10

// tooLong answers a text over MaxText with 413.
func tooLong(what string, n int) error {
	return errorf(http.StatusRequestEntityTooLarge, "%s of %d bytes: at most %d are taken; shorten it", what, n, MaxText)
}

// Contexts are kept in memory: the newest keepContexts, each for
// contextTTL. A context is a hand-off from a report page to the playground
// page opened a moment later, so neither needs to be long.
const (
	keepContexts = 100
	contextTTL   = time.Hour
)

// Context is where a person continues from in the playground: a step of a
// recorded run, or a goal they wrote down.
type Context struct {
	UUID    string    `json:"uuid"`
	Created time.Time `json:"created"`
	// Goal is the goal suggested for the playground's goal field; Mode
	// says what it is: "goal" (words for the AI runtime) or "step" (a
	// script step, as the page's Script step mode takes it).
	Goal string      `json:"goal"`
	Mode string      `json:"mode"`
	Note string      `json:"note,omitempty"`
	Run  *RunContext `json:"run,omitempty"`
}

// RunContext is the run a context came from, and its step.
type RunContext struct {
	ID     string `json:"id"`
	Name   string `json:"name,omitempty"`
	Script string `json:"script,omitempty"`
	Status string `json:"status"`
	// Report is the playground's address of the run's report, at the step.
	Report string       `json:"report"`
	Step   *StepContext `json:"step,omitempty"`
}

// StepContext is a recorded step as the playground shows it.
type StepContext struct {
	Index  int             `json:"index"`
	Task   string          `json:"task,omitempty"`
	Name   string          `json:"name,omitempty"` // as the script wrote it
	Action string          `json:"action,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Status string          `json:"status"`
	Error  string          `json:"error,omitempty"`
	// Before and After are the playground's addresses of the step's
	// screenshots ("" when it has none).
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// contextRequest is the body of POST /playground-with-context: a run's
// step, or a free-form goal; a goal or note given with a step overrides
// the suggestion.
type contextRequest struct {
	RunID string `json:"runId"`
	Step  *int   `json:"step"`
	Goal  string `json:"goal"`
	Note  string `json:"note"`
}

// contextAPI is the endpoints that open the playground from a report step.
func (s *Server) contextAPI() []route {
	cs := newContexts(time.Now)
	return []route{
		{"POST /playground-with-context", func(w http.ResponseWriter, r *http.Request) { s.createContext(w, r, cs) }},
		{"GET /context/{uuid}", func(w http.ResponseWriter, r *http.Request) {
			c, ok := cs.get(r.PathValue("uuid"))
			if !ok {
				writeError(w, http.StatusNotFound, fmt.Errorf("no context %q: it expired (contexts last %v) or this playground was restarted; open it again from the report", r.PathValue("uuid"), contextTTL))
				return
			}
			writeJSON(w, http.StatusOK, c)
		}},
	}
}

func (s *Server) createContext(w http.ResponseWriter, r *http.Request, cs *contexts) {
	var req contextRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, 0, err)
		return
	}
	for name, v := range map[string]string{"goal": req.Goal, "note": req.Note} {
		if len(v) > MaxText {
			writeError(w, 0, tooLong(name, len(v)))
			return
		}
	}
	c := Context{Goal: strings.TrimSpace(req.Goal), Note: strings.TrimSpace(req.Note), Mode: modeGoal}
	switch {
	case req.RunID != "":
		rc, goal, mode, err := s.runContext(r, req.RunID, req.Step)
		if err != nil {
			writeError(w, 0, err)
			return
		}
		c.Run = rc
		if c.Goal == "" {
			c.Goal, c.Mode = goal, mode
		}
	case req.Step != nil:
		writeError(w, http.StatusBadRequest, errors.New(`a step needs its run: {"runId": "…", "step": N}`))
		return
	case c.Goal == "" && c.Note == "":
		writeError(w, http.StatusBadRequest, errors.New(`say where to continue from: {"runId": "…", "step": N} or {"goal": "…", "note": "…"}`))
		return
	}
	c = cs.add(c)
	writeJSON(w, http.StatusOK, map[string]any{"uuid": c.UUID, "url": "/?context=" + c.UUID, "context": c})
}

// The modes of a suggested goal (Context.Mode).
const (
	modeGoal = "goal"
	modeStep = "step"
)

// runContext reads a run and, when step is set, that step of it from the
// store; goal is what the playground suggests doing next, in mode.
func (s *Server) runContext(r *http.Request, runID string, step *int) (*RunContext, string, string, error) {
	st, err := s.store()
	if err != nil {
		return nil, "", "", &apiError{code: http.StatusInternalServerError, err: err}
	}
	run, err := st.Run(r.Context(), runID)
	if err != nil {
		return nil, "", "", storeError(fmt.Errorf("run %q: %w (this playground knows the runs of its store: open the report it serves)", runID, err))
	}
	base := "/runs/" + url.PathEscape(run.ID) + "/"
	rc := &RunContext{ID: run.ID, Name: run.Name, Script: run.Script, Status: run.Status, Report: "/report/" + url.PathEscape(run.ID)}
	if step == nil {
		goal, _ := strings.CutPrefix(run.Name, taskRunPrefix)
		if goal == run.Name {
			goal = "" // a script's run: its name is no goal
		}
		mode := modeGoal
		if run.Script == stepScriptName {
			mode = modeStep // a step or an action the playground ran
		}
		return rc, goal, mode, nil
	}
	steps, err := st.Steps(r.Context(), run.ID)
	if err != nil {
		return nil, "", "", storeError(fmt.Errorf("steps of run %q: %w", runID, err))
	}
	for _, x := range steps {
		if x.Index != *step {
			continue
		}
		sc := &StepContext{Index: x.Index, Task: x.Task, Name: x.Name, Action: x.Action, Params: x.Params, Status: x.Status, Error: x.Error}
		if x.BeforePath != "" {
			sc.Before = base + escapePath(x.BeforePath)
		}
		if x.AfterPath != "" {
			sc.After = base + escapePath(x.AfterPath)
		}
		rc.Step = sc
		rc.Report += fmt.Sprintf("#step-%d", x.Index)
		goal, mode := suggestGoal(x)
		return rc, goal, mode, nil
	}
	return nil, "", "", errorf(http.StatusNotFound, "run %s has no step %d (it has %d): use the step's number as the report shows it", run.ID, *step, len(steps))
}

// taskRunPrefix starts the name of a run the playground recorded for a
// goal (task.go), which is the goal to suggest again.
const taskRunPrefix = "playground: "

// storeError answers a run the store does not know with 404.
func storeError(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return &apiError{code: http.StatusNotFound, err: err}
	}
	return &apiError{code: http.StatusInternalServerError, err: err}
}

func escapePath(p string) string {
	parts := strings.Split(path.Clean("/" + p)[1:], "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// suggestGoal is what a step stands for: an AI step's instruction itself
// (a goal), otherwise the step as the script wrote it (a step).
func suggestGoal(st store.Step) (string, string) {
	key, arg, ok := strings.Cut(st.Name, ": ")
	if ok && (key == "ai" || key == "aiAct" || key == "aiAction") {
		return arg, modeGoal
	}
	if st.Name != "" {
		return st.Name, modeStep
	}
	return st.Action, modeStep
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// contexts are the contexts created lately, oldest first. Safe for
// concurrent use.
type contexts struct {
	now  func() time.Time
	mu   sync.Mutex
	list []Context
}

func newContexts(now func() time.Time) *contexts { return &contexts{now: now} }

// add stores c under a new UUID and returns it as stored.
func (cs *contexts) add(c Context) Context {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c.UUID, c.Created = newUUID(), cs.now().UTC()
	cs.dropLocked()
	if len(cs.list) >= keepContexts {
		cs.list = slices.Delete(cs.list, 0, len(cs.list)-keepContexts+1)
	}
	cs.list = append(cs.list, c)
	return c
}

func (cs *contexts) get(id string) (Context, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.dropLocked()
	for _, c := range cs.list {
		if c.UUID == id {
			return c, true
		}
	}
	return Context{}, false
}

// dropLocked forgets the contexts older than contextTTL.
func (cs *contexts) dropLocked() {
	cut := cs.now().Add(-contextTTL)
	i := 0
	for i < len(cs.list) && !cs.list[i].Created.After(cut) {
		i++
	}
	cs.list = slices.Delete(cs.list, 0, i)
}
