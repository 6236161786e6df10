package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/scene"
)

// planner turns a goal and a distilled page summary (never raw XML or
// screenshots) into steps: by the controlled-language rules when the goal
// is written in them, by the model otherwise.
type planner struct {
	model *roleModel    // nil: rules only
	space *action.Space // the device's actions: what a plan may call
}

// planEvent is the plan event's payload.
type planEvent struct {
	Steps  []Step `json:"steps"`
	Source string `json:"source"` // rules or model
	Replan bool   `json:"replan,omitempty"`
}

func (p *planner) plan(ctx context.Context, b *bus, goal string, sc *scene.Scene, progress string) ([]Step, error) {
	b.publish(ctx, event.RoleOrchestrator, event.RolePlanner, event.EvPlanRequest, map[string]string{"goal": goal, "screen": sc.Fingerprint(), "progress": progress}, event.StatusInfo, 0)
	steps, err := p.rules(goal)
	source := "rules"
	if err != nil {
		var ue *UnderstandError
		if !errors.As(err, &ue) || p.model == nil {
			b.publish(ctx, event.RolePlanner, event.RoleOrchestrator, event.EvPlan, map[string]string{"error": err.Error()}, event.StatusFailed, 0)
			if p.model == nil {
				return nil, fmt.Errorf("%w: no model is configured, and %w", ErrNeedsModel, err)
			}
			return nil, err
		}
		steps, err = p.byModel(ctx, goal, sc, progress)
		source = "model"
		if err != nil {
			b.publish(ctx, event.RolePlanner, event.RoleOrchestrator, event.EvPlan, map[string]string{"error": err.Error(), "source": source}, event.StatusFailed, 0)
			return nil, err
		}
	}
	b.publish(ctx, event.RolePlanner, event.RoleOrchestrator, event.EvPlan, planEvent{Steps: steps, Source: source}, event.StatusOK, 1)
	return steps, nil
}

// replan plans what is left. The rules have one reading of a goal, so they
// answer with the remaining steps; the model sees the new screen and the
// compressed progress.
func (p *planner) replan(ctx context.Context, b *bus, goal string, sc *scene.Scene, progress string, rest []Step) ([]Step, error) {
	b.publish(ctx, event.RoleOrchestrator, event.RolePlanner, event.EvPlanRequest, map[string]any{"goal": goal, "screen": sc.Fingerprint(), "progress": progress, "replan": true}, event.StatusInfo, 0)
	if p.ruled(goal) {
		out := append([]Step(nil), rest...)
		b.publish(ctx, event.RolePlanner, event.RoleOrchestrator, event.EvPlan, planEvent{Steps: out, Source: "rules", Replan: true}, event.StatusOK, 1)
		return out, nil
	}
	steps, err := p.byModel(ctx, goal, sc, progress)
	if err != nil {
		b.publish(ctx, event.RolePlanner, event.RoleOrchestrator, event.EvPlan, map[string]any{"error": err.Error(), "replan": true}, event.StatusFailed, 0)
		return nil, err
	}
	b.publish(ctx, event.RolePlanner, event.RoleOrchestrator, event.EvPlan, planEvent{Steps: steps, Source: "model", Replan: true}, event.StatusOK, 1)
	return steps, nil
}

// ruled reports whether goal is planned by the rules: their re-plan is
// the same steps again, with no judgement of the new screen.
func (p *planner) ruled(goal string) bool {
	_, err := p.rules(goal)
	return err == nil || p.model == nil
}

// rules plans by the controlled language, bound to the device's actions.
func (p *planner) rules(goal string) ([]Step, error) {
	steps, err := PlanRules(goal)
	if err != nil {
		return nil, err
	}
	if err := bindPlan(steps, p.space); err != nil {
		return nil, err
	}
	return steps, nil
}

func (p *planner) byModel(ctx context.Context, goal string, sc *scene.Scene, progress string) ([]Step, error) {
	resp, err := p.model.complete(ctx, plannerRequest(goal, sc, progress, p.space))
	if err != nil {
		return nil, err
	}
	raw, err := jsonObject(resp.Text)
	if err != nil {
		return nil, fmt.Errorf("planner model: %w", err)
	}
	steps, err := decodePlan(raw, p.space)
	if err != nil {
		return nil, fmt.Errorf("planner model: %w", err)
	}
	return steps, nil
}

// decodePlan reads a model's plan, {"steps": [...]} or a bare array, each
// step's call through the device's action space.
func decodePlan(raw json.RawMessage, space *action.Space) ([]Step, error) {
	var ans struct {
		Steps []json.RawMessage `json:"steps"`
	}
	var err error
	if raw[0] == '[' {
		err = json.Unmarshal(raw, &ans.Steps)
	} else {
		err = json.Unmarshal(raw, &ans)
	}
	if err != nil {
		return nil, fmt.Errorf("the plan is not {steps: [...]}: %w", err)
	}
	if len(ans.Steps) > MaxSteps {
		return nil, fmt.Errorf("the plan has %d steps; at most %d are allowed: split the goal", len(ans.Steps), MaxSteps)
	}
	steps := make([]Step, len(ans.Steps))
	for i, rs := range ans.Steps {
		st, err := decodeStep(rs, space)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
		st.ID = i + 1
		if c := st.Expected; c != nil && c.Kind == "" {
			st.Expected = nil
		}
		steps[i] = st
	}
	if err := validatePlan(steps); err != nil {
		return nil, err
	}
	return steps, nil
}
