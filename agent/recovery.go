package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/scene"
)

// MaxRetries is how often recovery retries a step before the planner is
// asked to re-plan.
const MaxRetries = 2

// Recovery strategies; a step never gets the same one twice.
const (
	StratRelaunch = "relaunch_app"    // the app crashed: start it again
	StratDismiss  = "dismiss_popup"   // a dialog covers the screen: close it
	StratScroll   = "scroll_first"    // the target is not on screen: scroll to it
	StratLocator  = "another_locator" // a stale cached target: resolve afresh, without the cache
	StratWait     = "wait"            // the screen may be slow: wait, then look again
)

// retryEvent is the retry event's payload.
type retryEvent struct {
	Step     int            `json:"step_id"`
	Attempt  int            `json:"attempt"` // the attempt about to run (1 or 2)
	Strategy string         `json:"strategy"`
	Reason   string         `json:"reason"` // why the last attempt failed
	Signals  []event.Signal `json:"signals,omitempty"`
	Target   string         `json:"target,omitempty"` // what the strategy acts on
	Error    string         `json:"error,omitempty"`  // the strategy's own action failed
}

// dismissWords name the controls that close a dialog or popup.
var dismissWords = []string{"close", "dismiss", "not now", "no thanks", "skip", "later", "got it", "cancel",
	"关闭", "取消", "以后再说", "跳过", "知道了", "暂不"}

// dismissControl finds a control that closes a popup, unless it is what
// the step wants.
func dismissControl(s *scene.Scene, st Step) (scene.Element, bool) {
	best, rank := scene.Element{}, len(dismissWords)
	for _, e := range s.Elements {
		if e.System || !e.Control() {
			continue
		}
		l := strings.ToLower(strings.TrimSpace(label(e)))
		if l == "" || strings.EqualFold(l, stepTarget(st)) {
			continue
		}
		for i, w := range dismissWords {
			if l == w && i < rank {
				best, rank = e, i
			}
		}
	}
	return best, rank < len(dismissWords)
}

// choose picks the next strategy from the latest Scene, the tracer's
// signals and why the attempt failed. The rules are ordered by how much
// they explain: a crash first, then a popup, then a missing target, then
// slowness. An ambiguous target has none: no strategy may pick one of its
// candidates by position (the executor's model chooses, or the step fails
// naming them); nor has a switch only mentioned on this screen (the
// planner must go to its page).
func chooseStrategy(st Step, s *scene.Scene, signals []event.Signal, execErr error, tried map[string]bool, app string) (strategy, target string) {
	for _, sg := range signals {
		if crashed(sg) && !tried[StratRelaunch] && sg.App != "" {
			return StratRelaunch, sg.App
		}
	}
	if s != nil && !tried[StratRelaunch] && app != "" && s.Package != "" && s.Package != app && strings.Contains(s.Package, "launcher") {
		// The app vanished to the home screen without a log line.
		return StratRelaunch, app
	}
	if s != nil && !tried[StratDismiss] {
		if e, ok := dismissControl(s, st); ok {
			return StratDismiss, e.ID
		}
	}
	want := stepTarget(st)
	notFound := execErr != nil && errors.Is(execErr, action.ErrNotFound)
	var amb *locate.AmbiguousError
	if execErr != nil && (errors.As(execErr, &amb) || errors.Is(execErr, errMentionedOnly)) {
		return "", ""
	}
	if notFound && want != "" && !tried[StratScroll] && scrollable(s) {
		return StratScroll, want
	}
	if !tried[StratWait] {
		return StratWait, ""
	}
	if !tried[StratLocator] && want != "" {
		return StratLocator, want
	}
	if !tried[StratScroll] && want != "" && scrollable(s) {
		return StratScroll, want
	}
	return "", ""
}

func scrollable(s *scene.Scene) bool {
	if s == nil {
		return false
	}
	for _, e := range s.Elements {
		if e.Flags.Scrollable && !e.System {
			return true
		}
	}
	return false
}

