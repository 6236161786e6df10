package report

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/event"
)

// A run's goals (its agent tasks) are projected from their events: the
// plan, re-plans, verdicts, recoveries and the tracer's crashes. Their rows
// and texts share a budget so a run of many goals stays a small page; the
// events in the store have everything.
const (
	maxGoalRows    = 1000      // plan steps, verdicts, retries and signals over the run
	goalTextBudget = 256 << 10 // bytes of escaped text over those rows, and over the goals' headings
	minGoalText    = 120
	maxGoalText    = 2 << 10
)

// goalView is one agent task of the run.
type goalView struct {
	Anchor   string // goal-1, …
	TaskID   string
	Kind     string // act, assert, query
	Goal     string
	Status   string // done, failed, review_required, canceled; running when no end was recorded
	Reason   string
	Summary  string
	Offset   time.Duration // since the run started
	Duration time.Duration
	Plans    []*planView
	Rows     []*goalRow
	// Omitted counts plan steps and rows left out to keep the page small.
	Omitted int
}

// planView is one plan the planner answered with.
type planView struct {
	Replan bool
	Source string // rules or model
	Error  string // the planner failed
	After  int    // a re-plan: the step that failed before it
	Start  int    // the number of its first step
	Steps  []plannedStep
}

type plannedStep struct {
	Call     string // Tap(locate: "Sign in"), or check for a step that only checks
	Expected string
	Wait     bool
}

// goalRow is a verdict, a recovery or a crash, in the order they happened.
type goalRow struct {
	Kind       string // verdict, retry, signal
	What       string // post verdict, retry 1 · wait, crash …
	StepID     int    // the plan's step, 0 when none
	Status     string // ok, failed, review_required; "" for a recovery whose own action did not fail
	Confidence string
	Check      string
	Detail     string // evidence; a retry's reason; a crash's detail
	Error      string // the recovery's own action failed
	// Step is the recorded step the row is about: the step checked, the
	// recovery's own action, the screen a crash was seen on.
	Step *stepView
}

// The payloads the report reads; the agent writes them (agent/orchestrator.go,
// planner.go, recovery.go).
type (
	taskStarted struct {
		Goal string `json:"goal"`
		Kind string `json:"kind"`
	}
	taskFinished struct {
		Status  string `json:"status"`
		Reason  string `json:"reason"`
		Summary string `json:"summary"`
	}
	planPayload struct {
		Steps  []json.RawMessage `json:"steps"`
		Source string            `json:"source"`
		Replan bool              `json:"replan"`
		Error  string            `json:"error"`
	}
	verdictPayload struct {
		Step  int             `json:"step_id"`
		Check json.RawMessage `json:"check"`
		agent.Verdict
		Phase string `json:"phase"`
	}
	retryPayload struct {
		Step     int    `json:"step_id"`
		Attempt  int    `json:"attempt"`
		Strategy string `json:"strategy"`
		Reason   string `json:"reason"`
		Target   string `json:"target"`
		Error    string `json:"error"`
	}
	stepIDPayload struct {
		Step int `json:"step_id"`
	}
)

// buildGoals projects the run's events into one view per agent task, in the
// order the tasks started, and links rows to the recorded steps they are
// about (see linker). steps are the run's step views in order.
func buildGoals(run time.Time, events []event.Event, steps []*stepView) []*goalView {
	var order []string
	byTask := map[string][]event.Event{}
	for _, e := range events {
		if _, ok := byTask[e.TaskID]; !ok {
			order = append(order, e.TaskID)
		}
		byTask[e.TaskID] = append(byTask[e.TaskID], e)
	}
	rows := 0
	for _, evs := range byTask {
		for _, e := range evs {
			switch e.ActionType {
			case event.EvVerdict, event.EvRetry, event.EvSignal:
				rows++
			case event.EvPlan:
				var p planPayload
				_ = json.Unmarshal(e.Payload, &p)
				rows += len(p.Steps)
			}
		}
	}
	b := &goalBuilder{left: maxGoalRows,
		text:    min(max(goalTextBudget/max(min(rows, maxGoalRows), 1), minGoalText), maxGoalText),
		heading: min(max(goalTextBudget/(3*max(len(order), 1)), minGoalText), maxGoalText)}
	var goals []*goalView
	for i, id := range order {
		g := b.goal(byTask[id], steps)
		g.Anchor = "goal-" + strconv.Itoa(i+1)
		g.Offset = byTask[id][0].Time.Sub(run)
		goals = append(goals, g)
	}
	return goals
}

type goalBuilder struct {
	left    int // rows the page still has room for
	text    int // bytes of escaped text a row's detail may take
	heading int // … a goal's text, its reason and its summary
}

// room takes n rows from the budget and reports how many fit.
func (b *goalBuilder) room(n int) int {
	n = min(n, b.left)
	b.left -= n
	return n
}

func (b *goalBuilder) cut(s string, limit int) string {
	s, _ = cutEscaped(s, limit)
	return s
}

