package agent

import (
	"context"
	"time"

	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/scene"
)

// promptBudget is the byte budget of the Scene text in model prompts; with
// the rest of a prompt it keeps a step under 1,500 tokens.
const promptBudget = 2600

// observer reads the screen as a Scene: the UI source, parsed and pruned,
// fused with OCR of the screenshot when the tree cannot be trusted (package
// perceive); never raw XML or pixels for anyone else.
type observer struct {
	p        *perceive.Perceiver
	interval time.Duration // between observations while settling
	timeout  time.Duration // settle bound
	last     *perceive.Screen
}

// observe reads the screen once, with OCR fused in when the tree cannot be
// trusted.
func (o *observer) observe(ctx context.Context) (*scene.Scene, error) {
	s, err := o.p.Observe(ctx)
	if err != nil {
		return nil, err
	}
	return o.perceived(ctx, s)
}

// perceived fuses OCR into s when needed and makes it the last screen. A
// failed screenshot leaves the tree alone: it is still a Scene.
func (o *observer) perceived(ctx context.Context, s *perceive.Screen) (*scene.Scene, error) {
	if err := o.p.Perceive(ctx, s); err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	o.last = s
	return s.Scene, nil
}

// acted tells the perceiver an action is about to change the last screen,
// so a tree that does not change after it is suspected of being stale.
func (o *observer) acted() {
	if o.last != nil {
		o.p.ActedOn(o.last)
	}
}

// readAll reads the whole screenshot of the screen sc came from, once,
// and returns the Scene with what it read; false when sc is not the last
// screen, it was read already, or OCR cannot run.
func (o *observer) readAll(ctx context.Context, sc *scene.Scene) (*scene.Scene, bool) {
	if o.last == nil || o.last.Scene != sc || !o.p.ReadAll(ctx, o.last) {
		return nil, false
	}
	return o.last.Scene, true
}

// settle observes until two observations in a row have the same
// fingerprint, or the timeout passes (then the last is used); only the
// screen it settles on is perceived.
func (o *observer) settle(ctx context.Context) (*scene.Scene, error) {
	prev, err := o.p.Observe(ctx)
	if err != nil {
		return nil, err
	}
	deadline := time.NewTimer(o.timeout)
	defer deadline.Stop()
	tick := time.NewTicker(o.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return o.perceived(ctx, prev)
		case <-tick.C:
		}
		cur, err := o.p.Observe(ctx)
		if err != nil {
			return nil, err
		}
		if cur.FP == prev.FP {
			return o.perceived(ctx, cur)
		}
		prev = cur
	}
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
