package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/script"
)

// execRules runs one step against the screen it starts from, by rules.
func (r *run) execRules(ctx context.Context, st script.Step, before *screen, out *outcome) error {
	switch st.Kind {
	case script.Tap, script.AITap:
		return r.act(ctx, st, before, out, "Tap", map[string]any{})
	case script.DoubleTap, script.AIDoubleClick:
		return r.act(ctx, st, before, out, "DoubleTap", map[string]any{})
	case script.LongPress, script.AILongPress:
		p := map[string]any{}
		if st.Duration > 0 {
			p["duration"] = st.Duration.Milliseconds()
		}
		return r.act(ctx, st, before, out, "LongPress", p)
	case script.Input, script.AIInput:
		return r.act(ctx, st, before, out, "Input", map[string]any{"value": st.Value, "mode": st.Mode})
	case script.AIKeyboardPress, script.PressKey:
		p := map[string]any{"keyName": st.Value}
		if st.Locator == nil {
			return r.runAction(ctx, out, "KeyboardPress", p, before)
		}
		return r.act(ctx, st, before, out, "KeyboardPress", p)
	case script.AIScroll:
		return r.scroll(ctx, st, before, out)
	case script.ScrollUntilVisible:
		return r.scrollUntilVisible(ctx, st, before, out)
	case script.SwipeStep:
		return r.swipe(ctx, st, before, out)
	case script.Launch:
		return r.runAction(ctx, out, "Launch", map[string]any{"app": st.Value}, before)
	case script.Terminate:
		return r.runAction(ctx, out, "Terminate", map[string]any{"app": st.Value}, before)
	case script.Back:
		return r.runAction(ctx, out, "Back", map[string]any{}, before)
	case script.Home:
		return r.runAction(ctx, out, "Home", map[string]any{}, before)
	case script.Action:
		a, ok := r.space.Lookup(st.Key)
		if !ok {
			return fmt.Errorf("%s is not an action on %s devices: use one of %v", st.Key, r.space.Platform(), r.space.Names())
		}
		return r.runRaw(ctx, out, a, st.Params, before)
	case script.Sleep:
		out.acted = true // the screen may change while waiting
		return wait(ctx, st.Duration)
	case script.WaitFor:
		return r.waitFor(ctx, st, before, out)
	case script.AssertStep:
		return r.assert(ctx, st, before, out)
	case script.AILocate:
		return r.aiLocate(ctx, st, before, out)
	case script.LogScreenshot:
		out.result = map[string]string{"title": st.Prompt, "content": st.Value}
		return nil
	case script.RunAdbShell:
		return r.shell(ctx, st, out)
	case script.RunWdaRequest:
		return r.wdaRequest(ctx, st, out)
	case script.AIHover, script.AIRightClick, script.JavaScript:
		return fmt.Errorf("%s is for web pages; phones have no hover, right click or page JavaScript: %w", st.Key, device.ErrUnsupported)
	}
	if st.Kind.NeedsModel() {
		return needsModel(st, "")
	}
	return fmt.Errorf("step kind %s is not runnable", st.Kind)
}

// needsModel is the error of a step only a model can run.
func needsModel(st script.Step, why string) error {
	if why != "" {
		why = ": " + why
	}
	return fmt.Errorf("%s %q %w%s; configure one (APEX_MODEL_NAME, APEX_MODEL_BASE_URL and APEX_MODEL_API_KEY, or a model: section in apex.yaml), or write it as a deterministic step (tap, input, assert, waitFor with text, id or desc)",
		st.Key, truncate(st.Prompt+locPrompt(st.Locator), 80), ErrNeedsModel, why)
}

func locPrompt(l *script.Locator) string {
	if l == nil {
		return ""
	}
	return l.String()
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// act runs a locator action: it waits for the target to appear (bounded),
// then runs the action with a resolver over the screen where it was found.
func (r *run) act(ctx context.Context, st script.Step, before *screen, out *outcome, name string, params map[string]any) error {
	loc := toLocator(st.Locator)
	seen, err := r.find(ctx, st, before, loc)
	out.seen = seen
	if err != nil {
		if st.Optional && errors.Is(err, action.ErrNotFound) {
			out.skipped = "optional: " + err.Error()
			return nil
		}
		return err
	}
	params["locate"] = loc
	return r.runAction(ctx, out, name, params, seen)
}

// find waits until loc resolves on the screen. Only "not found" keeps it
// waiting; ambiguity fails at once. Optional steps look once, unless they
// set a timeout.
func (r *run) find(ctx context.Context, st script.Step, before *screen, loc action.Locator) (*screen, error) {
	timeout := r.opts.FindTimeout
	if st.Optional {
		timeout = 0
	}
	if st.Timeout > 0 {
		timeout = st.Timeout
	}
	var ferr error
	seen, _, err := r.poll(ctx, before, timeout, func(s *screen) bool {
		_, ferr = locate.Find(s.Scene, loc)
		return ferr == nil || !errors.Is(ferr, action.ErrNotFound)
	})
	if err != nil {
		return seen, err
	}
	if ferr != nil && errors.Is(ferr, action.ErrNotFound) && !st.Optional && r.readAll(ctx, seen) {
		_, ferr = locate.Find(seen.Scene, loc)
	}
	if ferr != nil && st.Kind.IsAI() && errors.Is(ferr, locate.ErrNoRule) {
		return seen, needsModel(st, "locator rules found no visible text, id or description matching it")
	}
	return seen, ferr
}

// runAction runs an action of the space by name with params built here.
func (r *run) runAction(ctx context.Context, out *outcome, name string, params map[string]any, on *screen) error {
	a, ok := r.space.Lookup(name)
	if !ok {
		return fmt.Errorf("%s is not available on %s devices: %w", name, r.space.Platform(), device.ErrUnsupported)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("%s: encode params: %w", name, err)
	}
	return r.runRaw(ctx, out, a, raw, on)
}

// runRaw runs an action with JSON params, resolving its locators over the
// screen on (first use) and fresh observations after.
func (r *run) runRaw(ctx context.Context, out *outcome, a *action.Action, raw json.RawMessage, on *screen) error {
	out.action, out.params, out.acted = a.Name(), raw, true
	r.actedOn(on)
	res := &recordingResolver{live: &locate.Live{Scene: on.Scene, Observe: func(ctx context.Context) (*scene.Scene, error) {
		s, err := r.observe(ctx)
		if err == nil {
			err = r.perceive(ctx, s)
		}
		if err != nil {
			return nil, err
		}
		return s.Scene, nil
	}}}
	env := &action.Env{Driver: r.drv, Resolver: res, Log: r.log}
	err := a.Run(ctx, env, raw)
	if res.first != nil {
		p := res.first.Point
		out.point = &p
		if out.result == nil && res.first.Element != nil {
			out.result = map[string]any{"element": res.first.Element}
		}
	}
	return err
}

// recordingResolver remembers the first target found, for the record's
// touched point.
type recordingResolver struct {
	live  *locate.Live
	first *action.Target
}

func (rr *recordingResolver) Resolve(ctx context.Context, l action.Locator) (action.Target, error) {
	t, err := rr.live.Resolve(ctx, l)
	if err == nil && rr.first == nil {
		rr.first = &t
	}
	return t, err
}

func toLocator(l *script.Locator) action.Locator {
	if l == nil {
		return action.Locator{}
	}
	return action.Locator{Prompt: l.Prompt, Text: l.Text, ID: l.ID, Desc: l.Desc, Type: l.Type, Index: l.Index}
}

// wait blocks for d or until ctx is done.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sleep of %v interrupted: %w", d, ctx.Err())
	}
}
