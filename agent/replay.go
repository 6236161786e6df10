package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/event"
)

// StepResult is one step as the events tell it.
type StepResult struct {
	ID       int      `json:"step_id"`
	Step     string   `json:"step"`    // tap "Sign in"
	Status   string   `json:"status"`  // done, skipped, failed, review_required, pending
	Summary  string   `json:"summary"` // the screen it reached, ≤50 characters
	Attempts int      `json:"attempts"`
	Via      string   `json:"via,omitempty"` // rule, cache, model
	Retries  []string `json:"retries,omitempty"`
	Verdict  *Verdict `json:"verdict,omitempty"`
}

// finishEvent is the task_finished event's payload.
type finishEvent struct {
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Summary string `json:"summary"`
}

// Replay reconstructs a task from its events alone (as the store returns
// them): its goal, plan, steps, state, outcome and model use. A task whose
// task_finished event is missing (the process died) replays with the
// status "running" and its last state. Its plan may call the built-in
// actions of any platform.
func Replay(events []event.Event) (*Result, error) { return replay(events, knownActions()) }

// replay is Replay of a task whose plan calls the actions of space.
func replay(events []event.Event, space *action.Space) (*Result, error) {
	if len(events) == 0 {
		return nil, fmt.Errorf("agent: replay: no events")
	}
	r := &Result{TaskID: events[0].TaskID, Status: "running", Events: events}
	steps := map[int]*StepResult{}
	get := func(id int) *StepResult {
		if s, ok := steps[id]; ok {
			return s
		}
		s := &StepResult{ID: id, Status: "pending"}
		steps[id] = s
		return s
	}
	for i, e := range events {
		if e.TaskID != r.TaskID {
			return nil, fmt.Errorf("agent: replay: event %s belongs to task %s, not %s", e.ID, e.TaskID, r.TaskID)
		}
		bad := func(err error) error {
			return fmt.Errorf("agent: replay: event %d (%s %s): %w", i+1, e.ID, e.ActionType, err)
		}
		switch e.ActionType {
		case event.EvTaskStarted:
			var ti taskInfo
			if err := json.Unmarshal(e.Payload, &ti); err != nil {
				return nil, bad(err)
			}
			r.Goal = ti.Goal
		case event.EvState:
			var p struct{ State string }
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				return nil, bad(err)
			}
			r.State = p.State
		case event.EvPlan:
			if e.Status != event.StatusOK {
				continue
			}
			var p struct {
				Steps  []json.RawMessage `json:"steps"`
				Replan bool              `json:"replan"`
			}
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				return nil, bad(err)
			}
			planned := make([]Step, len(p.Steps))
			for k, raw := range p.Steps {
				st, err := decodeStep(raw, space)
				if err != nil {
					return nil, bad(fmt.Errorf("step %d: %w", k+1, err))
				}
				planned[k] = st
			}
			if p.Replan {
				r.Replans++
				// The re-plan replaces the steps from the first not done.
				keep := 0
				for keep < len(r.Plan) && steps[r.Plan[keep].ID] != nil && (steps[r.Plan[keep].ID].Status == Done || steps[r.Plan[keep].ID].Status == "skipped") {
					keep++
				}
				for k := range planned {
					planned[k].ID = keep + k + 1
				}
				for id := keep + 1; id <= len(r.Plan); id++ {
					if s := steps[id]; s != nil && s.Status == Failed {
						s.Status = "replanned"
					}
				}
				r.Plan = append(r.Plan[:keep:keep], planned...)
				continue
			}
			r.Plan = planned
		case event.EvActed:
			var ex execution
			if err := json.Unmarshal(e.Payload, &ex); err != nil {
				return nil, bad(err)
			}
			s := get(ex.Step)
			s.Attempts++
			s.Via = ex.Via
		case event.EvSkipped:
			var p struct {
				Step int `json:"step_id"`
			}
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				return nil, bad(err)
			}
			get(p.Step).Status = "skipped"
		case event.EvVerdict:
			var v verdictEvent
			if err := json.Unmarshal(e.Payload, &v); err != nil {
				return nil, bad(err)
			}
			s := get(v.Step)
			vv := v.Verdict
			s.Verdict = &vv
			if v.Phase == "check" && s.Attempts == 0 {
				s.Attempts = 1
			}
			switch {
			case e.Status == event.StatusOK && v.Phase != "pre":
				s.Status = Done
			case e.Status == event.StatusReview:
				s.Status = ReviewRequired
			}
		case event.EvRetry:
			var re retryEvent
			if err := json.Unmarshal(e.Payload, &re); err != nil {
				return nil, bad(err)
			}
			s := get(re.Step)
			s.Retries = append(s.Retries, re.Strategy)
		case event.EvStepSummary:
			var p summaryEvent
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				return nil, bad(err)
			}
			s := get(p.Step)
			s.Summary = p.Summary
			// Records before the status field wrote "FAIL …" summaries.
			if p.Status == summaryFailed || strings.HasPrefix(p.Summary, "FAIL") {
				s.Status = Failed
			}
		case event.EvModelCall:
			var mc modelCall
			if err := json.Unmarshal(e.Payload, &mc); err != nil {
				return nil, bad(err)
			}
			r.ModelCalls++
			r.Usage = r.Usage.Add(mc.Usage)
			r.MaxPromptTokens = max(r.MaxPromptTokens, mc.PromptTokens)
		case event.EvTaskFinished:
			var f finishEvent
			if err := json.Unmarshal(e.Payload, &f); err != nil {
				return nil, bad(err)
			}
			r.Status, r.Reason, r.Summary = f.Status, f.Reason, f.Summary
		}
	}
	r.Duration = events[len(events)-1].Time.Sub(events[0].Time)
	for _, st := range r.Plan {
		s := get(st.ID)
		s.Step = stepText(st)
		r.Steps = append(r.Steps, *s)
	}
	return r, nil
}

// mark is a step status as the task's summary line shows it.
func mark(status string) string {
	switch status {
	case Done:
		return summaryOK
	case Failed:
		return "FAIL"
	}
	return status
}

// report is the reporter: the task's summary, from its events only.
func report(events []event.Event, space *action.Space, status, reason string) string {
	r, err := replay(events, space)
	if err != nil {
		return status + ": " + reason
	}
	counts := map[string]int{}
	retries := 0
	for _, s := range r.Steps {
		counts[s.Status]++
		retries += len(s.Retries)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d/%d steps done", strings.ToUpper(status), counts[Done]+counts["skipped"], len(r.Steps))
	if n := counts["skipped"]; n > 0 {
		fmt.Fprintf(&b, " (%d already true, skipped)", n)
	}
	if retries > 0 {
		fmt.Fprintf(&b, ", %d retries", retries)
	}
	if r.Replans > 0 {
		fmt.Fprintf(&b, ", %d re-plans", r.Replans)
	}
	if r.ModelCalls > 0 {
		fmt.Fprintf(&b, ", %d model calls (%d prompt tokens)", r.ModelCalls, r.Usage.PromptTokens)
	} else {
		b.WriteString(", no model")
	}
	var lines []string
	for _, s := range r.Steps {
		if s.Summary != "" {
			lines = append(lines, fmt.Sprintf("%d %s → %s", s.ID, mark(s.Status), s.Summary))
		}
	}
	if len(lines) > 0 {
		b.WriteString("; " + strings.Join(lines, "; "))
	}
	if reason != "" {
		b.WriteString(". " + reason)
	}
	return b.String()
}
