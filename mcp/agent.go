package mcp

import (
	"context"
	"fmt"

	"github.com/apexagent/apex/agent"
)

// Agent adapts Apex's AI runtime to AI: act, assert and query then run the
// role-split agents, or the offline rule planner when rt has no model.
func Agent(rt *agent.Runtime) AI { return runtimeAI{rt} }

type runtimeAI struct{ rt *agent.Runtime }

func task(t Task) agent.Task {
	return agent.Task{Goal: t.Goal, Driver: t.Driver, DeviceID: t.DeviceID, Space: t.Space}
}

func (a runtimeAI) Act(ctx context.Context, t Task) (*Outcome, error) {
	r, err := a.rt.Act(ctx, task(t))
	if err != nil {
		return nil, err
	}
	out := &Outcome{Status: r.Status, Summary: r.Summary, Reason: r.Reason, Steps: len(r.Steps)}
	for _, s := range r.Steps {
		out.Log = append(out.Log, fmt.Sprintf("%d. %s: %s (%s)", s.ID, s.Step, s.Status, s.Summary))
	}
	return out, nil
}

func (a runtimeAI) Assert(ctx context.Context, t Task) (*Verdict, error) {
	v, err := a.rt.Assert(ctx, task(t))
	if err != nil {
		return nil, err
	}
	return &Verdict{Pass: v.Pass, Confidence: v.Confidence, Evidence: v.Evidence, Review: v.Review}, nil
}

func (a runtimeAI) Query(ctx context.Context, t Task, kind string) (any, error) {
	return a.rt.Query(ctx, task(t), kind)
}
