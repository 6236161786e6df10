package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/scene"
)

// Assert checks the goal as an assertion on the settled screen: by rules
// when it is written in the controlled language (`"Cart (1)" exists`,
// 确认出现“结果”), by the validator model otherwise. A verdict with
// Review set needs a person. Offline, an assertion outside the controlled
// language is an error wrapping ErrNeedsModel.
func (rt *Runtime) Assert(ctx context.Context, t Task) (*Verdict, error) {
	s, err := rt.session(ctx, t, "assert")
	if err != nil {
		return nil, err
	}
	defer s.obs.s.Close()
	s.bus.publish(ctx, event.RoleOrchestrator, event.RoleOrchestrator, event.EvTaskStarted, taskInfo{Goal: t.Goal, Kind: "assert", Device: t.DeviceID, RunID: t.RunID, Offline: rt.Offline()}, event.StatusInfo, 0)
	v, err := rt.assert(ctx, s, t.Goal)
	status, reason := Done, ""
	switch {
	case err != nil:
		status, reason = Failed, err.Error()
	case v.Review:
		status, reason = ReviewRequired, v.Evidence
	case !v.Pass:
		status, reason = Failed, v.Evidence
	}
	rt.finish(ctx, s, status, reason)
	return v, err
}

func (rt *Runtime) assert(ctx context.Context, s *session, goal string) (*Verdict, error) {
	sc, err := s.obs.settle(ctx)
	if err != nil {
		return nil, err
	}
	s.bus.publish(ctx, event.RoleObserver, event.RoleOrchestrator, event.EvObserved, observed(sc, "assert"), event.StatusOK, 1)
	checks, perr := parseChecks(goal)
	if perr == nil {
		v := combine(checks, sc)
		s.bus.publish(ctx, event.RoleValidator, event.RoleOrchestrator, event.EvVerdict, verdictEvent{Verdict: v, Phase: "check"}, statusOfVerdict(v), v.Confidence)
		return &v, nil
	}
	m, err := rt.model(s, event.RoleValidator)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%w: no model is configured, and %w", ErrNeedsModel, perr)
	}
	v, err := askValidator(ctx, m, goal, sc)
	if err != nil {
		return nil, err
	}
	s.bus.publish(ctx, event.RoleValidator, event.RoleOrchestrator, event.EvVerdict, verdictEvent{Verdict: v, Phase: "check"}, statusOfVerdict(v), v.Confidence)
	return &v, nil
}

// combine decides several checks: all must pass; the verdict is as sure as
// the least sure one.
func combine(checks []check.Check, sc *scene.Scene) Verdict {
	out := Verdict{Pass: true, Confidence: 1}
	var ev []string
	for i := range checks {
		v := judge(&checks[i], nil, sc)
		ev = append(ev, v.Evidence)
		if !v.Pass {
			return v
		}
		out.Confidence = min(out.Confidence, v.Confidence)
	}
	out.Evidence = strings.Join(ev, "; ")
	out.Review = out.Confidence >= ReviewLow && out.Confidence < ReviewHigh
	return out
}

func statusOfVerdict(v Verdict) string {
	switch {
	case v.Review:
		return event.StatusReview
	case v.sure():
		return event.StatusOK
	}
	return event.StatusFailed
}

// Query kinds.
const (
	QueryAny     = ""
	QueryBoolean = "boolean"
	QueryNumber  = "number"
	QueryString  = "string"
)

// Query reads something off the screen. kind "boolean" answers an
// assertion; "number" and "string" read the element the goal names (its
// quoted text, or the whole goal) by rules when it is on screen; anything
// else, and "" (any JSON value), needs the model.
func (rt *Runtime) Query(ctx context.Context, t Task, kind string) (any, error) {
	switch kind {
	case QueryAny, QueryBoolean, QueryNumber, QueryString:
	default:
		return nil, fmt.Errorf("agent: query kind %q: use \"\", boolean, number or string", kind)
	}
	s, err := rt.session(ctx, t, "query")
	if err != nil {
		return nil, err
	}
	defer s.obs.s.Close()
	s.bus.publish(ctx, event.RoleOrchestrator, event.RoleOrchestrator, event.EvTaskStarted, taskInfo{Goal: t.Goal, Kind: "query", Device: t.DeviceID, RunID: t.RunID, Offline: rt.Offline()}, event.StatusInfo, 0)
	ans, err := rt.query(ctx, s, t.Goal, kind)
	if err != nil {
		rt.finish(ctx, s, Failed, err.Error())
		return nil, err
	}
	raw, _ := json.Marshal(ans)
	s.bus.publish(ctx, event.RoleObserver, event.RoleOrchestrator, "answer", map[string]json.RawMessage{"answer": raw}, event.StatusOK, 1)
	rt.finish(ctx, s, Done, "")
	return ans, nil
}

func (rt *Runtime) query(ctx context.Context, s *session, goal, kind string) (any, error) {
	if kind == QueryBoolean {
		if _, err := parseChecks(goal); err == nil || rt.Offline() {
			v, err := rt.assert(ctx, s, goal)
			if err != nil {
				return nil, err
			}
			if v.Review {
				return nil, fmt.Errorf("agent: the answer needs a person: %s", v.Evidence)
			}
			return v.Pass, nil
		}
	}
	sc, err := s.obs.settle(ctx)
	if err != nil {
		return nil, err
	}
	s.bus.publish(ctx, event.RoleObserver, event.RoleOrchestrator, event.EvObserved, observed(sc, "query"), event.StatusOK, 1)
	if kind == QueryNumber || kind == QueryString {
		if ans, err := ruleQuery(sc, goal, kind); err == nil {
			return ans, nil
		} else if rt.Offline() {
			return nil, fmt.Errorf("%w: no model is configured, and %w", ErrNeedsModel, err)
		}
	}
	m, err := rt.model(s, event.RoleObserver)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%w: a free-form query (aiQuery) needs one; ask for a number or string of a quoted element instead", ErrNeedsModel)
	}
	resp, err := m.complete(ctx, m.show(ctx, queryRequest(goal, kind, sc), sc, nil))
	if err != nil {
		return nil, err
	}
	raw, err := jsonObject(resp.Text)
	if err != nil {
		return nil, err
	}
	var ans struct {
		Answer any `json:"answer"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, fmt.Errorf("query model: %w", err)
	}
	switch kind {
	case QueryNumber:
		if _, ok := ans.Answer.(float64); !ok {
			return nil, fmt.Errorf("query model: answered %v, not a number", ans.Answer)
		}
	case QueryBoolean:
		if _, ok := ans.Answer.(bool); !ok {
			return nil, fmt.Errorf("query model: answered %v, not a boolean", ans.Answer)
		}
	case QueryString:
		if _, ok := ans.Answer.(string); !ok {
			return nil, fmt.Errorf("query model: answered %v, not a string", ans.Answer)
		}
	}
	return ans.Answer, nil
}

// ruleQuery reads a number or the text of the element a goal names.
func ruleQuery(sc *scene.Scene, goal, kind string) (any, error) {
	_, texts := maskQuotes(goal)
	target := strings.TrimSpace(goal)
	if len(texts) > 0 {
		target = texts[0]
	}
	loc := check.ParseTarget(target)
	e, _, err := check.Find(sc, loc)
	if err != nil {
		return nil, fmt.Errorf("the rules found no one element %q to read: %w", target, err)
	}
	if kind == QueryString {
		return label(e), nil
	}
	if n, ok := check.ReadNumber(e, loc); ok {
		return n, nil
	}
	return nil, errors.New("element " + brief(e) + " holds no number")
}
