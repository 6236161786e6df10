package agent

import (
	"fmt"
	"strings"

	"github.com/apexagent/apex/scene"
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

// Step is one step of a plan: {step_id, action, target_text, expected_state}.
type Step struct {
	ID       int    `json:"step_id"`
	Action   string `json:"action"`
	Target   string `json:"target_text,omitempty"`
	Value    string `json:"value,omitempty"`
	Expected *Check `json:"expected_state,omitempty"`
	// Sentence is the goal text the step came from (rule planner).
	Sentence string `json:"sentence,omitempty"`
}

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
			if err := c.validate(); err != nil {
				return fmt.Errorf("step %d: expected_state: %w", i+1, err)
			}
		}
	}
	return nil
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
