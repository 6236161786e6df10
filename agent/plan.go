package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/device"
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
	Expected *check.Check
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
	Expected *check.Check    `json:"expected_state,omitempty"`
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
var knownActions = sync.OnceValue(func() *action.Space {
	return action.ForPlatform(device.Android).With(action.ForPlatform(device.IOS).Actions()...)
})

// UnmarshalJSON reads a step of a recorded plan; its action must be one of
// the built-in actions.
func (s *Step) UnmarshalJSON(data []byte) error {
	st, err := decodeStep(data, knownActions())
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
			if err := c.Validate(); err != nil {
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
