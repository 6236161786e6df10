package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/scene"
)

// planner turns a goal and a distilled page summary (never raw XML or
// screenshots) into steps: by the controlled-language rules when the goal
// is written in them, by the model otherwise.
type planner struct {
	model *roleModel // nil: rules only
}

// planEvent is the plan event's payload.
type planEvent struct {
	Steps  []Step `json:"steps"`
	Source string `json:"source"` // rules or model
	Replan bool   `json:"replan,omitempty"`
}

func (p *planner) plan(ctx context.Context, b *bus, goal string, sc *scene.Scene, progress string) ([]Step, error) {
	b.publish(ctx, event.RoleOrchestrator, event.RolePlanner, event.EvPlanRequest, map[string]string{"goal": goal, "screen": sc.Fingerprint(), "progress": progress}, event.StatusInfo, 0)
	steps, err := PlanRules(goal)
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
	if _, err := PlanRules(goal); err == nil || p.model == nil {
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

func (p *planner) byModel(ctx context.Context, goal string, sc *scene.Scene, progress string) ([]Step, error) {
	resp, err := p.model.complete(ctx, plannerRequest(goal, sc, progress))
	if err != nil {
		return nil, err
	}
	raw, err := jsonObject(resp.Text)
	if err != nil {
		return nil, fmt.Errorf("planner model: %w", err)
	}
	steps, err := decodePlan(raw)
	if err != nil {
		return nil, fmt.Errorf("planner model: %w", err)
	}
	return steps, nil
}

// decodePlan reads a model's plan: {"steps": [...]} or a bare array.
func decodePlan(raw json.RawMessage) ([]Step, error) {
	var ans struct {
		Steps []Step `json:"steps"`
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
	for i := range ans.Steps {
		ans.Steps[i].ID = i + 1
		if c := ans.Steps[i].Expected; c != nil && c.Kind == "" {
			ans.Steps[i].Expected = nil
		}
	}
	if err := validatePlan(ans.Steps); err != nil {
		return nil, err
	}
	return ans.Steps, nil
}
