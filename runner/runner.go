// Package runner executes scripts on a device: for every step it observes
// the screen, locates the target, acts through the action space, waits for
// the screen to settle, verifies, and records the step (screenshots, Scene,
// action, params, result, timings) in the store.
package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/script"
	"github.com/apexagent/apex/store"
)

// Options tune a run. Store is required; zero values mean the defaults.
type Options struct {
	Store *store.Store
	// Space is the action space; nil picks action.ForPlatform of the device.
	Space *action.Space
	// Device is the host-qualified device ID written in the record.
	Device string
	// Name of the run; default: the script's file name.
	Name string
	Log  *slog.Logger
	// Perception is how the screen is observed: OCR mode and engine (nil
	// starts a Tesseract on first need, when installed, stopped when the
	// run ends), Scene options, settle and poll timing.
	Perception perceive.Options
	// FindTimeout is how long a step waits for its target to appear
	// (default 5s); optional steps and steps with timeout: override it.
	FindTimeout time.Duration
	// WaitTimeout is waitFor's default timeout (10s); AssertTimeout is how
	// long an assert keeps re-checking before failing (2s).
	WaitTimeout, AssertTimeout time.Duration
	// OnStep, when set, is called after each step is recorded (from the
	// goroutine running the script).
	OnStep func(Progress)
	// Output is where the results JSON goes, as Midscene writes it (every
	// aiQuery, aiNumber, aiString, aiBoolean, aiLocate and named
	// runAdbShell result by its name); "" means the script's android.output
	// or ios.output, and none when that is empty too. It is written in
	// any case to output.json in the run directory.
	Output string
	// Values are the run's values besides those its steps store: the
	// columns of a data row (apex run --data).
	Values map[string]string
	// AI runs the steps that need a model or the controlled-language
	// planner (an *agent.Runtime): aiAct, aiAssert, aiWaitFor, the queries,
	// and targeted steps (aiTap, …) whose target the locator rules cannot
	// find; nil leaves them failing with agent.ErrNeedsModel.
	AI agent.AI
	// MaxSteps bounds the steps the run records (its repeats' included);
	// the step past it fails with ErrStepBudget. 0: no bound.
	MaxSteps int
}

// Progress reports one finished step.
type Progress struct {
	RunID  string
	Task   string
	Step   int // 1-based position in the script
	Steps  int // total steps in the script
	Name   string
	Status string // passed, failed, skipped
	Error  string
}

