package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/scene"
)

// Task statuses (Result.Status).
const (
	Done           = "done"
	Failed         = "failed"
	ReviewRequired = "review_required"
	Canceled       = "canceled"
)

// maxLoop is how often the same action may run on the same screen in one
// task before the orchestrator calls it a loop.
const maxLoop = 3

// orchestrator owns one task's state machine and dispatches the roles. It
// is the one place that knows where the task is.
type orchestrator struct {
	rt      *Runtime
	task    Task
	id      string
	bus     *bus
	obs     *observer
	exec    *executor
	trc     *tracer
	planner *planner
	judge   *roleModel // validator model; nil: rules only

	steps     []Step
	summaries []string
	done      int
	app       string         // the app the task started in
	runs      map[string]int // loop detection: step + screen → executions
	failedAt  map[string]string
	replans   int
	started   time.Time
	cur       *scene.Scene // the settled screen the last step ended on
	planErr   error
}

func (o *orchestrator) state(ctx context.Context, s string) {
	o.bus.publish(ctx, event.RoleOrchestrator, event.RoleOrchestrator, event.EvState, map[string]string{"state": s}, event.StatusInfo, 0)
}

func stepState(st Step, what string) string { return fmt.Sprintf("STEP_%d_%s", st.ID, what) }

// observe publishes what the observer saw.
func (o *orchestrator) observe(ctx context.Context, settle bool, why string) (*scene.Scene, error) {
	var s *scene.Scene
	var err error
	if settle {
		s, err = o.obs.settle(ctx)
	} else {
		s, err = o.obs.observe(ctx)
	}
	if err != nil {
		o.bus.publish(ctx, event.RoleObserver, event.RoleOrchestrator, event.EvObserved, map[string]string{"error": err.Error(), "why": why}, event.StatusFailed, 0)
		return nil, err
	}
	o.bus.publish(ctx, event.RoleObserver, event.RoleOrchestrator, event.EvObserved, observed(s, why), event.StatusOK, 1)
	return s, nil
}

// run drives the task to DONE, FAILED, REVIEW_REQUIRED or CANCELED.
func (o *orchestrator) run(ctx context.Context) (status, reason string) {
	o.state(ctx, "OBSERVING")
	sc, err := o.observe(ctx, true, "start")
	if err != nil {
		return o.fatal(ctx, err)
	}
	o.app = sc.Package
	o.cur = sc
	o.trc.start(ctx, sc)
	o.state(ctx, "PLANNING")
	steps, err := o.planner.plan(ctx, o.bus, o.task.Goal, sc, "")
	if err != nil {
		if ctx.Err() != nil {
			return o.fatal(ctx, err)
		}
		o.planErr = err
		o.state(ctx, "FAILED")
		return Failed, "planning: " + err.Error()
	}
	o.steps = steps
	for i := 0; i < len(o.steps); i++ {
		st := o.steps[i]
		res, why := o.runStep(ctx, st)
		switch res {
		case event.StatusOK:
			o.done++
			if o.done%5 == 0 && i+1 < len(o.steps) {
				o.compress(ctx, i+1)
			}
			continue
		case event.StatusReview:
			o.state(ctx, "REVIEW_REQUIRED")
			return ReviewRequired, fmt.Sprintf("step %d (%s) needs a person: %s", st.ID, stepText(st), why)
		}
		if ctx.Err() != nil {
			return o.fatal(ctx, ctx.Err())
		}
		if errors.Is(errorOf(why), device.ErrOffline) {
			return Failed, why
		}
		next, stop := o.replan(ctx, i, st, why)
		if stop != "" {
			o.state(ctx, "FAILED")
			return Failed, stop
		}
		o.steps = next
		i-- // run the new step i
	}
	o.state(ctx, "DONE")
	return Done, ""
}

// errorOf keeps errors.Is usable on reasons (they are strings in events).
func errorOf(why string) error {
	if strings.Contains(why, device.ErrOffline.Error()) {
		return device.ErrOffline
	}
	return nil
}

func (o *orchestrator) fatal(ctx context.Context, err error) (string, string) {
	if ctx.Err() != nil {
		o.state(ctx, "CANCELED")
		return Canceled, fmt.Sprintf("canceled: %v", context.Cause(ctx))
	}
	o.state(ctx, "FAILED")
	return Failed, err.Error()
}

