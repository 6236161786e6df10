package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/script"
)

// compile turns a script step into the engine's step: an action call of
// the space, an expectation, or (for what is not an action: shell
// commands, queries, the AI runtime) a custom step the engine still
// observes, settles and records like any other.
func (r *run) compile(st script.Step) (engine.Step, error) {
	target, err := stepTarget(st)
	if err != nil {
		return engine.Step{}, err
	}
	var loc action.Locator
	if target != nil {
		loc = *target
	}
	call := func(a *action.Action, params any) (engine.Step, error) { return r.call(st, a, params) }
	if st.Kind.IsAI() && r.opts.AI != nil {
		if es, ok := r.compileAI(st); ok {
			return es, nil
		}
	}
	switch st.Kind {
	case script.Tap, script.AITap:
		return r.targeted(st, target, action.Tap, &action.TapParams{Locate: loc})
	case script.DoubleTap, script.AIDoubleClick:
		return r.targeted(st, target, action.DoubleTap, &action.TapParams{Locate: loc})
	case script.LongPress, script.AILongPress:
		return r.targeted(st, target, action.LongPress, &action.LongPressParams{Locate: loc, Duration: int(st.Duration.Milliseconds())})
	case script.Input, script.AIInput:
		return r.targeted(st, target, action.Input, &action.InputParams{Value: st.Value, Locate: target, Mode: st.Mode})
	case script.AIKeyboardPress, script.PressKey:
		return r.targeted(st, target, action.KeyboardPress, &action.KeyboardPressParams{KeyName: st.Value, Locate: target})
	case script.AIScroll:
		return r.scroll(st, target)
	case script.ScrollUntilVisible:
		return call(action.Scroll, &action.ScrollParams{Direction: st.Scroll.Direction, UntilVisible: &loc, MaxScrolls: st.Scroll.MaxSwipes})
	case script.SwipeStep:
		return engine.Step{Custom: func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
			return r.swipe(ctx, s, rec, st)
		}}, nil
	case script.Launch:
		return call(action.Launch, &action.AppParams{App: st.Value})
	case script.Terminate:
		return call(action.Terminate, &action.AppParams{App: st.Value})
	case script.Back:
		return call(action.Back, nil)
	case script.Home:
		return call(action.Home, nil)
	case script.Action:
		c, err := r.space.DecodeCall(st.Key, st.Params)
		return engine.Step{Call: c, Optional: st.Optional, FindTimeout: st.Timeout}, err
	case script.Sleep:
		return call(action.Sleep, &action.SleepParams{Ms: int(st.Duration.Milliseconds())})
	case script.WaitFor:
		kind := check.Exists
		if st.Mode == "gone" {
			kind = check.NotExists
		}
		timeout := st.Timeout
		if timeout <= 0 {
			timeout = r.opts.WaitTimeout
		}
		return engine.Step{Expect: &check.Check{Kind: kind, Target: loc}, ExpectTimeout: timeout}, nil
	case script.AssertStep:
		c, err := assertCheck(st.Assert, loc)
		msg := st.Assert.Message
		if msg == "" && err == nil {
			msg = c.String()
		}
		return engine.Step{Expect: c, ExpectTimeout: st.Timeout, Message: "assertion failed: " + msg}, err
	case script.Read:
		return engine.Step{Custom: func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
			return r.read(ctx, s, rec, st, loc)
		}}, nil
	case script.AILocate:
		return engine.Step{Custom: func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
			return r.aiLocate(ctx, s, rec, st)
		}}, nil
	case script.LogScreenshot:
		return engine.Step{Custom: func(_ context.Context, _ *engine.Session, rec *engine.Record) error {
			rec.Result = map[string]string{"title": st.Prompt, "content": st.Value}
			return nil
		}}, nil
	case script.RunAdbShell:
		return engine.Step{Custom: func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
			err := shell(ctx, s, rec, st)
			if st.Name != "" && err == nil {
				r.outputs[st.Name] = rec.Result.(map[string]string)["output"] // Midscene's named runAdbShell result
			}
			return err
		}}, nil
	case script.RunWdaRequest:
		return engine.Step{Custom: func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
			return wdaRequest(ctx, s, rec, st)
		}}, nil
	case script.AIHover, script.AIRightClick, script.JavaScript:
		return engine.Step{}, fmt.Errorf("%s is for web pages; phones have no hover, right click or page JavaScript: %w", st.Key, device.ErrUnsupported)
	}
	if st.Kind.NeedsModel() {
		return engine.Step{}, needsModel(st, nil)
	}
	return engine.Step{}, fmt.Errorf("step kind %s is not runnable", st.Kind)
}

// call is a step running action a of the space with params built here.
func (r *run) call(st script.Step, a *action.Action, params any) (engine.Step, error) {
	if _, ok := r.space.Lookup(a.Name()); !ok {
		return engine.Step{}, fmt.Errorf("%s is not available on %s devices: %w", a.Name(), r.space.Platform(), device.ErrUnsupported)
	}
	c, err := a.NewCall(params)
	return engine.Step{Call: c, Optional: st.Optional, FindTimeout: st.Timeout}, err
}

// targeted is a call whose target the locator rules may not find: an ai*
// step written as a description (aiTap: the blue button) then needs a
// model, and says so. target is the step's decoded target, nil when none.
func (r *run) targeted(st script.Step, target *action.Locator, a *action.Action, params any) (engine.Step, error) {
	es, err := r.call(st, a, params)
	if err != nil || !st.Kind.IsAI() {
		return es, err
	}
	r.lookOnceOffline(&es)
	return engine.Step{Optional: es.Optional, Custom: func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
		err := s.Act(ctx, rec, nil, es)
		if !errors.Is(err, locate.ErrNoRule) || r.offline() {
			return needsModelIfNoRule(st, err)
		}
		goal, ok := targetedGoal(st, target)
		if !ok {
			return needsModelIfNoRule(st, err)
		}
		return r.aiAct(ctx, s, rec, st, goal)
	}}, nil
}

// stepTarget decodes a step's target into the locator its action takes,
// strictly (the loader writes only valid targets; a step built in Go may
// not); nil when the step names no element.
func stepTarget(st script.Step) (*action.Locator, error) {
	if len(st.Target) == 0 {
		return nil, nil
	}
	var l action.Locator
	if err := json.Unmarshal(st.Target, &l); err != nil {
		return nil, fmt.Errorf("%s: %s target %s: %w; write the element as text or as {text, id, desc, type, index, prompt}", posString(st.Pos), st.Key, st.Target, err)
	}
	return &l, nil
}

// needsModel is the error of a step only a model can run; why, when set,
// is the reason (the runtime's own error, wrapping agent.ErrNeedsModel).
func needsModel(st script.Step, why error) error {
	if why == nil {
		why = agent.ErrNeedsModel
	} else if !errors.Is(why, agent.ErrNeedsModel) {
		why = fmt.Errorf("%w: %w", agent.ErrNeedsModel, why)
	}
	return fmt.Errorf("%s %q: %w; configure one (APEX_MODEL_NAME, APEX_MODEL_BASE_URL and APEX_MODEL_API_KEY, or a model: section in apex.yaml), or write it as a deterministic step (tap, input, assert, waitFor with text, id or desc)",
		st.Key, truncate(st.Prompt+targetString(st.Target), 80), why)
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
