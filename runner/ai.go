package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/script"
)

// compileAI compiles the steps only the AI runtime runs: aiAct, aiAssert,
// aiWaitFor and the queries. Targeted steps (aiTap, …) try the locator
// rules first (targeted); other ai* steps are deterministic.
func (r *run) compileAI(st script.Step) (engine.Step, bool) {
	custom := func(f func(ctx context.Context, s *engine.Session, rec *engine.Record) error) (engine.Step, bool) {
		return engine.Step{Custom: f}, true
	}
	switch st.Kind {
	case script.AIAct:
		return custom(func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
			return r.aiAct(ctx, s, rec, st, st.Prompt)
		})
	case script.AIAssert:
		return custom(func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
			return r.aiAssert(ctx, s, rec, st)
		})
	case script.AIWaitFor:
		return custom(func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
			return r.aiWaitFor(ctx, s, rec, st)
		})
	case script.AIQuery, script.AIAsk:
		return custom(func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
			return r.aiQuery(ctx, s, rec, st, agent.QueryAny)
		})
	case script.AIBoolean:
		return custom(func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
			return r.aiQuery(ctx, s, rec, st, agent.QueryBoolean)
		})
	case script.AINumber:
		return custom(func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
			return r.aiQuery(ctx, s, rec, st, agent.QueryNumber)
		})
	case script.AIString:
		return custom(func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
			return r.aiQuery(ctx, s, rec, st, agent.QueryString)
		})
	}
	return engine.Step{}, false
}

// offline reports whether no model serves the run's ai* steps.
func (r *run) offline() bool { return r.opts.AI == nil || r.opts.AI.Offline() }

// lookOnceOffline makes a targeted ai* step (aiTap: the blue button) look
// for its target once, on the settled screen, when no model is
// configured: waiting the find timeout cannot make the locator rules read
// a description, so the step fails at once, saying which model settings
// would resolve it. With a model, the rules look as long as any step.
func (r *run) lookOnceOffline(es *engine.Step) {
	if r.offline() && es.FindTimeout == 0 {
		es.FindTimeout = time.Nanosecond // one look: Poll checks the first screen before it waits
	}
}

// targetedGoal writes a targeted ai step as a controlled-language goal, so
// the runtime's executor resolves its target (l, nil when none) with the
// model.
func targetedGoal(st script.Step, l *action.Locator) (string, bool) {
	target := st.Prompt
	if l != nil && target == "" {
		target = l.Prompt
		if target == "" {
			target = l.Text + l.Desc
		}
	}
	if target == "" {
		return "", false
	}
	q := func(s string) string {
		if strings.Contains(s, `"`) {
			return "“" + s + "”"
		}
		return `"` + s + `"`
	}
	switch st.Kind {
	case script.AITap:
		return "tap " + q(target), true
	case script.AIDoubleClick:
		return "double tap " + q(target), true
	case script.AILongPress:
		return "long press " + q(target), true
	case script.AIInput:
		if st.Mode == "clear" {
			return "", false
		}
		return "type " + q(st.Value) + " into " + q(target), true
	}
	return "", false
}

func (r *run) task(s *engine.Session, goal string) agent.Task {
	return agent.Task{Goal: goal, Driver: s.Raw(), DeviceID: r.opts.Device, Space: r.space, Store: r.store, RunID: r.runID,
		Steps: r.store.StepRecorder(r.runID)}
}

// aiErr says what to configure when the runtime could not go on without
// a model.
func aiErr(st script.Step, err error) error {
	if errors.Is(err, agent.ErrNeedsModel) {
		return needsModel(st, err)
	}
	return err
}

// aiAct hands a goal to the AI runtime. The runtime drives the device
// itself, so the step's screen is observed again after it.
func (r *run) aiAct(ctx context.Context, s *engine.Session, rec *engine.Record, st script.Step, goal string) error {
	rec.Acted, rec.Action = true, "agent"
	res, err := r.opts.AI.Act(ctx, r.task(s, goal))
	if res != nil {
		rec.Result = map[string]any{"task_id": res.TaskID, "status": res.Status, "summary": res.Summary, "steps": res.Steps}
	}
	if err != nil {
		return aiErr(st, err)
	}
	if res.Status != agent.Done {
		return fmt.Errorf("%s %q: %s: %s", st.Key, truncate(goal, 80), res.Status, res.Reason)
	}
	return nil
}

func (r *run) aiAssert(ctx context.Context, s *engine.Session, rec *engine.Record, st script.Step) error {
	v, err := r.opts.AI.Assert(ctx, r.task(s, st.Prompt))
	if err != nil {
		return aiErr(st, err)
	}
	rec.Result = v
	return verdictErr(st, v)
}

func verdictErr(st script.Step, v *agent.Verdict) error {
	msg := st.ErrorMessage
	if msg == "" {
		msg = st.Prompt
	}
	switch {
	case v.Review:
		return fmt.Errorf("assertion %q needs a person to review (confidence %.2f): %s", msg, v.Confidence, v.Evidence)
	case !v.Pass:
		return fmt.Errorf("assertion failed: %s (%s)", msg, v.Evidence)
	}
	return nil
}

// aiWaitFor re-checks the assertion until it holds or the timeout ends.
func (r *run) aiWaitFor(ctx context.Context, s *engine.Session, rec *engine.Record, st script.Step) error {
	timeout := st.Timeout
	if timeout <= 0 {
		timeout = r.opts.WaitTimeout
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(s.Options().Perception.Timing.PollInterval)
	defer tick.Stop()
	for {
		v, err := r.opts.AI.Assert(ctx, r.task(s, st.Prompt))
		if err != nil {
			return aiErr(st, err)
		}
		rec.Result = v
		if v.Pass && !v.Review {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("%q did not come true within %v: %w", st.Prompt, timeout, verdictErr(st, v))
		case <-tick.C:
		}
	}
}

func (r *run) aiQuery(ctx context.Context, s *engine.Session, rec *engine.Record, st script.Step, kind string) error {
	ans, err := r.opts.AI.Query(ctx, r.task(s, st.Prompt), kind)
	if err != nil {
		return aiErr(st, err)
	}
	name := st.Name
	if name == "" {
		name = st.Prompt
	}
	r.outputs[name] = ans
	rec.Result = map[string]any{"name": name, "value": ans}
	return nil
}