// replan asks the planner for the rest of the task after step i failed
// twice over; it stops the task when that cannot help.
func (o *orchestrator) replan(ctx context.Context, i int, st Step, why string) ([]Step, string) {
	if o.replans >= o.rt.cfg.MaxReplans {
		return nil, fmt.Sprintf("step %d (%s) failed after %d retries and %d re-plans: %s", st.ID, stepText(st), MaxRetries, o.replans, why)
	}
	o.replans++
	o.state(ctx, "REPLANNING")
	sc, err := o.observe(ctx, true, "re-plan")
	if err != nil {
		return nil, err.Error()
	}
	rest, err := o.planner.replan(ctx, o.bus, o.task.Goal, sc, o.progress(i), o.steps[i:])
	if err != nil {
		return nil, fmt.Sprintf("step %d (%s) failed (%s) and re-planning failed: %v", st.ID, stepText(st), why, err)
	}
	if len(rest) > 0 && stepText(rest[0]) == stepText(st) && o.failedAt[stepText(st)] == sc.Fingerprint() {
		return nil, fmt.Sprintf("loop: the re-plan repeats step %d (%s) on the screen where it just failed: %s", st.ID, stepText(st), why)
	}
	next := append(append([]Step(nil), o.steps[:i]...), rest...)
	for k := i; k < len(next); k++ {
		next[k].ID = k + 1
	}
	if len(next) > MaxSteps+o.done {
		next = next[:MaxSteps+o.done]
	}
	return next, ""
}

// progress is the compressed context: recent step summaries and what is
// left, never raw logs.
func (o *orchestrator) progress(next int) string {
	recent := o.summaries
	if len(recent) > 5 {
		recent = recent[len(recent)-5:]
	}
	var left []string
	for _, s := range o.steps[min(next, len(o.steps)):] {
		left = append(left, stepText(s))
	}
	return fmt.Sprintf("done %d: %s\nleft: %s", o.done, strings.Join(recent, "; "), truncate(strings.Join(left, "; "), 300))
}

// compress publishes the compressed context every five steps.
func (o *orchestrator) compress(ctx context.Context, next int) {
	var plan []string
	for _, s := range o.steps {
		plan = append(plan, stepText(s))
	}
	o.bus.publish(ctx, event.RoleOrchestrator, event.RoleOrchestrator, event.EvContext,
		map[string]any{"plan": plan, "progress": o.progress(next)}, event.StatusInfo, 0)
}

// summarize records the ≤50-character summary that replaces the step's
// log in later prompts.
func (o *orchestrator) summarize(ctx context.Context, st Step, mark string) {
	s := truncate(mark+" "+stepText(st), 50)
	o.summaries = append(o.summaries, s)
	o.bus.publish(ctx, event.RoleOrchestrator, event.RoleOrchestrator, event.EvStepSummary, map[string]any{"step_id": st.ID, "summary": s}, event.StatusInfo, 0)
}

// verdictEvent is the verdict event's payload.
type verdictEvent struct {
	Step  int          `json:"step_id"`
	Check *check.Check `json:"check,omitempty"`
	Verdict
	Phase string `json:"phase"` // pre (idempotency), post (after acting), check
}

func (o *orchestrator) publishVerdict(ctx context.Context, st Step, c *check.Check, v Verdict, phase string) {
	status := event.StatusFailed
	switch {
	case v.Review:
		status = event.StatusReview
	case v.sure():
		status = event.StatusOK
	}
	o.bus.publish(ctx, event.RoleValidator, event.RoleOrchestrator, event.EvVerdict, verdictEvent{Step: st.ID, Check: c, Verdict: v, Phase: phase}, status, v.Confidence)
}

