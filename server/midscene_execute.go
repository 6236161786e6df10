package server

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/script"
)

// MidsceneRequest is what Midscene's PlaygroundSDK (remote execution) adds
// to POST /execute: Type is an action of the space (its name, or
// Midscene's: "aiTap", "DoubleClick") or one of Midscene's agent calls
// (aiAct, aiAssert, aiQuery, aiWaitFor…), with Prompt and, for actions,
// Params. The options only matter to Midscene's own models and browsers;
// they are accepted so its bodies decode unchanged.
type MidsceneRequest struct {
	Type               string          `json:"type,omitempty"`
	Prompt             string          `json:"prompt,omitempty"`
	Context            json.RawMessage `json:"context,omitempty"`
	DeepLocate         bool            `json:"deepLocate,omitempty"`
	DeepThink          bool            `json:"deepThink,omitempty"`
	ScreenshotIncluded bool            `json:"screenshotIncluded,omitempty"`
	DomIncluded        json.RawMessage `json:"domIncluded,omitempty"`
	DeviceOptions      json.RawMessage `json:"deviceOptions,omitempty"`
	ReportDisplay      json.RawMessage `json:"reportDisplay,omitempty"`
}

// midsceneNames maps Midscene's action names and interface aliases onto
// the action space's, where the space's own lookup does not find them.
var midsceneNames = map[string]string{
	"doubleclick": "DoubleTap", "aidoubleclick": "DoubleTap", "aitap": "Tap", "ailongpress": "LongPress",
	"aiinput": "Input", "aiclearinput": "ClearInput", "aiscroll": "Scroll", "aikeyboardpress": "KeyboardPress",
	"aidraganddrop": "DragAndDrop", "aipinch": "Pinch", "aiswipe": "Swipe",
}

// midsceneAliases are Midscene's interface aliases of the space's actions
// (the name its agent calls them by), for POST /action-space.
var midsceneAliases = map[string]string{
	"Tap": "aiTap", "DoubleTap": "aiDoubleClick", "LongPress": "aiLongPress", "Input": "aiInput",
	"ClearInput": "aiClearInput", "Scroll": "aiScroll", "KeyboardPress": "aiKeyboardPress",
	"DragAndDrop": "aiDragAndDrop", "Pinch": "aiPinch",
}

// browserOnly are Midscene types that need a mouse or a web page.
var browserOnly = map[string]bool{"hover": true, "aihover": true, "rightclick": true, "airightclick": true,
	"javascript": true, "evaluatejavascript": true}

// midsceneAction finds the action a Midscene type names.
func midsceneAction(space *action.Space, typ string) (*action.Action, bool) {
	if a, ok := space.Lookup(typ); ok {
		return a, true
	}
	if name, ok := midsceneNames[strings.ToLower(typ)]; ok {
		return space.Lookup(name)
	}
	return nil, false
}

// midsceneSteps are Midscene's agent calls that run as a script step.
var midsceneSteps = map[string]script.Kind{
	"aiassert": script.AIAssert, "aiquery": script.AIQuery, "aiboolean": script.AIBoolean, "ainumber": script.AINumber,
	"aistring": script.AIString, "aiask": script.AIAsk, "aiwaitfor": script.AIWaitFor, "ailocate": script.AILocate,
}

// midsceneJob is the job a Midscene request asks for: an action of the
// space (params as Midscene sends them, or the prompt as its target), a
// goal for aiAct, or a script step for the other agent calls.
func (s *Server) midsceneJob(req ExecuteRequest, space *action.Space) (job, error) {
	typ := strings.TrimSpace(req.Type)
	lower := strings.ToLower(typ)
	if browserOnly[lower] {
		return job{}, errorf(http.StatusBadRequest, "%s needs a mouse or a web page; a phone has neither: use Tap or LongPress", typ)
	}
	if a, ok := midsceneAction(space, typ); ok {
		params, err := midsceneParams(a, req.Prompt, req.Params)
		if err != nil {
			return job{}, err
		}
		j, err := actionJob(a, params)
		j.midscene = typ
		return j, err
	}
	prompt := strings.TrimSpace(req.Prompt)
	switch lower {
	case "aiact", "ai", "aiaction", "runmarkdown":
		if prompt == "" {
			return job{}, errorf(http.StatusBadRequest, "%s: say what to do in prompt", typ)
		}
		return job{kind: "goal", title: prompt, midscene: typ}, nil
	}
	kind, ok := midsceneSteps[lower]
	if !ok {
		return job{}, errorf(http.StatusBadRequest, "unknown type %q: use an action of POST /action-space (%s) or aiAct, aiAssert, aiQuery, aiBoolean, aiNumber, aiString, aiAsk, aiWaitFor, aiLocate",
			typ, strings.Join(space.Names(), ", "))
	}
	if prompt == "" {
		return job{}, errorf(http.StatusBadRequest, "%s: say what to check or ask in prompt", typ)
	}
	step, _ := json.Marshal(map[string]string{string(kind): prompt})
	sc, err := s.stepScript(step, space)
	if err != nil {
		return job{}, err
	}
	return job{kind: "step", title: typ + ": " + prompt, script: sc, midscene: typ}, nil
}

