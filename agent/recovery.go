package agent

import (
	"errors"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/locate"
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
// naming them).
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
	if execErr != nil && errors.As(execErr, &amb) {
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