// runStep runs one step with at most MaxRetries retries. It returns
// StatusOK, StatusReview or StatusFailed with the reason.
func (o *orchestrator) runStep(ctx context.Context, st Step) (string, string) {
	tried := map[string]bool{}
	ro := resolveOpts{progress: o.progress(o.done)}
	crashed := ""
	for attempt := 0; ; attempt++ {
		// The screen the last step settled on is this step's start.
		sc := o.cur
		o.cur = nil
		if sc == nil || attempt > 0 {
			var err error
			if sc, err = o.observe(ctx, true, fmt.Sprintf("step %d attempt %d", st.ID, attempt)); err != nil {
				return event.StatusFailed, err.Error()
			}
		}
		// Idempotency: an expected state that already holds exactly means
		// the step's effect is there; doing it again would be a bug. Only
		// what is seen counts: absence (notExists) may be a dialog covering
		// the target, and a changed layout cannot hold before acting.
		if c := st.Expected; c != nil && !st.Call.IsZero() && c.Kind != check.LayoutChanged && c.Kind != check.NotExists {
			if v := judge(c, nil, sc); v.Pass && v.Confidence >= 1 {
				o.publishVerdict(ctx, st, c, v, "pre")
				o.bus.publish(ctx, event.RoleValidator, event.RoleOrchestrator, event.EvSkipped,
					map[string]any{"step_id": st.ID, "key": idempotencyKey(o.id, st), "evidence": v.Evidence}, event.StatusOK, v.Confidence)
				o.state(ctx, stepState(st, "SKIPPED"))
				o.summarize(ctx, st, "= already")
				o.cur = sc
				return event.StatusOK, ""
			}
		}
		var why string
		var execErr error
		var signals []event.Signal
		after := sc
		switch {
		case st.Call.IsZero():
			c := st.Expected
			r := o.obs.run(ctx, stepText(st), action.Call{}, c, o.timeout(st), sc)
			if r.After != nil {
				after = r.After.Scene
			}
			v := verdictOf(r)
			v = o.modelJudge(ctx, c, after, v)
			o.publishVerdict(ctx, st, c, v, "check")
			if v.Review {
				return event.StatusReview, v.Evidence
			}
			if v.sure() {
				o.state(ctx, stepState(st, "VALIDATED"))
				o.summarize(ctx, st, "ok")
				o.cur = after
				return event.StatusOK, ""
			}
			why = v.Evidence
			signals = o.trc.poll(ctx, after, 0)
			o.publishSignals(ctx, signals)
		default:
			loopKey := stepText(st) + "@" + sc.Fingerprint()
			o.runs[loopKey]++
			if o.runs[loopKey] > maxLoop {
				return event.StatusFailed, fmt.Sprintf("loop: %s ran %d times on the same screen", stepText(st), maxLoop)
			}
			key := idempotencyKey(o.id, st)
			o.bus.publish(ctx, event.RoleOrchestrator, event.RoleExecutor, event.EvActRequest, map[string]any{"step": st, "attempt": attempt, "idempotency_key": key}, event.StatusInfo, 0)
			ex := o.exec.execute(ctx, o.id, st, attempt, sc, ro, o.timeout(st))
			status := event.StatusOK
			if ex.Error != "" {
				status = event.StatusFailed
			}
			o.bus.publish(ctx, event.RoleExecutor, event.RoleOrchestrator, event.EvActed, ex, status, 0)
			if ctx.Err() != nil {
				return event.StatusFailed, ctx.Err().Error()
			}
			o.state(ctx, stepState(st, "EXECUTED"))
			if ex.rec != nil && ex.rec.After != nil && !engine.Fatal(ctx, ex.rec.Err) {
				// The screen the step settled on (and its check judged).
				after = ex.rec.After.Scene
				o.bus.publish(ctx, event.RoleObserver, event.RoleOrchestrator, event.EvObserved, observed(after, fmt.Sprintf("after step %d", st.ID)), event.StatusOK, 1)
			} else if a, err := o.observe(ctx, true, fmt.Sprintf("after step %d", st.ID)); err == nil {
				after = a
			} else {
				return event.StatusFailed, err.Error()
			}
			signals = o.trc.poll(ctx, after, time.Duration(ex.Ms)*time.Millisecond)
			o.publishSignals(ctx, signals)
			if ex.err != nil {
				why, execErr = ex.Error, ex.err
				break
			}
			c := ex.check
			v := verdict(true, 1, "%s done; no expected state to check", ex.Action)
			if c != nil {
				v = o.modelJudge(ctx, c, after, verdictOf(ex.rec))
			}
			o.publishVerdict(ctx, st, c, v, "post")
			if v.Review {
				return event.StatusReview, v.Evidence
			}
			if v.sure() {
				if (ex.Via == "rule" || ex.Via == "model") && ex.Element != nil {
					if err := o.exec.cache.put(ctx, CacheEntry{Step: stepText(st), Fingerprint: ex.Fingerprint, Action: ex.Action, Params: ex.Params, Element: ex.Element, Via: ex.Via}); err != nil {
						o.rt.log.Warn("agent: replay cache", "err", err)
					}
				}
				o.state(ctx, stepState(st, "VALIDATED"))
				o.summarize(ctx, st, "ok")
				o.cur = after
				return event.StatusOK, ""
			}
			if ex.Via == "cache" {
				o.exec.cache.drop(stepText(st), ex.Fingerprint)
				ro.noCache = true
			}
			why = v.Evidence
		}
		if ctx.Err() != nil {
			return event.StatusFailed, ctx.Err().Error()
		}
		for _, sg := range signals {
			if sg.Kind == event.SigCrash || sg.Kind == event.SigANR {
				crashed = fmt.Sprintf("%s: %s (%s); ", sg.Kind, sg.App, truncate(sg.Detail, 80))
			}
		}
		why = crashed + why
		if attempt >= MaxRetries {
			o.failedAt[stepText(st)] = after.Fingerprint()
			o.summarize(ctx, st, "FAIL")
			return event.StatusFailed, why
		}
		strategy, target := chooseStrategy(st, after, signals, execErr, tried, o.app)
		if strategy == "" {
			o.failedAt[stepText(st)] = after.Fingerprint()
			o.summarize(ctx, st, "FAIL")
			return event.StatusFailed, why + " (no recovery strategy left)"
		}
		tried[strategy] = true
		re := retryEvent{Step: st.ID, Attempt: attempt + 1, Strategy: strategy, Reason: why, Signals: signals, Target: target}
		if err := o.recover(ctx, strategy, target, st, after, &ro); err != nil {
			re.Error = err.Error()
		}
		o.bus.publish(ctx, event.RoleRecovery, event.RoleOrchestrator, event.EvRetry, re, event.StatusInfo, 0)
		o.state(ctx, stepState(st, "RETRYING"))
	}
}

