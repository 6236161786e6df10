package agent

import (
	"context"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/scene"
)

// promptBudget is the byte budget of the Scene text in model prompts; with
// the rest of a prompt it keeps a step under 1,500 tokens.
const promptBudget = 2600

// observer reads the screen as a Scene and runs the task's steps on the
// device, both through the task's step engine session: the UI source,
// parsed and pruned, fused with OCR of the screenshot when the tree cannot
// be trusted (package perceive); never raw XML or pixels for anyone else.
// Every step it runs leaves the engine's record.
type observer struct {
	s    *engine.Session
	task string // the record's task: the goal
	last *perceive.Screen
}

// observe reads the screen once, with OCR fused in when the tree cannot be
// trusted.
func (o *observer) observe(ctx context.Context) (*scene.Scene, error) {
	sc, err := o.s.Look(ctx)
	if err != nil {
		return nil, err
	}
	o.last = sc
	return sc.Scene, nil
}

// settle observes until two observations in a row have the same
// fingerprint, or the timeout passes (then the last is used).
func (o *observer) settle(ctx context.Context) (*scene.Scene, error) {
	sc, err := o.s.Settle(ctx)
	if err != nil {
		return nil, err
	}
	o.last = sc
	return sc.Scene, nil
}

// screen is the observation sc comes from, nil when sc is not the last one.
func (o *observer) screen(sc *scene.Scene) *perceive.Screen {
	if o.last != nil && o.last.Scene == sc {
		return o.last
	}
	return nil
}

// readAll reads the whole screenshot of the screen sc came from, once,
// and returns the Scene with what it read; false when sc is not the last
// screen, it was read already, or OCR cannot run.
func (o *observer) readAll(ctx context.Context, sc *scene.Scene) (*scene.Scene, bool) {
	last := o.screen(sc)
	if last == nil || !o.s.Perceiver().ReadAll(ctx, last) {
		return nil, false
	}
	return last.Scene, true
}

// run runs call as one step on the screen sc its targets were found on,
// and checks expect, when set, on the screen it settles on (re-checked for
// up to timeout; a step without a call only checks); the step is recorded
// under name. A screen the device no longer shows is not acted on
// (engine.ErrScreenChanged).
func (o *observer) run(ctx context.Context, name string, call action.Call, expect *check.Check, timeout time.Duration, sc *scene.Scene) *engine.Record {
	st := engine.Step{Call: call, Expect: expect, ExpectTimeout: timeout, Task: o.task, Name: name}
	if !call.IsZero() {
		st.On = o.screen(sc)
	}
	r := o.s.Run(ctx, st)
	if r.After != nil {
		o.last = r.After
	}
	return r
}

// distill is the page summary a model reads: the Scene's compact text
// without status- and navigation-bar elements, within budget bytes.
func distill(s *scene.Scene, budget int) string {
	if s == nil {
		return "(no screen)"
	}
	c := *s
	c.Elements = make([]scene.Element, 0, len(s.Elements))
	for _, e := range s.Elements {
		if !e.System {
			c.Elements = append(c.Elements, e)
		}
	}
	c.Budget = budget
	return c.Text()
}

// observation is the observed event's payload: enough to follow the task
// without the Scene itself.
type observation struct {
	Fingerprint string `json:"fingerprint"`
	App         string `json:"app,omitempty"`
	Elements    int    `json:"elements"`
	Bytes       int    `json:"scene_bytes"`
	Why         string `json:"why,omitempty"`
}

func observed(s *scene.Scene, why string) observation {
	return observation{Fingerprint: s.Fingerprint(), App: s.Package, Elements: len(s.Elements), Bytes: len(s.Text()), Why: why}
}