func (b *goalBuilder) goal(evs []event.Event, steps []*stepView) *goalView {
	g := &goalView{TaskID: evs[0].TaskID, Status: event.RunRunning}
	g.Duration = evs[len(evs)-1].Time.Sub(evs[0].Time)
	link := newLinker(evs[0].Time, steps)
	lastStep := 0 // the plan step the latest row was about
	for _, e := range evs {
		switch e.ActionType {
		case event.EvTaskStarted:
			var p taskStarted
			if json.Unmarshal(e.Payload, &p) == nil {
				g.Goal, g.Kind = b.cut(p.Goal, b.heading), p.Kind
			}
		case event.EvTaskFinished:
			var p taskFinished
			if json.Unmarshal(e.Payload, &p) == nil {
				g.Status = p.Status
				g.Reason = b.cut(p.Reason, b.heading)
				g.Summary = b.cut(p.Summary, b.heading)
			}
		case event.EvPlan:
			if pv := b.plan(e, lastStep, g); pv != nil {
				g.Plans = append(g.Plans, pv)
			}
		case event.EvActed:
			var p stepIDPayload
			if json.Unmarshal(e.Payload, &p) == nil {
				lastStep = p.Step
			}
			link.acted(e.Time)
		case event.EvVerdict:
			var p verdictPayload
			if json.Unmarshal(e.Payload, &p) != nil {
				continue
			}
			lastStep = max(lastStep, p.Step)
			r := &goalRow{Kind: "verdict", What: phaseText(p.Phase), StepID: p.Step, Status: e.Status,
				Confidence: strconv.FormatFloat(e.Confidence, 'f', 2, 64), Check: b.cut(checkText(p.Check), b.text/2),
				Detail: b.cut(p.Evidence, b.text)}
			switch p.Phase {
			case "post":
				r.Step = link.actedStep()
			case "check":
				r.Step = link.next(e.Time)
			}
			b.add(g, r)
		case event.EvRetry:
			var p retryPayload
			if json.Unmarshal(e.Payload, &p) != nil {
				continue
			}
			lastStep = p.Step
			what := "retry " + strconv.Itoa(p.Attempt) + " · " + p.Strategy
			if p.Target != "" {
				what += " " + p.Target
			}
			r := &goalRow{Kind: "retry", What: b.cut(what, b.text/2), StepID: p.Step,
				Detail: b.cut(p.Reason, b.text), Error: b.cut(p.Error, b.text/2), Step: link.next(e.Time)}
			if p.Error != "" {
				r.Status = event.StatusFailed
			}
			b.add(g, r)
		case event.EvSignal:
			var s event.Signal
			if json.Unmarshal(e.Payload, &s) != nil || (s.Kind != event.SigCrash && s.Kind != event.SigANR) {
				continue
			}
			what := s.Kind
			if s.App != "" {
				what += " · " + s.App
			}
			b.add(g, &goalRow{Kind: "signal", What: b.cut(what, b.text/2), StepID: lastStep, Status: e.Status,
				Detail: b.cut(s.Detail, b.text), Step: link.last()})
		}
	}
	return g
}

func (b *goalBuilder) add(g *goalView, r *goalRow) {
	if b.room(1) == 0 {
		g.Omitted++
		return
	}
	g.Rows = append(g.Rows, r)
}

// plan reads a plan event; a re-plan's steps are numbered from the step
// that failed (after), as the orchestrator numbers them.
func (b *goalBuilder) plan(e event.Event, after int, g *goalView) *planView {
	var p planPayload
	if json.Unmarshal(e.Payload, &p) != nil {
		return nil
	}
	pv := &planView{Replan: p.Replan, Source: p.Source, Error: b.cut(p.Error, b.text), Start: 1}
	if p.Replan && after > 0 {
		pv.After, pv.Start = after, after
	}
	n := b.room(len(p.Steps))
	g.Omitted += len(p.Steps) - n
	for _, raw := range p.Steps[:n] {
		pv.Steps = append(pv.Steps, b.plannedStep(raw))
	}
	return pv
}

// plannedStep renders a step as the agent reads it back (agent.Step); a
// step it cannot read shows its JSON.
func (b *goalBuilder) plannedStep(raw json.RawMessage) plannedStep {
	var st agent.Step
	if err := json.Unmarshal(raw, &st); err != nil {
		return plannedStep{Call: b.cut(string(raw), b.text)}
	}
	ps := plannedStep{Call: "check", Wait: st.Wait}
	if !st.Call.IsZero() {
		ps.Call = b.cut(st.Call.String(), b.text)
	}
	if st.Expected != nil {
		ps.Expected = b.cut(st.Expected.String(), b.text/2)
	}
	return ps
}

func phaseText(phase string) string {
	switch phase {
	case "pre":
		return "before acting"
	case "post":
		return "after acting"
	case "check":
		return "check"
	}
	return phase
}

// checkText is a verdict's check in the controlled language, or its JSON
// when it is not one the report can read.
func checkText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var c check.Check
	if err := json.Unmarshal(raw, &c); err != nil {
		return strings.TrimSpace(string(raw))
	}
	return c.String()
}

// linker finds the recorded step an event is about. Every step a goal runs
// is recorded before the event that reports it (the executor's acted, a
// check's verdict, a recovery's retry), so the step is the last one that
// started after the task's previous linked step and before the event.
type linker struct {
	steps []*stepView // the run's steps from the task's start
	pos   int         // the first step not linked yet
	act   *stepView   // the step of the latest acted event
	prev  *stepView   // the latest step linked
}

func newLinker(start time.Time, steps []*stepView) *linker {
	i := 0
	for i < len(steps) && steps[i].Started.Before(start) {
		i++
	}
	return &linker{steps: steps[i:]}
}

// next links the last step not linked yet that started by t; nil when none
// did (the event's step ran nothing on the device).
func (l *linker) next(t time.Time) *stepView {
	var found *stepView
	for l.pos < len(l.steps) && !l.steps[l.pos].Started.After(t) {
		found = l.steps[l.pos]
		l.pos++
	}
	if found != nil {
		l.prev = found
	}
	return found
}

func (l *linker) acted(t time.Time) { l.act = l.next(t) }

// actedStep is the step of the latest acted event, once: a post verdict
// judges what that step left.
func (l *linker) actedStep() *stepView {
	s := l.act
	l.act = nil
	return s
}

// last is the latest step linked: the screen a signal was seen on.
func (l *linker) last() *stepView { return l.prev }
