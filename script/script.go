// Package script reads Apex's YAML scripts: Midscene-compatible target blocks,
// tasks and flow steps, plus deterministic steps that need no model. Load
// validates everything it can without a device and reports each problem at
// file:line:column.
package script

import (
	"encoding/json"
	"time"
)

// Script is one parsed YAML file.
type Script struct {
	File   string
	Target Target
	// Agent is Midscene's optional agent block (testId, aiActContext, …),
	// kept for the AI runtime; the runner itself does not read it.
	Agent map[string]any
	Tasks []Task

	// Env lists the environment variables the script's text may use
	// (env: [NAME, …]), besides APEX_VAR_… ones.
	Env []string
	// Params are a flow file's parameters (params: {name: default}), set
	// by the caller's with:; a parameter without a default is required.
	Params []Param
	// Data are the rows of data: in the file; the script runs once per row
	// with the row's columns as values. Nil when the file gives none.
	Data *Data
	// Tags select the script in a suite (apex run --tags smoke).
	Tags []string
	// Stores lists the values the script's top-level steps store; a flow
	// hands them back to its caller.
	Stores []string
}

// Param is a named text: a flow's parameter and its default, or a value
// passed to a flow.
type Param struct {
	Name, Value string
	// Required parameters have no default.
	Required bool
}

// Flow is what a runFlow step runs: the tasks of a flow file, or its own
// inline steps (one task without a name).
type Flow struct {
	// Name shows in the call tree: the file's base name, or the name:
	// given to an inline flow.
	Name   string
	File   string // the flow file; "" for an inline flow
	Params []Param
	Tasks  []Task
	// Stores are the values the flow hands back to its caller.
	Stores []string
}

// Cond is what if: and repeat's until: test on the screen: a check in
// assert's terms, or the device's platform.
type Cond struct {
	Assert   *Assert         // the check; nil for a platform condition
	Target   json.RawMessage // the element the check is about
	Platform string          // android or ios
	// Timeout is how long the condition is re-checked before it counts as
	// false (a popup that comes a moment late); 0 looks once.
	Timeout time.Duration
}

// Target says which device a script wants and what to launch first.
type Target struct {
	// Kind is "android", "ios" or "sim"; "" when the script names none and
	// the device comes from the command line.
	Kind     string
	DeviceID string // android deviceId, ios udid / deviceId
	WDAURL   string // ios: wdaUrl, or http://wdaHost:wdaPort
	Platform string // sim: "android" (default) or "ios"
	Launch   string // app package / bundle id to start before the first task
	Output   string // Midscene's output path for query results
	// Extra keeps the device options Apex accepts for compatibility but does
	// not use (androidAdbPath, imeStrategy, …).
	Extra map[string]any
	Pos   Pos
}

// Task is a named list of steps.
type Task struct {
	Name            string
	ContinueOnError bool
	Steps           []Step
	Pos             Pos
}

// Step is one flow item. Kind decides which fields are meaningful.
type Step struct {
	Kind Kind
	Key  string // the key as written: "ai", "aiAction", "tap", an action name …
	Pos  Pos

	// Prompt is the natural-language text of ai* steps (the instruction,
	// the assertion, the query) and the title of logScreenshot.
	Prompt string
	// Target is the element a step acts on or checks, in the JSON form
	// of Apex's locators: a string is a free-text prompt ("the \"Buy\"
	// button", "「搜索」", "e12"), an object names fields
	// ({"text":"Add to cart","index":1}). Empty when the step names none.
	Target json.RawMessage
	// Value is the text to type (input), the key (keyboard press), the
	// package (launch, terminate), the shell command (runAdbShell) or the
	// content of logScreenshot.
	Value string
	// Mode is how input treats existing text: replace (default), append, clear.
	Mode         string
	Name         string // result name of queries and aiLocate
	ErrorMessage string
	Timeout      time.Duration // waits, runAdbShell, runWdaRequest; 0 = the runner's default
	Duration     time.Duration // sleep, long press, swipe
	// Optional steps pass when their target is absent (a popup that may or
	// may not show).
	Optional bool
	Scroll   *Scroll
	Swipe    *Swipe
	Assert   *Assert
	// Params is the JSON object of a generic action step, or the body of a
	// runWdaRequest.
	Params json.RawMessage
	// Request is the runWdaRequest method and endpoint.
	Method, Endpoint string

	// Refs reports that the step's text refers to values or escapes ${
	// (the loader sets it): Expand puts them in when the step runs. A step
	// built in Go means its text as it is.
	Refs bool
	// As is the name a read step stores the text it read under (queries
	// store under Name).
	As string
	// Cond is an if's condition, or the until of a repeat.
	Cond *Cond
	// Body runs when an if's condition holds, each time a repeat repeats;
	// Else when the condition does not hold.
	Body, Else []Step
	// Times is how often a repeat runs its body; Max bounds a repeat
	// until its condition holds.
	Times, Max int
	// Flow is what runFlow runs, With the values it passes (text put in
	// when the step runs).
	Flow *Flow
	With []Param
}

// Scroll is a scroll gesture (aiScroll, scrollUntilVisible).
type Scroll struct {
	Direction string // up, down, left, right (the content moves to reveal that side)
	Type      string // once, untilBottom, untilTop, untilLeft, untilRight
	Distance  int    // pixels; 0 = most of the screen
	MaxSwipes int    // scrollUntilVisible: give up after this many
}

// Swipe is a swipe between two points, or in a direction across the screen.
type Swipe struct {
	From, To  [2]int
	Direction string
}

// Assert is a deterministic check on the Scene.
type Assert struct {
	Op      string  // exists, notExists, checked, notChecked, enabled, focused, textEquals, textContains, numberGreater, numberLess, count
	Text    string  // textEquals / textContains
	Number  float64 // numberGreater / numberLess; count: how many elements match
	Message string  // shown when the check fails
}

// Pos is a place in a script file.
type Pos struct {
	File      string
	Line, Col int
}
