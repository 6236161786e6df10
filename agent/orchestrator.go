package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/locate"
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
	// crash is the last crash or ANR the tracer saw in this task; every
	// later failure names it, re-plans included.
	crash   string
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
	start     *scene.Scene // the screen the task started on
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
	o.cur, o.start = sc, sc
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
		res, why, final := o.runStep(ctx, i)
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
		if final {
			// A re-plan would only repeat the steps before this one.
			o.state(ctx, "FAILED")
			return Failed, fmt.Sprintf("step %d (%s) failed: %s", st.ID, stepText(st), why)
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

// Step outcomes in summaries.
const (
	summaryOK      = "ok"
	summarySkipped = "skipped" // its expected state held already
	summaryFailed  = "failed"
)

// summaryEvent is the step_summary event's payload: how the step ended
// and, in at most 50 characters, the screen it reached (screenSummary) —
// not the step's text again, which the plan has.
type summaryEvent struct {
	Step    int    `json:"step_id"`
	Status  string `json:"status"`
	Summary string `json:"summary"`
	Text    string `json:"step"`
}

// summarize records how step st ended on screen sc; its mark and the
// screen's summary replace the step's log in later prompts.
func (o *orchestrator) summarize(ctx context.Context, st Step, status string, sc *scene.Scene) {
	s := screenSummary(sc)
	o.summaries = append(o.summaries, truncate(status+" "+s, summaryLen))
	o.bus.publish(ctx, event.RoleOrchestrator, event.RoleOrchestrator, event.EvStepSummary, summaryEvent{Step: st.ID, Status: status, Summary: s, Text: stepText(st)}, event.StatusInfo, 0)
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

// runStep runs step i with at most MaxRetries retries. It returns
// StatusOK, StatusReview or StatusFailed with the reason; final is set
// when no re-plan can help: a check that does not hold (the actions
// before it did what they could), or an ambiguous target with no model to
// choose.
func (o *orchestrator) runStep(ctx context.Context, i int) (status, why string, final bool) {
	st := o.steps[i]
	tried := map[string]bool{}
	heldFirst := false // the expected state held at the step's first attempt
	ro := resolveOpts{progress: o.progress(o.done)}
	var acted *engine.Record // the last attempt's record, when it drove the device
	for attempt := 0; ; attempt++ {
		// The screen the last step settled on is this step's start.
		sc := o.cur
		o.cur = nil
		if sc == nil || attempt > 0 {
			var err error
			if sc, err = o.observe(ctx, true, fmt.Sprintf("step %d attempt %d", st.ID, attempt)); err != nil {
				return event.StatusFailed, err.Error(), false
			}
		}
		// Idempotency: an expected state that already holds exactly means
		// the step's effect is there; doing it again would be a bug. Only
		// what is seen counts: absence (notExists) may be a dialog covering
		// the target, and a changed layout cannot hold before acting. And
		// only the goal state counts: not text in a field (the user's own
		// typing), nor a state an earlier step of this task may have made —
		// a first attempt skips only what held when the task began, a retry
		// only what this step's earlier attempt made. A step that sets its
		// own target's state (turn "Wi-Fi" off) skips whenever it holds.
		if c := st.Expected; c != nil && !st.Call.IsZero() && c.Kind != check.LayoutChanged && c.Kind != check.NotExists {
			v := judge(c, nil, goalScene(c, sc))
			held := v.Pass && v.Confidence >= 1
			switch {
			case setsState(st):
			case attempt == 0:
				heldFirst = held
				held = held && holds(c, o.start)
			default:
				held = held && !heldFirst
			}
			if held {
				o.publishVerdict(ctx, st, c, v, "pre")
				o.bus.publish(ctx, event.RoleValidator, event.RoleOrchestrator, event.EvSkipped,
					map[string]any{"step_id": st.ID, "key": idempotencyKey(o.id, st), "evidence": v.Evidence}, event.StatusOK, v.Confidence)
				o.state(ctx, stepState(st, "SKIPPED"))
				o.summarize(ctx, st, summarySkipped, sc)
				o.cur = sc
				return event.StatusOK, "", false
			}
		}
		if acted != nil {
			// A retry runs the action again: only on evidence that the
			// last run did nothing, when running it twice is not the same
			// as once. Otherwise look again and plan again — by the rules
			// that is the same step, so the task fails instead, unless the
			// app crashed: then the screen moved because it was relaunched,
			// and a re-plan starts from what the relaunched app shows.
			if ok, why := o.mayRepeat(ctx, st, acted, o.obs.screen(sc)); !ok {
				o.failedAt[stepText(st)] = sc.Fingerprint()
				o.summarize(ctx, st, summaryFailed, sc)
				return event.StatusFailed, o.crash + why, o.crash == "" && o.planner.ruled(o.task.Goal)
			}
		}
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
				return event.StatusReview, v.Evidence, false
			}
			if v.sure() {
				o.state(ctx, stepState(st, "VALIDATED"))
				o.summarize(ctx, st, summaryOK, after)
				o.cur = after
				return event.StatusOK, "", false
			}
			why = v.Evidence
			signals = o.trc.poll(ctx, after, 0)
			o.publishSignals(ctx, signals)
		default:
			loopKey := stepText(st) + "@" + sc.Fingerprint()
			o.runs[loopKey]++
			if o.runs[loopKey] > maxLoop {
				return event.StatusFailed, fmt.Sprintf("loop: %s ran %d times on the same screen", stepText(st), maxLoop), false
			}
			key := idempotencyKey(o.id, st)
			o.bus.publish(ctx, event.RoleOrchestrator, event.RoleExecutor, event.EvActRequest, map[string]any{"step": st, "attempt": attempt, "idempotency_key": key}, event.StatusInfo, 0)
			ex := o.exec.execute(ctx, o.id, st, attempt, sc, ro, o.timeout(st))
			acted = nil
			if ex.rec != nil && ex.rec.Acted {
				acted = ex.rec
			}
			status := event.StatusOK
			if ex.Error != "" {
				status = event.StatusFailed
			}
			o.bus.publish(ctx, event.RoleExecutor, event.RoleOrchestrator, event.EvActed, ex, status, 0)
			if ctx.Err() != nil {
				return event.StatusFailed, ctx.Err().Error(), false
			}
			o.state(ctx, stepState(st, "EXECUTED"))
			if ex.rec != nil && ex.rec.After != nil && !engine.Fatal(ctx, ex.rec.Err) {
				// The screen the step settled on (and its check judged).
				after = ex.rec.After.Scene
				o.bus.publish(ctx, event.RoleObserver, event.RoleOrchestrator, event.EvObserved, observed(after, fmt.Sprintf("after step %d", st.ID)), event.StatusOK, 1)
			} else if a, err := o.observe(ctx, true, fmt.Sprintf("after step %d", st.ID)); err == nil {
				after = a
			} else {
				return event.StatusFailed, err.Error(), false
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
			if !v.sure() && !v.Review && o.borrowed(i) && !crashed(signals...) && !leftApp(sc, after) {
				// The state is the next step's check: the action did its part
				// when the screen changed (and the app neither crashed nor
				// vanished), and a state that does not hold fails that check,
				// not this action.
				lc := &check.Check{Kind: check.LayoutChanged}
				if cv := judge(lc, sc, after); cv.sure() {
					c, v = lc, verdict(true, cv.Confidence, "%s; step %d checks %s", cv.Evidence, st.ID+1, st.Expected)
				}
			}
			o.publishVerdict(ctx, st, c, v, "post")
			if v.Review {
				return event.StatusReview, v.Evidence, false
			}
			if v.sure() {
				if (ex.Via == "rule" || ex.Via == "model") && ex.Element != nil {
					if err := o.exec.cache.put(ctx, CacheEntry{Step: stepText(st), Fingerprint: ex.Fingerprint, Action: ex.Action, Params: ex.Params, Element: ex.Element, Via: ex.Via}); err != nil {
						o.rt.log.Warn("agent: replay cache", "err", err)
					}
				}
				o.state(ctx, stepState(st, "VALIDATED"))
				o.summarize(ctx, st, summaryOK, after)
				o.cur = after
				return event.StatusOK, "", false
			}
			if ex.Via == "cache" {
				o.exec.cache.drop(stepText(st), ex.Fingerprint)
				ro.noCache = true
			}
			why = v.Evidence
		}
		if ctx.Err() != nil {
			return event.StatusFailed, ctx.Err().Error(), false
		}
		for _, sg := range signals {
			if crashed(sg) {
				o.crash = fmt.Sprintf("%s: %s (%s); ", sg.Kind, sg.App, truncate(sg.Detail, 80))
			}
		}
		why = o.crash + why
		var amb *locate.AmbiguousError
		final := st.Call.IsZero() || (errors.As(execErr, &amb) || errors.Is(execErr, errMentionedOnly)) && o.exec.model == nil
		if attempt >= MaxRetries {
			o.failedAt[stepText(st)] = after.Fingerprint()
			o.summarize(ctx, st, summaryFailed, after)
			return event.StatusFailed, why, final
		}
		strategy, target := chooseStrategy(st, after, signals, execErr, tried, o.app)
		if st.Call.IsZero() && strategy != StratDismiss {
			// A check only looks: waiting or re-planning repeats nothing
			// that could make it hold, only a popup over it may hide it.
			strategy = ""
		}
		if strategy == "" {
			o.failedAt[stepText(st)] = after.Fingerprint()
			o.summarize(ctx, st, summaryFailed, after)
			if final {
				return event.StatusFailed, why, true
			}
			return event.StatusFailed, why + " (no recovery strategy left)", false
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

// leftApp reports whether the app of before vanished to the home screen
// in after (a crash whose log line the tracer has not read yet).
func leftApp(before, after *scene.Scene) bool {
	return after.Package != before.Package && strings.Contains(after.Package, "launcher")
}

// crashed reports whether any of signals is an app's crash or ANR.
func crashed(signals ...event.Signal) bool {
	for _, sg := range signals {
		if sg.Kind == event.SigCrash || sg.Kind == event.SigANR {
			return true
		}
	}
	return false
}

func (o *orchestrator) publishSignals(ctx context.Context, signals []event.Signal) {
	for _, s := range signals {
		status := event.StatusInfo
		if crashed(s) {
			status = event.StatusFailed
		}
		o.bus.publish(ctx, event.RoleTracer, event.RoleOrchestrator, event.EvSignal, s, status, 1)
	}
}

// borrowed reports whether step i's expected state is the check of the
// step after it (the rule planner lends an action the check that follows
// it, so it can be skipped when that state already holds).
func (o *orchestrator) borrowed(i int) bool {
	st := o.steps[i]
	if st.Expected == nil || st.Call.IsZero() || i+1 >= len(o.steps) {
		return false
	}
	next := o.steps[i+1]
	return next.Call.IsZero() && next.Expected != nil && reflect.DeepEqual(*next.Expected, *st.Expected)
}

// setsState reports whether st sets the checked state of the element it
// acts on: its expectation is that element's (un)checked state.
func setsState(st Step) bool {
	c := st.Expected
	if c == nil || (c.Kind != check.Checked && c.Kind != check.NotChecked) {
		return false
	}
	l, ok := stepLocator(st)
	return ok && reflect.DeepEqual(l, c.Target)
}

// goalScene is sc as evidence of a goal state: without editable fields,
// whose text may be what the user just typed, unless the check names
// that field.
func goalScene(c *check.Check, sc *scene.Scene) *scene.Scene {
	g := *sc
	g.Elements = make([]scene.Element, 0, len(sc.Elements))
	for _, e := range sc.Elements {
		if !e.Flags.Editable || namesField(c.Target, e) {
			g.Elements = append(g.Elements, e)
		}
	}
	return &g
}

// namesField reports whether l names the field e by an id.
func namesField(l action.Locator, e scene.Element) bool {
	id := strings.TrimPrefix(l.ID, "id:")
	return id != "" && (id == e.ID || id == e.ResourceID || strings.HasSuffix(e.ResourceID, "/"+id))
}

// holds reports whether c held exactly on sc, as goal state.
func holds(c *check.Check, sc *scene.Scene) bool {
	if sc == nil {
		return false
	}
	v := judge(c, nil, goalScene(c, sc))
	return v.Pass && v.Confidence >= 1
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

// askValidator asks the validator model for a verdict on assertion. A
// model that reads images sees the screenshot too (see show).
func askValidator(ctx context.Context, m *roleModel, assertion string, s *scene.Scene) (Verdict, error) {
	resp, err := m.complete(ctx, m.show(ctx, validatorRequest(assertion, s), s, regionOf(assertion, s)))
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
		ro.noCache = true
		return nil
	case StratWait:
		return o.act(ctx, action.Sleep.MustCall(&action.SleepParams{Ms: recoveryWait}), s)
	}
	return fmt.Errorf("unknown strategy %q", strategy)
}
