package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/script"
	"github.com/apexagent/apex/store"
)

// record keeps one step the engine ran: in the store, in the result's
// counts, and in the progress report.
func (r *run) record(ctx context.Context, rec *engine.Record) error {
	st := store.StepOf(r.runID, rec)
	switch st.Status {
	case store.StepFailed:
		r.res.Failed++
	case store.StepCanceled:
		r.res.Canceled++
	case store.StepSkipped:
		r.res.Skipped++
	default:
		r.res.Passed++
	}
	r.res.Steps++
	return r.add(ctx, st)
}

// skip records a step that was not run (a control step as one step).
func (r *run) skip(ctx context.Context, f frame, st script.Step, why string) {
	r.res.Steps++
	r.res.Skipped++
	if err := r.add(ctx, store.Step{RunID: r.runID, Task: f.task, Name: f.path + StepName(st), Status: store.StepSkipped, Error: why, Started: time.Now()}); err != nil {
		r.log.Error("record step", "run", r.runID, "step", StepName(st), "err", err)
	}
}

// add writes a step even when ctx was cancelled, so the record of an
// interrupted run is complete, and reports it.
func (r *run) add(ctx context.Context, rec store.Step) error {
	r.n++
	_, err := r.store.AddStep(context.WithoutCancel(ctx), rec)
	if r.opts.OnStep != nil {
		r.opts.OnStep(Progress{RunID: r.runID, Task: rec.Task, Step: r.n, Steps: max(r.total, r.n), Name: rec.Name,
			Status: rec.Status, Error: rec.Error})
	}
	return err
}

// StepName renders a step as a person wrote it: `tap: Search`.
func StepName(st script.Step) string {
	var arg string
	switch {
	case st.Kind == script.Input || st.Kind == script.AIInput:
		arg = fmt.Sprintf("%q into %s", st.Value, locString(st.Target))
		if st.Mode == "clear" {
			arg = locString(st.Target) + " (clear)"
		}
	case st.Assert != nil:
		arg = st.Assert.Op + " " + locString(st.Target)
		if strings.HasPrefix(st.Assert.Op, "text") || strings.HasPrefix(st.Assert.Op, "number") || st.Assert.Op == "count" {
			arg = fmt.Sprintf("%s %s %v", locString(st.Target), st.Assert.Op, assertWant(st.Assert))
		}
	case st.Kind == script.Read:
		arg = locString(st.Target) + " as " + st.As
	case st.Kind == script.If:
		arg = condString(st.Cond)
	case st.Kind == script.Repeat && st.Cond != nil:
		arg = fmt.Sprintf("until %s (max %d)", condString(st.Cond), st.Max)
	case st.Kind == script.Repeat:
		arg = fmt.Sprintf("%d times", st.Times)
	case st.Kind == script.RunFlow && st.Flow != nil:
		arg = st.Flow.Name
		if st.Flow.File != "" {
			arg = st.Flow.File
		}
	case len(st.Target) > 0:
		arg = locString(st.Target)
	case st.Prompt != "":
		arg = st.Prompt
	case st.Value != "":
		arg = st.Value
	case st.Swipe != nil && st.Swipe.Direction != "":
		arg = st.Swipe.Direction
	case st.Swipe != nil:
		arg = fmt.Sprintf("%v to %v", st.Swipe.From, st.Swipe.To)
	case st.Duration > 0:
		arg = st.Duration.String()
	case len(st.Params) > 0 && string(st.Params) != "{}":
		arg = string(st.Params)
	}
	if arg == "" {
		return st.Key
	}
	s := st.Key + ": " + arg
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}

func locString(target json.RawMessage) string {
	if len(target) == 0 {
		return "the focused element"
	}
	return targetString(target)
}

// targetString renders a step's target as a person wrote it: a prompt as
// its text, fields as their compact JSON ({"desc":"Close"}).
func targetString(target json.RawMessage) string {
	var prompt string
	if json.Unmarshal(target, &prompt) == nil {
		return prompt
	}
	return string(target)
}

func assertWant(a *script.Assert) any {
	if strings.HasPrefix(a.Op, "text") {
		return fmt.Sprintf("%q", a.Text)
	}
	return a.Number
}

// errNoShell is returned for runAdbShell on a driver without a shell.
var errNoShell = fmt.Errorf("runAdbShell needs an Android device driven over adb: %w", device.ErrUnsupported)
