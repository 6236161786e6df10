package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/scene"
)

// MaxSteps bounds a plan: a goal that needs more is split by the caller.
const MaxSteps = 15

// checkOnly is the action name of a step that only checks its expected
// state, in the plan's JSON ("action":"check", or no action).
const checkOnly = "check"

// Step is one step of a plan: one call of the device's action space and
// the state it should leave. In JSON (events, the model's plans):
//
//	{"step_id":1, "action":"Tap", "params":{…}, "expected_state":{…}}
//
// A step whose Call is zero only checks Expected ("action":"check").
type Step struct {
	ID       int
	Call     action.Call
	Expected *Check
	// Wait makes the step wait until Expected holds, up to the runtime's
	// WaitTimeout instead of its CheckTimeout.
	Wait bool
	// Sentence is the goal text the step came from (rule planner).
	Sentence string
}

// stepJSON is a Step on the wire.
type stepJSON struct {
	ID       int             `json:"step_id"`
	Action   string          `json:"action,omitempty"`
	Params   json.RawMessage `json:"params,omitempty"`
	Expected *Check          `json:"expected_state,omitempty"`
	Wait     bool            `json:"wait,omitempty"`
	Sentence string          `json:"sentence,omitempty"`
}

// MarshalJSON writes the step as the planner's prompt describes it.
func (s Step) MarshalJSON() ([]byte, error) {
	w := stepJSON{ID: s.ID, Action: checkOnly, Expected: s.Expected, Wait: s.Wait, Sentence: s.Sentence}
	if !s.Call.IsZero() {
		w.Action, w.Params = s.Call.Name(), s.Call.ParamsJSON()
	}
	return json.Marshal(w)
}

// knownActions are the actions of every platform: what a step read back
// from events (Replay, a Result's JSON) may name. A plan is decoded
// against its device's own space (decodeStep).
var knownActions = action.ForPlatform(device.Android).With(action.ForPlatform(device.IOS).Actions()...)

// UnmarshalJSON reads a step of a recorded plan; its action must be one of
// the built-in actions.
func (s *Step) UnmarshalJSON(data []byte) error {
	st, err := decodeStep(data, knownActions)
	if err != nil {
		return err
	}
	*s = st
	return nil
}

// decodeStep reads one step, its call through the action space: an
// unknown action is an error listing the space's actions, bad params the
// action's *action.ValidationError.
func decodeStep(data []byte, space *action.Space) (Step, error) {
	var w stepJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return Step{}, err
	}
	st := Step{ID: w.ID, Expected: w.Expected, Wait: w.Wait, Sentence: w.Sentence}
	if w.Action == "" || strings.EqualFold(w.Action, checkOnly) {
		return st, nil
	}
	c, err := space.DecodeCall(w.Action, w.Params)
	if err != nil {
		return Step{}, err
	}
	st.Call = c
	return st, nil
}

// Check kinds the validator knows.
const (
	Exist          = "EXIST"
	NotExist       = "NOT_EXIST"
	TextEquals     = "TEXT_EQUALS"
	TextContains   = "TEXT_CONTAINS"
	NumericGreater = "NUMERIC_GREATER"
	NumericLess    = "NUMERIC_LESS"
	LayoutChanged  = "LAYOUT_CHANGED"
	Checked        = "CHECKED"
	NotChecked     = "NOT_CHECKED"
	RegionCheck    = "REGION"
)

// Check is an expected state the validator can decide.
type Check struct {
	Kind    string   `json:"kind"`
	Target  string   `json:"target,omitempty"` // what to find: visible text, a description, or id:RESOURCE
	Value   string   `json:"value,omitempty"`  // TEXT_* text, NUMERIC_* number
	Regions []Region `json:"regions,omitempty"`
}

// Region is a region assertion: within the named part of the screen
// (top, bottom, left, right, center, header, footer, dialog, or an element's
// text or id), text must (or must not) appear, or an element there must
// read exactly must_equal.
type Region struct {
	Name      string `json:"name"`
	Text      string `json:"text,omitempty"`
	MustExist *bool  `json:"must_exist,omitempty"`
	MustEqual string `json:"must_equal,omitempty"`
}

// String renders a check for summaries and evidence.
func (c *Check) String() string {
	if c == nil {
		return "nothing"
	}
	switch c.Kind {
	case Exist:
		return fmt.Sprintf("%q shown", c.Target)
	case NotExist:
		return fmt.Sprintf("%q gone", c.Target)
	case TextEquals:
		return fmt.Sprintf("%q reads %q", c.Target, c.Value)
	case TextContains:
		return fmt.Sprintf("%q contains %q", c.Target, c.Value)
	case NumericGreater:
		return fmt.Sprintf("%q > %s", c.Target, c.Value)
	case NumericLess:
		return fmt.Sprintf("%q < %s", c.Target, c.Value)
	case Checked, NotChecked:
		return fmt.Sprintf("%q %s", c.Target, strings.ToLower(strings.ReplaceAll(c.Kind, "_", " ")))
	case RegionCheck:
		return fmt.Sprintf("%d region assertions", len(c.Regions))
	}
	return strings.ToLower(c.Kind)
}

// validatePlan checks a plan from a planner (rules or a model) whose
// calls were decoded through the device's action space.
func validatePlan(steps []Step) error {
	if len(steps) == 0 {
		return fmt.Errorf("the plan has no steps")
	}
	if len(steps) > MaxSteps {
		return fmt.Errorf("the plan has %d steps; at most %d are allowed: split the goal", len(steps), MaxSteps)
	}
	for i, s := range steps {
		if s.Call.IsZero() && s.Expected == nil {
			return fmt.Errorf("step %d: a step without an action needs expected_state", i+1)
		}
		if c := s.Expected; c != nil {
			if err := c.validate(); err != nil {
				return fmt.Errorf("step %d: expected_state: %w", i+1, err)
			}
		}
	}
	return nil
}

// bindPlan decodes every call of steps again through space: a plan built
// in Go (the rule planner's) is validated as a model's is, and runs the
// device's own declaration of each action (a space may replace one).
func bindPlan(steps []Step, space *action.Space) error {
	for i := range steps {
		c := steps[i].Call
		if c.IsZero() {
			continue
		}
		bound, err := space.DecodeCall(c.Name(), c.ParamsJSON())
		if err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
		steps[i].Call = bound
	}
	return validatePlan(steps)
}

func (c *Check) validate() error {
	switch c.Kind {
	case Exist, NotExist, Checked, NotChecked:
		if c.Target == "" {
			return fmt.Errorf("%s needs a target", c.Kind)
		}
	case TextEquals, TextContains, NumericGreater, NumericLess:
		if c.Target == "" {
			return fmt.Errorf("%s needs a target", c.Kind)
		}
	case LayoutChanged:
	case RegionCheck:
		if len(c.Regions) == 0 {
			return fmt.Errorf("REGION needs regions")
		}
	default:
		return fmt.Errorf("unknown kind %q", c.Kind)
	}
	return nil
}

// numberOK reports whether NUMERIC_* has a number to compare with.
func numberOK(s string) bool {
	_, ok := scene.FirstNumber(s)
	return ok
}