// recoveryWait is how long the wait strategy waits.
const recoveryWait = 700

// repeatEvent is the repeat event's payload: whether a retry may run the
// step's action again after an attempt that acted, and the evidence.
type repeatEvent struct {
	Step   int    `json:"step_id"`
	Action string `json:"action"`
	// Effect is the action's declared effect (action.Effect): idempotent
	// actions repeat freely, cumulative ones only on evidence.
	Effect string `json:"effect"`
	Repeat bool   `json:"repeat"`
	// Unchanged: the screen now is the one the action acted on, in its
	// tree and in its pixels outside the status bar (perceive.Unchanged).
	Unchanged bool `json:"unchanged"`
	// Expected is the state the step names, and Absent whether it is
	// missing from the screen now.
	Expected *check.Check `json:"expected,omitempty"`
	Absent   bool         `json:"absent"`
	Evidence string       `json:"evidence"`
}

// mayRepeat decides whether the next attempt of st may run its action
// again after last, an attempt that drove the device, now that the screen
// is now. An idempotent action may (and so may a step that sets its own
// target's state: the pre-check skips it once the state holds). A
// cumulative one (a tap counts, a key types) may only when nothing shows
// that it took effect: the screen is the one it acted on in every respect
// — tree, focus, keyboard, field texts, checked states and the pixels
// outside the status bar — and the step names a state it should have made
// that is absent. "The screen changes" is no such state: a tap whose
// effect nothing shows (a hidden counter) leaves the screen as it was,
// exactly as a tap the phone lost does. The decision and its evidence are
// an event; why says what to do instead.
func (o *orchestrator) mayRepeat(ctx context.Context, st Step, last *engine.Record, now *perceive.Screen) (ok bool, why string) {
	e := repeatEvent{Step: st.ID, Action: last.Call.Name(), Effect: last.Call.Effect().String(), Expected: st.Expected}
	defer func() {
		e.Repeat = ok
		status := event.StatusOK
		if !ok {
			status = event.StatusFailed
		}
		o.bus.publish(ctx, event.RoleRecovery, event.RoleOrchestrator, event.EvRepeat, e, status, 1)
	}()
	if last.Call.Effect() == action.Idempotent || setsState(st) {
		e.Evidence = "running it again leaves the same state"
		if setsState(st) {
			e.Evidence = "it sets its target's state, which is checked before each run"
		}
		return true, ""
	}
	if now != nil {
		if err := o.obs.s.Perceiver().Shoot(ctx, now); err != nil {
			e.Evidence = err.Error()
			return false, fmt.Sprintf("%s is not idempotent and the screen could not be compared (%v): not repeated", e.Action, err)
		}
	}
	e.Unchanged, e.Evidence = perceive.Unchanged(last.Before, now)
	if c := st.Expected; c != nil && c.Kind != check.LayoutChanged && now != nil {
		e.Absent = !judge(c, last.Before.Scene, now.Scene).Pass
	}
	switch {
	case !e.Unchanged:
		e.Evidence = "the screen changed since it acted: " + e.Evidence
		return false, fmt.Sprintf("%s acted and %s, so it may have taken effect; it is not idempotent, so it was not repeated", e.Action, e.Evidence)
	case st.Expected == nil || st.Expected.Kind == check.LayoutChanged:
		e.Evidence += "; the step names no state to show whether it took effect"
		return false, fmt.Sprintf("%s acted and nothing on screen changed, but its effect may not show (a hidden counter); it is not idempotent, so it was not repeated: say what it should change (then check …)", e.Action)
	case !e.Absent:
		e.Evidence += "; the expected state holds now"
		return false, fmt.Sprintf("%s acted and %s holds now: not repeated", e.Action, st.Expected)
	}
	e.Evidence += "; " + st.Expected.String() + " is absent: the action did nothing"
	return true, ""
}