func (o *Options) withDefaults() Options {
	v := *o
	def := func(d *time.Duration, x time.Duration) {
		if *d <= 0 {
			*d = x
		}
	}
	def(&v.FindTimeout, 5*time.Second)
	def(&v.WaitTimeout, 10*time.Second)
	def(&v.AssertTimeout, 2*time.Second)
	if v.Log == nil {
		v.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return v
}

// Result is how a script run ended.
type Result struct {
	Script string
	Run    store.Run // as recorded, finished
	// Status is passed, failed, error (the device or Apex broke) or canceled.
	Status string
	// Reason says where and why the run did not pass.
	Reason string
	Tasks  []TaskResult
	// Steps counts the steps recorded, by how each ended: Canceled are
	// those the run's cancellation (Ctrl-C) stopped, not failures.
	Steps, Passed, Failed, Canceled, Skipped int
	// Outputs holds named results (aiLocate, aiQuery …), also written to
	// output.json in the run directory.
	Outputs  map[string]any
	Duration time.Duration
}

// TaskResult is how one task ended.
type TaskResult struct {
	Name     string
	Status   string // passed, failed, canceled, skipped
	Reason   string
	Steps    int
	Duration time.Duration
	// ContinueOnError tasks fail without failing the run.
	ContinueOnError bool
}

// run is the state of one script execution.
type run struct {
	opts    Options
	log     *slog.Logger
	store   *store.Store
	sess    *engine.Session
	space   *action.Space
	runID   string
	total   int
	n       int // steps recorded
	outputs map[string]any
	res     *Result
	// globals are the run's values from outside (the data row); top is
	// the script's own scope.
	globals, top *scope
}

// platform is the device's platform for the record: the action space's, or
// the device's own when the space is not given; "" when the device cannot
// say (the first step then reports why).
func (r *run) platform(ctx context.Context) string {
	sp, err := r.sess.Space(ctx)
	if err != nil || sp.Platform() == "any" {
		return ""
	}
	return sp.Platform()
}

// Run executes s on d and records it. The returned error is only about the
// record (the store failed); how the script went is in the Result. When ctx
// is cancelled the current step stops, the rest are recorded as skipped and
// the run is finished as canceled.
func Run(ctx context.Context, d device.Driver, s *script.Script, opts *Options) (*Result, error) {
	if opts == nil || opts.Store == nil {
		return nil, errors.New("runner: no store to record the run in (Options.Store)")
	}
	o := opts.withDefaults()
	r := &run{opts: o, log: o.Log, store: o.Store, space: o.Space, outputs: map[string]any{}, res: &Result{Script: s.File}}
	name := o.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(s.File), filepath.Ext(s.File))
	}
	started := time.Now()
	r.sess = engine.New(d, &engine.Options{Space: o.Space, Perception: o.Perception, FindTimeout: o.FindTimeout,
		ExpectTimeout: o.AssertTimeout, Recorder: engine.RecorderFunc(r.record), Log: o.Log})
	defer r.sess.Close()
	rec, err := r.store.StartRun(ctx, store.Run{Name: name, Script: s.File, Device: o.Device, Platform: r.platform(ctx)})
	if err != nil {
		return nil, fmt.Errorf("runner: start the record of %s: %w", s.File, err)
	}
	r.runID = rec.ID
	r.globals = newScope(nil)
	for k, v := range o.Values {
		r.globals.vals[k] = v
	}
	if s.Data != nil && len(o.Values) == 0 && len(s.Data.Rows) > 0 {
		// A script with data: run without a row runs with the first.
		for k, v := range s.Data.Rows[0].Values {
			r.globals.vals[k] = v
		}
	}
	r.top = newScope(r.globals)
	for _, p := range s.Params {
		r.top.vals[p.Name] = p.Value
	}
	for _, t := range s.Tasks {
		r.total += countSteps(t.Steps)
	}
	if s.Target.Launch != "" {
		r.total++
	}
	status, reason := r.execute(ctx, s)
	r.res.Status, r.res.Reason = status, reason
	r.res.Duration = time.Since(started)
	r.res.Outputs = r.outputs
	finishCtx := context.WithoutCancel(ctx)
	if len(r.outputs) > 0 {
		if err := writeOutputs(filepath.Join(rec.Dir, "output.json"), r.outputs); err != nil {
			r.log.Warn("write outputs", "err", err)
		}
	}
	if out := cmp.Or(r.opts.Output, s.Target.Output); out != "" {
		if err := writeOutputs(out, r.outputs); err != nil {
			r.log.Error("write the results JSON: check the output path", "script", s.File, "err", err)
		}
	}
	if err := r.store.FinishRun(finishCtx, r.runID, status, reason); err != nil {
		return r.res, fmt.Errorf("runner: finish the record of %s: %w", s.File, err)
	}
	if r.res.Run, err = r.store.Run(finishCtx, r.runID); err != nil {
		return r.res, fmt.Errorf("runner: read back run %s: %w", r.runID, err)
	}
	return r.res, nil
}

