package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/script"
)

// AI runs the steps only a model, or the agent's offline rule planner, can
// run: aiAct (ai, aiAction), aiAssert, aiWaitFor, the queries (aiQuery,
// aiBoolean, aiNumber, aiString, aiAsk), and the targeted steps (aiTap,
// aiInput, …) whose target the locator rules cannot find. *agent.Runtime
// implements it. Implementations must be safe for concurrent use.
type AI interface {
	Act(ctx context.Context, t agent.Task) (*agent.Result, error)
	Assert(ctx context.Context, t agent.Task) (*agent.Verdict, error)
	Query(ctx context.Context, t agent.Task, kind string) (any, error)
	// Offline reports that no model is configured: only goals in the
	// controlled language can run.
	Offline() bool
}

var _ AI = (*agent.Runtime)(nil)

// exec runs one step: by the AI runtime when the step needs it and one is
// configured, by rules otherwise (execRules).
func (r *run) exec(ctx context.Context, st script.Step, before *screen, out *outcome) error {
	if r.opts.AI == nil || !st.Kind.IsAI() {
		return r.execRules(ctx, st, before, out)
	}
	switch st.Kind {
	case script.AIAct:
		return r.aiAct(ctx, st, st.Prompt, out)
	case script.AIAssert:
		return r.aiAssert(ctx, st, out)
	case script.AIWaitFor:
		return r.aiWaitFor(ctx, st, out)
	case script.AIQuery, script.AIAsk:
		return r.aiQuery(ctx, st, out, agent.QueryAny)
	case script.AIBoolean:
		return r.aiQuery(ctx, st, out, agent.QueryBoolean)
	case script.AINumber:
		return r.aiQuery(ctx, st, out, agent.QueryNumber)
	case script.AIString:
		return r.aiQuery(ctx, st, out, agent.QueryString)
	}
	err := r.execRules(ctx, st, before, out)
	if !errors.Is(err, ErrNeedsModel) || r.opts.AI.Offline() {
		return err
	}
	goal, ok := targetedGoal(st)
	if !ok {
		return err
	}
	return r.aiAct(ctx, st, goal, out)
}

// targetedGoal writes a targeted ai step as a controlled-language goal, so
// the runtime's executor resolves its target with the model.
func targetedGoal(st script.Step) (string, bool) {
	target := st.Prompt
	if l := st.Locator; l != nil && target == "" {
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

func (r *run) task(goal string) agent.Task {
	return agent.Task{Goal: goal, Driver: r.raw, DeviceID: r.opts.Device, Space: r.space, Store: r.store, RunID: r.runID}
}

// aiErr keeps the needs-a-model error when the runtime could not plan the
// goal without a model.
func aiErr(st script.Step, err error) error {
	if errors.Is(err, agent.ErrNeedsModel) {
		// The runtime's reason, without its own "needs a model:" lead.
		why := err.Error()
		if _, after, ok := strings.Cut(why, agent.ErrNeedsModel.Error()+": "); ok {
			why = after
		}
		return needsModel(st, why)
	}
	return err
}

func (r *run) aiAct(ctx context.Context, st script.Step, goal string, out *outcome) error {
	out.acted = true
	res, err := r.opts.AI.Act(ctx, r.task(goal))
	if res != nil {
		out.action = "agent"
		out.result = map[string]any{"task_id": res.TaskID, "status": res.Status, "summary": res.Summary, "steps": res.Steps}
	}
	if err != nil {
		return aiErr(st, err)
	}
	if res.Status != agent.Done {
		return fmt.Errorf("%s %q: %s: %s", st.Key, truncate(goal, 80), res.Status, res.Reason)
	}
	return nil
}

func (r *run) aiAssert(ctx context.Context, st script.Step, out *outcome) error {
	v, err := r.opts.AI.Assert(ctx, r.task(st.Prompt))
	if err != nil {
		return aiErr(st, err)
	}
	out.result = v
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
func (r *run) aiWaitFor(ctx context.Context, st script.Step, out *outcome) error {
	timeout := st.Timeout
	if timeout <= 0 {
		timeout = r.opts.WaitTimeout
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(r.opts.PollInterval)
	defer tick.Stop()
	for {
		v, err := r.opts.AI.Assert(ctx, r.task(st.Prompt))
		if err != nil {
			return aiErr(st, err)
		}
		out.result = v
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

func (r *run) aiQuery(ctx context.Context, st script.Step, out *outcome, kind string) error {
	ans, err := r.opts.AI.Query(ctx, r.task(st.Prompt), kind)
	if err != nil {
		return aiErr(st, err)
	}
	name := st.Name
	if name == "" {
		name = st.Prompt
	}
	r.outputs[name] = ans
	out.result = map[string]any{"name": name, "value": ans}
	return nil
}
