package agent

import (
	"fmt"

	"github.com/apexagent/apex/check"
)

// MaxSteps bounds a plan: a goal that needs more is split by the caller.
const MaxSteps = 15

// Step actions a plan may use. The executor maps each to one call of the
// action space.
const (
	ActTap       = "tap"
	ActDoubleTap = "doubletap"
	ActLongPress = "longpress"
	ActInput     = "input"
	ActPress     = "press"  // a key, Value names it
	ActScroll    = "scroll" // Value is the direction; Target, when set, scrolls until it shows
	ActBack      = "back"
	ActHome      = "home"
	ActLaunch    = "launch" // Target is a package, or a launcher label
	ActWait      = "wait"   // Target: wait until it shows; else Value milliseconds
	ActCheck     = "check"  // only validates Expected
)

// Step is one step of a plan: {step_id, action, target_text, expected_state}.
type Step struct {
	ID       int          `json:"step_id"`
	Action   string       `json:"action"`
	Target   string       `json:"target_text,omitempty"`
	Value    string       `json:"value,omitempty"`
	Expected *check.Check `json:"expected_state,omitempty"`
	// Sentence is the goal text the step came from (rule planner).
	Sentence string `json:"sentence,omitempty"`
}

// validate checks a plan from a planner (rules or a model).
func validatePlan(steps []Step) error {
	if len(steps) == 0 {
		return fmt.Errorf("the plan has no steps")
	}
	if len(steps) > MaxSteps {
		return fmt.Errorf("the plan has %d steps; at most %d are allowed: split the goal", len(steps), MaxSteps)
	}
	for i, s := range steps {
		switch s.Action {
		case ActTap, ActDoubleTap, ActLongPress:
			if s.Target == "" {
				return fmt.Errorf("step %d: %s needs target_text", i+1, s.Action)
			}
		case ActInput, ActPress, ActScroll, ActBack, ActHome, ActWait:
		case ActLaunch:
			if s.Target == "" {
				return fmt.Errorf("step %d: launch needs the app in target_text", i+1)
			}
		case ActCheck:
			if s.Expected == nil {
				return fmt.Errorf("step %d: check needs expected_state", i+1)
			}
		default:
			return fmt.Errorf("step %d: unknown action %q (use tap, doubletap, longpress, input, press, scroll, back, home, launch, wait, check)", i+1, s.Action)
		}
		if c := s.Expected; c != nil {
			if err := c.Validate(); err != nil {
				return fmt.Errorf("step %d: expected_state: %w", i+1, err)
			}
		}
	}
	return nil
}
