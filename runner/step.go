package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/script"
	"github.com/apexagent/apex/store"
)

// outcome is what executing one step produced, for its record.
type outcome struct {
	action string
	params json.RawMessage
	point  *device.Point
	result any
	// seen is the screen the step looked at (after waiting for its target),
	// when that differs from the screen before the step.
	seen *screen
	// acted means the device was driven, so the screen must settle again.
	acted bool
	// after is the settled screen after the step, when the step already
	// observed it (scrolling until something shows).
	after *screen
	// skipped is set when an optional step's target was absent.
	skipped string
}

// step executes one step and records it. It returns the step's error
// (nil when it passed or an optional step was skipped).
func (r *run) step(ctx context.Context, task string, st script.Step) error {
	start := time.Now()
	dev0 := r.timed.Spent()
	rec := store.Step{RunID: r.runID, Task: task, Name: StepName(st), Started: start}
	out := &outcome{}
	before, err := r.before(ctx)
	if err == nil {
		err = r.exec(ctx, st, before, out)
	}
	var after *screen
	if before != nil {
		seen := before
		if out.seen != nil {
			seen = out.seen
			if serr := r.shoot(ctx, seen); serr != nil && err == nil {
				err = serr
			}
		}
		after = seen
		if out.after != nil {
			after = out.after
		} else if out.acted && !fatal(ctx, err) {
			if s, serr := r.settle(ctx); serr == nil {
				after = s
			} else if err == nil {
				err = fmt.Errorf("observe after the step: %w", serr)
			}
		}
		if !fatal(ctx, err) {
			if serr := r.shoot(ctx, after); serr != nil && err == nil {
				err = serr
			}
		}
		rec.Before = before.PNG
		if out.seen != nil {
			rec.Before = out.seen.PNG
		}
		rec.Scene, _ = json.Marshal(seen.Scene)
		if after.PNG != nil {
			rec.After = after.PNG
		}
		r.cur = after
		if fatal(ctx, err) {
			r.cur = nil
		}
	}
	rec.Action, rec.Params, rec.Point = out.action, out.params, out.point
	if out.result != nil {
		rec.Result, _ = json.Marshal(out.result)
	}
	switch {
	case err != nil:
		rec.Status, rec.Error = store.StepFailed, err.Error()
		r.res.Failed++
	case out.skipped != "":
		rec.Status, rec.Error = store.StepSkipped, out.skipped
		r.res.Skipped++
	default:
		rec.Status = store.StepPassed
		r.res.Passed++
	}
	r.res.Steps++
	rec.Duration = time.Since(start)
	rec.DeviceTime = r.timed.Spent() - dev0
	r.record(ctx, rec)
	return err
}

// before returns the screen a step starts from: the previous step's settled
// screen, or a fresh settled observation.
func (r *run) before(ctx context.Context) (*screen, error) {
	if r.cur == nil {
		s, err := r.settle(ctx)
		if err != nil {
			return nil, fmt.Errorf("observe the screen: %w", err)
		}
		r.cur = s
	}
	if err := r.shoot(ctx, r.cur); err != nil {
		return nil, err
	}
	return r.cur, nil
}

// skip records a step that was not run.
func (r *run) skip(ctx context.Context, task string, st script.Step, why string) {
	r.res.Steps++
	r.res.Skipped++
	r.record(ctx, store.Step{RunID: r.runID, Task: task, Name: StepName(st), Status: store.StepSkipped, Error: why, Started: time.Now()})
}

// record writes a step even when ctx was cancelled, so the record of an
// interrupted run is complete.
func (r *run) record(ctx context.Context, rec store.Step) {
	r.n++
	saved, err := r.store.AddStep(context.WithoutCancel(ctx), rec)
	if err != nil {
		r.log.Error("record step", "run", r.runID, "step", rec.Name, "err", err)
	}
	if r.opts.OnStep != nil {
		r.opts.OnStep(Progress{RunID: r.runID, Task: rec.Task, Step: r.n, Steps: r.total, Name: rec.Name,
			Status: rec.Status, Error: rec.Error})
	}
	_ = saved
}

// StepName renders a step as a person wrote it: `tap: Search`.
func StepName(st script.Step) string {
	var arg string
	switch {
	case st.Kind == script.Input || st.Kind == script.AIInput:
		arg = fmt.Sprintf("%q into %s", st.Value, locString(st.Locator))
		if st.Mode == "clear" {
			arg = locString(st.Locator) + " (clear)"
		}
	case st.Assert != nil:
		arg = st.Assert.Op + " " + locString(st.Locator)
		if strings.HasPrefix(st.Assert.Op, "text") || strings.HasPrefix(st.Assert.Op, "number") || st.Assert.Op == "count" {
			arg = fmt.Sprintf("%s %s %v", locString(st.Locator), st.Assert.Op, assertWant(st.Assert))
		}
	case st.Locator != nil:
		arg = locString(st.Locator)
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

func locString(l *script.Locator) string {
	if l == nil {
		return "the focused element"
	}
	return l.String()
}

func assertWant(a *script.Assert) any {
	if strings.HasPrefix(a.Op, "text") {
		return fmt.Sprintf("%q", a.Text)
	}
	return a.Number
}

// errNoShell is returned for runAdbShell on a driver without a shell.
var errNoShell = fmt.Errorf("runAdbShell needs an Android device driven over adb: %w", device.ErrUnsupported)

// ErrNeedsModel marks steps that only a model can run; no AI runtime is
// configured.
var ErrNeedsModel = errors.New("needs a model")