// midsceneParamNames renames Midscene's params to the space's.
var midsceneParamNames = map[string]string{"start": "from", "end": "to", "uri": "app", "timeMs": "ms"}

// actionSchema is the part of an action's JSON Schema params are checked
// against here.
type actionSchema struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

func schemaOf(a *action.Action) actionSchema {
	var sc actionSchema
	_ = json.Unmarshal(a.SchemaJSON(), &sc) // the space's own schema
	return sc
}

// midsceneParams turns Midscene's params into the action's: names
// renamed, options the action does not take dropped, locators given as
// Midscene's objects ({prompt, deepLocate…}, {center: [x, y]}) made ours.
// With no params the prompt is the action's first locator, or its first
// required param.
func midsceneParams(a *action.Action, prompt string, raw json.RawMessage) (json.RawMessage, error) {
	sc := schemaOf(a)
	locators := map[string]bool{}
	for _, f := range a.LocatorFields() {
		locators[f] = true
	}
	out := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		var in map[string]any
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, errorf(http.StatusBadRequest, "params: want a JSON object: %v", err)
		}
		for k, v := range in {
			if n, ok := midsceneParamNames[k]; ok {
				k = n
			}
			if _, ok := sc.Properties[k]; !ok || v == nil || v == "" {
				continue
			}
			if locators[k] {
				v = midsceneLocator(v)
			}
			out[k] = v
		}
	}
	if len(out) == 0 && strings.TrimSpace(prompt) != "" {
		switch {
		case len(a.LocatorFields()) > 0:
			out[a.LocatorFields()[0]] = prompt
		case len(sc.Required) > 0:
			out[sc.Required[0]] = prompt
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "params: %v", err)
	}
	return b, nil
}

// midsceneLocator is a locator as Midscene writes it, made ours: a
// string stays; {prompt, …} is its prompt; {center: [x, y]} a point.
func midsceneLocator(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if c, ok := m["center"].([]any); ok && len(c) == 2 {
		return map[string]any{"x": c[0], "y": c[1]}
	}
	if p, ok := m["prompt"].(string); ok {
		return p
	}
	return m
}

// midsceneResult is a task's result as Midscene's agent call returns it:
// {pass, thought} for aiAssert, the answer for the queries, the task's own
// result otherwise.
func midsceneResult(typ, status, errText string, res any) any {
	lower := strings.ToLower(typ)
	switch {
	case lower == "aiassert":
		return map[string]any{"pass": status == "done", "thought": errText}
	case midsceneSteps[lower] != "":
		if m, ok := res.(map[string]any); ok {
			if outs, ok := m["outputs"].(map[string]any); ok {
				for _, v := range outs {
					return v // one step: one output
				}
			}
		}
		return nil
	}
	return res
}

// ExecutionTask is one entry of Midscene's executionDump: a step of the
// task as its web app lists them while it runs.
type ExecutionTask struct {
	Type         string         `json:"type"`
	SubType      string         `json:"subType,omitempty"`
	Status       string         `json:"status"`
	Param        map[string]any `json:"param,omitempty"`
	Thought      string         `json:"thought,omitempty"`
	ErrorMessage string         `json:"errorMessage,omitempty"`
	Timing       map[string]any `json:"timing"`
}

// ExecutionDump is Midscene's progress of a running task
// (GET /task-progress answers it as executionDump).
type ExecutionDump struct {
	LogTime     int64           `json:"logTime"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Tasks       []ExecutionTask `json:"tasks"`
}

// executionDump projects a task's progress (t.mu held).
func (t *task) executionDumpLocked() *ExecutionDump {
	d := &ExecutionDump{Name: t.job.midscene, Description: t.job.title, Tasks: []ExecutionTask{}}
	for i, p := range t.progress {
		if i == 0 {
			d.LogTime = p.Time.UnixMilli()
		}
		typ := "Action Space"
		switch p.Type {
		case "plan", "replan":
			typ = "Planning"
		case "verdict", "observe", "observation":
			typ = "Insight"
		case endType:
			typ = "Log"
		}
		status := "finished"
		switch p.Status {
		case "failed", "fail", "error", "canceled":
			status = "failed"
		}
		if p.Type == endType && p.Status == statusRunning {
			status = "running"
		}
		et := ExecutionTask{Type: typ, SubType: p.Type, Status: status, Param: map[string]any{"role": p.Role, "text": p.Text},
			Thought: p.Text, Timing: map[string]any{"start": p.Time.UnixMilli(), "end": p.Time.UnixMilli(), "cost": 0}}
		if status == "failed" {
			et.ErrorMessage = p.Text
		}
		d.Tasks = append(d.Tasks, et)
	}
	if t.status == statusRunning {
		d.Tasks = append(d.Tasks, ExecutionTask{Type: "Action Space", SubType: t.job.kind, Status: "running",
			Param: map[string]any{"text": t.job.title}, Timing: map[string]any{}})
	}
	return d
}

// reportRef is where a task's report is, as Midscene's client reads it.
type reportRef struct {
	ID        string `json:"id"`
	URL       string `json:"url"`
	ReplayURL string `json:"replayUrl"`
	Format    string `json:"format"`
}

func newReportRef(runID, url string) *reportRef {
	return &reportRef{ID: runID, URL: url, ReplayURL: replayURL(runID), Format: "html-and-external-assets"}
}
