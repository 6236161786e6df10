package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/script"
)

// assertCheck is an assert step's check.
func assertCheck(a *script.Assert, loc action.Locator) (*check.Check, error) {
	c := &check.Check{Kind: check.ParseKind(a.Op), Target: loc, Text: a.Text, Number: a.Number}
	return c, c.Validate()
}

// needsModelIfNoRule says a targeted ai step needs a model when no
// locator rule matched its description.
func needsModelIfNoRule(st script.Step, err error) error {
	if errors.Is(err, locate.ErrNoRule) {
		return needsModel(st, errors.New("locator rules found no visible text, id or description matching it"))
	}
	return err
}

// find waits for the step's element (up to its timeout, else the run's)
// and returns it as found; the screen it was found on is rec.Before.
// ferr is why it was not found.
func (r *run) find(ctx context.Context, s *engine.Session, rec *engine.Record, st script.Step, loc action.Locator) (e scene.Element, ferr, err error) {
	timeout := r.opts.FindTimeout
	if st.Timeout > 0 {
		timeout = st.Timeout
	}
	seen, ferr, err := s.Find(ctx, rec.Before, []action.Locator{loc}, timeout, st.Timeout > 0)
	rec.Before = seen
	if err != nil || ferr != nil {
		return e, ferr, err
	}
	e, _ = locate.Find(seen.Scene, loc)
	rec.Element = &e
	return e, nil, nil
}

// aiLocate finds an element by rules and stores it under the step's name.
func (r *run) aiLocate(ctx context.Context, s *engine.Session, rec *engine.Record, st script.Step) error {
	e, ferr, err := r.find(ctx, s, rec, st, action.Locator{Prompt: st.Prompt})
	if err != nil {
		return err
	}
	if ferr != nil {
		return needsModelIfNoRule(st, ferr)
	}
	x, y := e.Bounds.Center()
	v := map[string]any{"id": e.ID, "type": e.Type, "text": e.Text, "desc": e.Desc, "bounds": e.Bounds, "center": device.Point{X: x, Y: y}}
	rec.Point, rec.Result = &device.Point{X: x, Y: y}, v
	name := st.Name
	if name == "" {
		name = st.Prompt
	}
	r.outputs[name] = v
	return nil
}

// read finds an element and stores the text it shows (read from its
// pixels when the tree gives none) under the step's as: name.
func (r *run) read(ctx context.Context, s *engine.Session, rec *engine.Record, st script.Step, loc action.Locator) error {
	e, ferr, err := r.find(ctx, s, rec, st, loc)
	if err != nil {
		return err
	}
	if ferr != nil {
		return ferr
	}
	text := e.Text
	if text == "" && s.Perceiver().Mode() != perceive.Off {
		if text, err = s.Perceiver().RegionText(ctx, rec.Before, e); err != nil {
			return fmt.Errorf("%s has no text in the UI tree, and reading its pixels failed: %w", loc, err)
		}
	}
	rec.Result = map[string]any{"name": st.As, "value": text}
	r.outputs[st.As] = text
	return nil
}

// scroll runs aiScroll: one Scroll, or Scrolls until the screen stops
// changing for scrollToBottom and the like.
func (r *run) scroll(st script.Step, target *action.Locator) (engine.Step, error) {
	sc := st.Scroll
	p := &action.ScrollParams{Direction: sc.Direction, Locate: target}
	if sc.Distance > 0 {
		p.Distance = action.Distance{Pixels: sc.Distance}
	}
	if sc.Type != "once" {
		p.Direction = map[string]string{"untilBottom": "down", "untilTop": "up", "untilLeft": "left", "untilRight": "right"}[sc.Type]
	}
	call, err := action.Scroll.NewCall(p)
	if err != nil || sc.Type == "once" {
		return engine.Step{Call: call, FindTimeout: st.Timeout}, err
	}
	return engine.Step{Custom: func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
		for i := 0; i < action.MaxScrolls; i++ {
			from := rec.After
			if from == nil {
				from = rec.Before
			}
			if err := s.Act(ctx, rec, from, engine.Step{Call: call.Clone(), FindTimeout: st.Timeout}); err != nil {
				return err
			}
			next, err := s.Settle(ctx)
			if err != nil {
				return err
			}
			rec.After = next
			if next.FP == from.FP {
				return nil
			}
		}
		return nil
	}}, nil
}

// swipe runs swipe: a direction across the middle of the screen, or points.
func (r *run) swipe(ctx context.Context, s *engine.Session, rec *engine.Record, st script.Step) error {
	sw := st.Swipe
	from, to := sw.From, sw.To
	if sw.Direction != "" {
		w, h := rec.Before.Scene.Width, rec.Before.Scene.Height
		if w == 0 || h == 0 {
			info, err := s.Driver().Info(ctx)
			if err != nil {
				return fmt.Errorf("read the screen size: %w", err)
			}
			w, h = info.Width, info.Height
		}
		cx, cy := w/2, h/2
		dx, dy := w*3/10, h*3/10
		switch sw.Direction {
		case "up":
			from, to = [2]int{cx, cy + dy}, [2]int{cx, cy - dy}
		case "down":
			from, to = [2]int{cx, cy - dy}, [2]int{cx, cy + dy}
		case "left":
			from, to = [2]int{cx + dx, cy}, [2]int{cx - dx, cy}
		case "right":
			from, to = [2]int{cx - dx, cy}, [2]int{cx + dx, cy}
		}
	}
	call, err := action.Swipe.NewCall(&action.SwipeParams{Start: &device.Point{X: from[0], Y: from[1]}, End: &device.Point{X: to[0], Y: to[1]},
		Duration: int(st.Duration.Milliseconds())})
	if err != nil {
		return err
	}
	return s.Act(ctx, rec, nil, engine.Step{Call: call})
}
