package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/script"
)

// waitFor waits until the target shows (or, with gone, disappears).
func (r *run) waitFor(ctx context.Context, st script.Step, before *screen, out *outcome) error {
	loc := toLocator(st.Locator)
	timeout := st.Timeout
	if timeout <= 0 {
		timeout = r.opts.WaitTimeout
	}
	gone := st.Mode == "gone"
	var last error
	seen, ok, err := r.poll(ctx, before, timeout, func(s *screen) bool {
		_, last = locate.Find(s.Scene, loc)
		present := last == nil || !errors.Is(last, action.ErrNotFound)
		return present != gone
	})
	out.seen = seen
	if err != nil {
		return err
	}
	if ok {
		if e, err := locate.Find(seen.Scene, loc); err == nil {
			out.result = map[string]any{"element": e}
		}
		return nil
	}
	if gone {
		return fmt.Errorf("%s is still on screen after %v", loc, timeout)
	}
	return fmt.Errorf("%s did not appear within %v: %w", loc, timeout, last)
}

// assert checks a condition on the settled screen, re-checking for up to
// AssertTimeout (or the step's timeout) before failing. It passes on firm
// evidence only: a text equal only ignoring case, or a target matched by
// loose words, is not enough for a script.
func (r *run) assert(ctx context.Context, st script.Step, before *screen, out *outcome) error {
	a := st.Assert
	c := check.Check{Kind: check.ParseKind(a.Op), Target: toLocator(st.Locator), Text: a.Text, Number: a.Number}
	timeout := r.opts.AssertTimeout
	if st.Timeout > 0 {
		timeout = st.Timeout
	}
	var res check.Result
	seen, ok, err := r.poll(ctx, before, timeout, func(s *screen) bool {
		res = r.checkOn(ctx, s, c)
		return res.Holds()
	})
	out.seen = seen
	out.result = map[string]any{"check": a.Op, "actual": res.Actual}
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	if a.Message != "" {
		return fmt.Errorf("assertion failed: %s (%s)", a.Message, res.Evidence)
	}
	return fmt.Errorf("assertion failed: %s", res.Evidence)
}

// aiLocate finds an element by rules and stores it under the step's name.
func (r *run) aiLocate(ctx context.Context, st script.Step, before *screen, out *outcome) error {
	loc := action.Locator{Prompt: st.Prompt}
	seen, err := r.find(ctx, script.Step{Kind: st.Kind, Key: st.Key, Prompt: st.Prompt, Timeout: st.Timeout}, before, loc)
	out.seen = seen
	if err != nil {
		return err
	}
	e, _ := locate.Find(seen.Scene, loc)
	x, y := e.Bounds.Center()
	v := map[string]any{"id": e.ID, "type": e.Type, "text": e.Text, "desc": e.Desc, "bounds": e.Bounds, "center": device.Point{X: x, Y: y}}
	out.point = &device.Point{X: x, Y: y}
	out.result = v
	name := st.Name
	if name == "" {
		name = st.Prompt
	}
	r.outputs[name] = v
	return nil
}

// scroll runs aiScroll: one Scroll, or Scrolls until the screen stops
// changing for scrollToBottom and the like.
func (r *run) scroll(ctx context.Context, st script.Step, before *screen, out *outcome) error {
	sc := st.Scroll
	p := map[string]any{"direction": sc.Direction}
	if sc.Distance > 0 {
		p["distance"] = sc.Distance
	}
	on := before
	if st.Locator != nil {
		seen, err := r.find(ctx, st, before, toLocator(st.Locator))
		out.seen = seen
		if err != nil {
			return err
		}
		on = seen
		p["locate"] = toLocator(st.Locator)
	}
	if sc.Type == "once" {
		return r.runAction(ctx, out, "Scroll", p, on)
	}
	p["direction"] = map[string]string{"untilBottom": "down", "untilTop": "up", "untilLeft": "left", "untilRight": "right"}[sc.Type]
	for i := 0; i < action.MaxScrolls; i++ {
		if err := r.runAction(ctx, out, "Scroll", p, on); err != nil {
			return err
		}
		next, err := r.settle(ctx)
		if err != nil {
			return err
		}
		out.after = next
		if next.FP == on.FP {
			return nil
		}
		on = next
	}
	return nil
}

// scrollUntilVisible scrolls by half screens until the target shows,
// settling after each swipe.
func (r *run) scrollUntilVisible(ctx context.Context, st script.Step, before *screen, out *outcome) error {
	loc := toLocator(st.Locator)
	cur := before
	for swipes := 0; ; swipes++ {
		e, err := locate.Find(cur.Scene, loc)
		if err == nil {
			x, y := e.Bounds.Center()
			out.point = &device.Point{X: x, Y: y}
			out.result = map[string]any{"element": e, "swipes": swipes}
			if cur != before {
				out.seen, out.after = cur, cur
			}
			return nil
		}
		if !errors.Is(err, action.ErrNotFound) {
			return err
		}
		if swipes == st.Scroll.MaxSwipes {
			return fmt.Errorf("%s still not visible after %d scrolls %s: %w", loc, swipes, st.Scroll.Direction, err)
		}
		if err := r.runAction(ctx, out, "Scroll", map[string]any{"direction": st.Scroll.Direction, "distance": "half"}, cur); err != nil {
			return err
		}
		next, err := r.settle(ctx)
		if err != nil {
			return err
		}
		if err := r.shoot(ctx, next); err != nil {
			return err
		}
		cur = next
	}
}

// swipe runs swipe: a direction across the middle of the screen, or points.
func (r *run) swipe(ctx context.Context, st script.Step, before *screen, out *outcome) error {
	sw := st.Swipe
	from, to := sw.From, sw.To
	if sw.Direction != "" {
		w, h := before.Scene.Width, before.Scene.Height
		if w == 0 || h == 0 {
			info, err := r.drv.Info(ctx)
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
	p := map[string]any{"start": device.Point{X: from[0], Y: from[1]}, "end": device.Point{X: to[0], Y: to[1]}}
	if st.Duration > 0 {
		p["duration"] = st.Duration.Milliseconds()
	}
	return r.runAction(ctx, out, "Swipe", p, before)
}

func (r *run) shell(ctx context.Context, st script.Step, out *outcome) error {
	sh, ok := r.raw.(Sheller)
	if !ok {
		return errNoShell
	}
	out.acted = true
	res, err := timedCall(r.timed, func() (string, error) { return sh.Shell(ctx, st.Value) })
	out.result = map[string]string{"command": st.Value, "output": res}
	if err != nil {
		return fmt.Errorf("adb shell %q: %w", st.Value, err)
	}
	return nil
}

func (r *run) wdaRequest(ctx context.Context, st script.Step, out *outcome) error {
	wr, ok := r.raw.(WDARequester)
	if !ok {
		return fmt.Errorf("runWdaRequest needs an iPhone driven over WebDriverAgent: %w", device.ErrUnsupported)
	}
	out.acted = true
	res, err := timedCall(r.timed, func() ([]byte, error) { return wr.WDARequest(ctx, st.Method, st.Endpoint, st.Params) })
	out.result = map[string]string{"method": st.Method, "endpoint": st.Endpoint, "response": string(res)}
	if err != nil {
		return fmt.Errorf("WDA %s %s: %w", st.Method, st.Endpoint, err)
	}
	return nil
}
