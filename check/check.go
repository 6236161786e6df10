// Package check is a PLACEHOLDER in the engine branch for the API another
// branch implements; it is replaced at merge.
package check

import (
	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/scene"
)

type Kind string

const (
	Exists    Kind = "exists"
	NotExists Kind = "notExists"
)

type Check struct {
	Kind   Kind           `json:"kind"`
	Target action.Locator `json:"target,omitzero"`
	Text   string         `json:"text,omitempty"`
	Number float64        `json:"number,omitempty"`
}

type Result struct {
	Pass     bool
	Quality  float64
	Evidence string
	Actual   any
	Element  *scene.Element
}

func (c Check) Eval(before, after *scene.Scene) Result {
	e, err := locate.Find(after, c.Target)
	if c.Kind == NotExists {
		return Result{Pass: err != nil, Quality: 1, Evidence: "x"}
	}
	if err != nil {
		return Result{Evidence: err.Error(), Quality: 1}
	}
	return Result{Pass: true, Quality: 1, Element: &e, Evidence: e.ID}
}

func (c Check) String() string { return string(c.Kind) + " " + c.Target.String() }
