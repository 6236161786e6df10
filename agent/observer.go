package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/scene"
)

// promptBudget is the byte budget of the Scene text in model prompts; with
// the rest of a prompt it keeps a step under 1,500 tokens.
const promptBudget = 2600

// observer reads the screen as a Scene: the UI source, parsed and pruned;
// never raw XML or pixels for anyone else.
type observer struct {
	drv      device.Driver
	opts     *scene.Options
	interval time.Duration // between observations while settling
	timeout  time.Duration // settle bound
}

func (o *observer) observe(ctx context.Context) (*scene.Scene, error) {
	src, err := o.drv.Source(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the UI source: %w", err)
	}
	sc, err := scene.FromSource(src.Data, o.opts)
	if err != nil {
		return nil, fmt.Errorf("parse the UI source (%s, %d bytes): %w", src.Format, len(src.Data), err)
	}
	return sc, nil
}

// settle observes until two observations in a row have the same
// fingerprint, or the timeout passes (then the last is returned).
func (o *observer) settle(ctx context.Context) (*scene.Scene, error) {
	prev, err := o.observe(ctx)
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
			return prev, nil
		case <-tick.C:
		}
		cur, err := o.observe(ctx)
		if err != nil {
			return nil, err
		}
		if cur.Fingerprint() == prev.Fingerprint() {
			return cur, nil
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