// execute runs the launch step and every task; it returns the run's status
// and reason.
func (r *run) execute(ctx context.Context, s *script.Script) (status, reason string) {
	space, err := r.sess.Space(ctx)
	if err != nil {
		return r.abort(ctx, s, 0, err, "setup", "connect")
	}
	r.space = space
	if s.Target.Launch != "" {
		st := script.Step{Kind: script.Launch, Key: "launch", Value: s.Target.Launch, Pos: s.Target.Pos}
		if err := r.leaf(ctx, frame{task: "launch", sc: r.top}, st, nil); err != nil {
			return r.abort(ctx, s, 0, err, "launch", StepName(st))
		}
	}
	status = store.StatusPassed
	for ti, t := range s.Tasks {
		tr := TaskResult{Name: t.Name, Status: store.StepPassed, Steps: len(t.Steps), ContinueOnError: t.ContinueOnError}
		tStart := time.Now()
		for si, st := range t.Steps {
			err := r.node(ctx, frame{task: t.Name, sc: r.top}, st)
			if err == nil {
				continue
			}
			if fatal(ctx, err) {
				status, reason := r.fatalStatus(ctx, err, t.Name, si, st)
				tr.Status, tr.Reason = store.StepFailed, err.Error()
				if status == store.StatusCanceled {
					tr.Status, tr.Reason = store.StepCanceled, reason
				}
				tr.Duration = time.Since(tStart)
				r.res.Tasks = append(r.res.Tasks, tr)
				r.skipRest(ctx, s, ti, si+1)
				return status, reason
			}
			tr.Status = store.StepFailed
			tr.Reason = fmt.Sprintf("step %d (%s: %v", si+1, where(err, st), err)
			for _, rest := range t.Steps[si+1:] {
				r.skip(ctx, frame{task: t.Name, sc: r.top}, rest, "an earlier step of the task failed")
			}
			break
		}
		tr.Duration = time.Since(tStart)
		r.res.Tasks = append(r.res.Tasks, tr)
		if tr.Status == store.StepFailed && !t.ContinueOnError {
			r.skipRest(ctx, s, ti+1, 0)
			return store.StatusFailed, fmt.Sprintf("task %q failed: %s", t.Name, tr.Reason)
		}
		if tr.Status == store.StepFailed {
			r.log.Info("task failed; continuing (continueOnError)", "task", t.Name, "reason", tr.Reason)
		}
	}
	return status, ""
}

// abort ends a run that broke before its tasks started.
func (r *run) abort(ctx context.Context, s *script.Script, _ int, err error, task, step string) (string, string) {
	r.skipRest(ctx, s, 0, 0)
	status, reason := r.fatalStatus(ctx, err, task, -1, script.Step{})
	if !fatal(ctx, err) {
		status = store.StatusFailed
		reason = fmt.Sprintf("%s (%s): %v", task, step, err)
	}
	return status, reason
}

// fatal reports whether an error ends the whole run: the device is gone or
// the run was cancelled.
func fatal(ctx context.Context, err error) bool { return engine.Fatal(ctx, err) }

func (r *run) fatalStatus(ctx context.Context, err error, task string, si int, st script.Step) (string, string) {
	at := fmt.Sprintf("task %q", task)
	if si >= 0 {
		at += fmt.Sprintf(", step %d (%s", si+1, where(err, st))
	}
	if ctx.Err() != nil {
		return store.StatusCanceled, fmt.Sprintf("canceled during %s: %v", at, context.Cause(ctx))
	}
	return store.StatusError, fmt.Sprintf("device lost during %s: %v", at, err)
}

// skipRest records every step from task ti, step si on as skipped.
func (r *run) skipRest(ctx context.Context, s *script.Script, ti, si int) {
	for ; ti < len(s.Tasks); ti++ {
		t := s.Tasks[ti]
		for _, st := range t.Steps[si:] {
			r.skip(ctx, frame{task: t.Name}, st, "the run stopped before this step")
		}
		if si == 0 && ti >= len(r.res.Tasks) {
			r.res.Tasks = append(r.res.Tasks, TaskResult{Name: t.Name, Status: store.StepSkipped, Steps: len(t.Steps), ContinueOnError: t.ContinueOnError, Reason: "not run"})
		}
		si = 0
	}
}

func posString(p script.Pos) string {
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}