func (o *orchestrator) publishSignals(ctx context.Context, signals []event.Signal) {
	for _, s := range signals {
		status := event.StatusInfo
		if s.Kind == event.SigCrash || s.Kind == event.SigANR {
			status = event.StatusFailed
		}
		o.bus.publish(ctx, event.RoleTracer, event.RoleOrchestrator, event.EvSignal, s, status, 1)
	}
}

// timeout is how long the step's expected state may take to hold.
func (o *orchestrator) timeout(st Step) time.Duration {
	if st.Wait {
		return o.rt.cfg.WaitTimeout
	}
	return o.rt.cfg.CheckTimeout
}

// typed is the text a call leaves in the field it types into: Input's
// value when it replaces the field's text; "" for any other call. (What
// an action leaves behind is not in its declaration; Input's is worth
// checking, as a field may drop keys.)
func typed(c action.Call) string {
	if p, ok := c.Params.(*action.InputParams); ok && p.Mode != "append" && p.Mode != "clear" {
		return p.Value
	}
	return ""
}

// fieldCheck is what typing must leave: the field reads the value (a
// password field's text is hidden, so there only the field is checked).
func fieldCheck(e *scene.Element, value string) *check.Check {
	if e == nil || e.Flags.Password || value == "" {
		return nil
	}
	target := action.Locator{ID: e.ID}
	if e.ResourceID != "" {
		target.ID = e.ResourceID
	}
	return &check.Check{Kind: check.TextEquals, Target: target, Text: value}
}

// modelJudge asks the validator model when the rules found no target for
// an exists check: the target may be a description only a model can match.
func (o *orchestrator) modelJudge(ctx context.Context, c *check.Check, s *scene.Scene, v Verdict) Verdict {
	if o.judge == nil || v.Pass || c.Kind != check.Exists || s == nil {
		return v
	}
	mv, err := askValidator(ctx, o.judge, c.String(), s)
	if err != nil {
		return v
	}
	return mv
}

// askValidator asks the validator model for a verdict on assertion.
func askValidator(ctx context.Context, m *roleModel, assertion string, s *scene.Scene) (Verdict, error) {
	resp, err := m.complete(ctx, validatorRequest(assertion, s))
	if err != nil {
		return Verdict{}, err
	}
	raw, err := jsonObject(resp.Text)
	if err != nil {
		return Verdict{}, err
	}
	var v Verdict
	if err := json.Unmarshal(raw, &v); err != nil {
		return Verdict{}, fmt.Errorf("validator model: %w", err)
	}
	if v.Confidence < 0 || v.Confidence > 1 {
		return Verdict{}, fmt.Errorf("validator model: confidence %v is not in [0, 1]", v.Confidence)
	}
	v.Review = v.Confidence >= ReviewLow && v.Confidence < ReviewHigh
	if v.Pass && v.Confidence < ReviewLow {
		v.Pass = false
		v.Evidence += " (too unsure to pass)"
	}
	v.Evidence = "model: " + v.Evidence
	return v, nil
}

// act runs a recovery's call on screen s; it is recorded like any step.
func (o *orchestrator) act(ctx context.Context, call action.Call, s *scene.Scene) error {
	return o.obs.run(ctx, "recover: "+call.String(), call, nil, 0, s).Err
}

// recover applies a strategy through the executor's action space.
func (o *orchestrator) recover(ctx context.Context, strategy, target string, st Step, s *scene.Scene, ro *resolveOpts) error {
	switch strategy {
	case StratRelaunch:
		return o.act(ctx, action.Launch.MustCall(&action.AppParams{App: target}), s)
	case StratDismiss:
		return o.act(ctx, action.Tap.MustCall(&action.TapParams{Locate: action.Locator{ID: target}}), s)
	case StratScroll:
		l, ok := stepLocator(st)
		if !ok {
			return fmt.Errorf("%s: the step names no element to scroll to", strategy)
		}
		return o.act(ctx, action.Scroll.MustCall(&action.ScrollParams{Direction: "down", UntilVisible: &l}), s)
	case StratLocator:
		ro.anyMatch, ro.noCache = true, true
		return nil
	case StratWait:
		return o.act(ctx, action.Sleep.MustCall(&action.SleepParams{Ms: recoveryWait}), s)
	}
	return fmt.Errorf("unknown strategy %q", strategy)
}
