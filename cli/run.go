//go:build !apexlite

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/ocr"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/report"
	"github.com/apexagent/apex/runner"
	"github.com/apexagent/apex/script"
	"github.com/apexagent/apex/store"
	"github.com/spf13/cobra"
)

// RunOptions are the inputs of `apex run`.
type RunOptions struct {
	Files       []string
	Device      DeviceFlags
	Concurrency int
	Retry       int
	Summary     string      // --summary FILE.json
	JUnit       string      // --junit FILE.xml
	ReportDir   string      // --report-dir: where runs and reports are recorded
	Report      string      // --report: files (screenshots beside the HTML) or inline (one HTML)
	Output      string      // --output: the results JSON of a single script
	Config      string      // --config: apex.yaml with the model settings of ai* steps
	model       *llm.Config // loaded once from Config and the environment
	ocr         ocr.Engine  // one Tesseract for the batch, started on first need
	OCR         string      // --ocr: auto, always or off
	Data        string      // --data rows.csv: run every script once per row
	Tags        string      // --tags smoke,!slow: run the scripts with these tags
	// Terminal forces (true) or disables (false) the live progress display;
	// nil detects it from Out.
	Terminal *bool

	// Seams for tests; nil means the real thing.
	Open   func(ctx context.Context, env *Env, f *DeviceFlags) (device.Driver, device.Target, func(), error)
	Runner *runner.Options // template: timings; Store, Device, OnStep are set per run
}

func newCmdRun(env *Env) *cobra.Command {
	opts := &RunOptions{}
	cmd := &cobra.Command{
		Use:   "run FILE|SUITE…",
		Short: "Run YAML scripts on a device and record a report of every step",
		Long: `Run Midscene-compatible YAML scripts on a device, step by step: observe the
screen, find the target (by text, id, description or type, no model
needed), act, wait for the screen to settle, verify, and record screenshots,
the Scene, the action and its timings. Each run leaves an HTML report.

Scripts run in parallel with --concurrency (with --sim, one simulated phone
per worker); failed scripts are retried with --retry. The exit code is 0
only when every script passed. Ctrl-C stops the running steps and still
finishes every record.

A folder or an apex.suite.yaml runs a suite (its order, tags and defaults);
--tags picks scripts by their tags: and --data runs each once per CSV row
(docs/scripts.md).`,
		Example: `  apex run --sim examples/shop-checkout.yaml
  apex run --sim --concurrency 3 --junit results.xml examples/*.yaml
  apex run --device emulator-5554 --retry 1 smoke.yaml
  apex run --sim --tags smoke examples/suite
  apex run --sim --data accounts.csv examples/suite/sign-in.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("name the scripts to run (examples/*.yaml are some that pass on --sim)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			return runRun(cmd.Context(), env, opts)
		},
	}
	opts.Device.Register(cmd)
	f := cmd.Flags()
	f.IntVarP(&opts.Concurrency, "concurrency", "c", 1, "scripts to run at once (with --sim, each on its own simulated phone; otherwise give one --device per worker, comma-separated)")
	f.IntVar(&opts.Retry, "retry", 0, "run a failed script again up to N times")
	f.StringVar(&opts.Summary, "summary", "", "write a JSON summary of every script to this file")
	f.StringVar(&opts.JUnit, "junit", "", "write a JUnit XML report (one testsuite per script, one testcase per task) to this file")
	f.StringVar(&opts.OCR, "ocr", "auto", "read the screen with OCR: auto (only when the UI tree cannot be trusted: stale, system windows only, text in pixels), always, or off")
	f.StringVar(&opts.Config, "config", "", configUsage)
	f.StringVar(&opts.Output, "output", "", "write the script's results (aiQuery, aiNumber, aiString, aiBoolean, aiLocate, named runAdbShell) to this JSON file, as Midscene does (default: the script's android.output or ios.output); one script only")
	f.StringVar(&opts.Report, "report", "files", "files: the report refers to its screenshots beside it (small, for long runs); inline: one HTML file with compact screenshots inside, to mail or attach to a CI run")
	f.StringVar(&opts.Data, "data", "", "run every script once per row of this CSV file (a header naming the columns, used as ${column}); each row is its own run and JUnit testsuite")
	f.StringVar(&opts.Tags, "tags", "", "run only the scripts with one of these tags (tags: in a script), comma-separated; !tag leaves out the scripts with it")
	f.StringVar(&opts.ReportDir, "report-dir", "", "where runs and their reports are recorded (default $"+RunsDirEnv+" or "+DefaultRunsDir+")")
	return cmd
}

// runJob is one run of a batch: a script, with its data row.
type runJob struct {
	runner.Job
	index int
}

func runRun(ctx context.Context, env *Env, opts *RunOptions) error {
	start := time.Now()
	if _, err := perceive.ParseMode(opts.OCR); err != nil {
		return fmt.Errorf("--ocr: %w", err)
	}
	if opts.Report != "" && opts.Report != "files" && opts.Report != "inline" {
		return fmt.Errorf("--report %q: give files or inline", opts.Report)
	}
	if opts.Output != "" && len(opts.Files) > 1 {
		return fmt.Errorf("--output %s: give one script (each script's android.output or ios.output names its own file)", opts.Output)
	}
	if opts.Concurrency < 1 {
		return fmt.Errorf("--concurrency %d: give 1 or more", opts.Concurrency)
	}
	if opts.Retry < 0 {
		return fmt.Errorf("--retry %d: give 0 or more", opts.Retry)
	}
	// Read the model settings once, before any device starts, so a bad
	// apex.yaml fails the batch at once.
	model, err := loadModelConfig(env, opts.Config, nil)
	if err != nil {
		return err
	}
	opts.model = model
	engine := ocr.NewLazy(&ocr.TesseractOptions{Log: env.Log})
	defer engine.Close()
	opts.ocr = engine
	if opts.Open == nil {
		opts.Open = openDevice
	}
	dir := opts.ReportDir
	if dir == "" {
		dir = defaultRunsDir()
	}
	planned, err := runner.Plan(opts.Files, runner.PlanOptions{Tags: opts.Tags, Data: opts.Data, Load: script.Options{Action: knownAction}})
	if err != nil {
		return err
	}
	outs := make([]runner.Outcome, len(planned))
	var jobs []runJob
	for i, j := range planned {
		outs[i] = runner.Outcome{File: j.File, Row: j.Row, Err: j.Err}
		if j.Err == nil {
			jobs = append(jobs, runJob{Job: j, index: i})
		}
	}
	st, err := openRuns(env, dir)
	if err != nil {
		return fmt.Errorf("open the runs directory %s: %w", dir, err)
	}
	defer st.Close()

	devices := []string{""}
	if opts.Device.ID != "" {
		devices = strings.Split(opts.Device.ID, ",")
		for i, d := range devices {
			devices[i] = strings.TrimSpace(d)
			// Each worker leases its device for a script at a time, so a
			// second worker on the same one would find it in use.
			if slices.Contains(devices[:i], devices[i]) {
				return fmt.Errorf("--device lists %s twice: give each device once (one worker drives each)", devices[i])
			}
		}
	}
	workers := opts.Concurrency
	if !opts.Device.Sim && workers > len(devices) {
		if workers > 1 {
			fmt.Fprintf(env.Progress(), "apex: --concurrency %d without --sim needs %d devices (--device A,B,…); running %d at a time\n", workers, workers, len(devices))
		}
		workers = len(devices)
	}
	workers = max(1, min(workers, len(jobs)))
	noteSimTargets(ctx, env, opts, jobs)
	prog := newProgress(env.Progress(), opts.Terminal, len(outs))
	for _, o := range outs {
		if o.Err != nil {
			prog.finished(o)
		}
	}
	queue := make(chan runJob)
	var wg sync.WaitGroup
	for w := range workers {
		flags := opts.Device
		flags.ID = devices[w%len(devices)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				o := runScript(ctx, env, opts, st, flags, j, prog)
				outs[j.index] = o
				prog.finished(o)
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case queue <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	for i := range outs {
		if outs[i].Result == nil && outs[i].Err == nil {
			outs[i].Err = fmt.Errorf("not run: %w", context.Cause(ctx))
			prog.finished(outs[i])
		}
	}
	prog.done()
	return finishBatch(ctx, env, opts, outs, time.Since(start))
}

// runScript runs one script, retrying a failure up to opts.Retry times.
func runScript(ctx context.Context, env *Env, opts *RunOptions, st *store.Store, flags DeviceFlags, j runJob, prog *progress) runner.Outcome {
	o := runner.Outcome{File: j.File, Row: j.Row}
	retry := opts.Retry
	if retry == 0 && j.Suite != nil {
		retry = j.Suite.Defaults.Retries
	}
	for attempt := 0; attempt <= retry; attempt++ {
		if ctx.Err() != nil {
			break
		}
		o.Attempts = attempt + 1
		res, report, err := attemptScript(ctx, env, opts, st, flags, j, prog, attempt)
		o.Result, o.Report, o.Err = res, report, err
		if o.Passed() || ctx.Err() != nil {
			break
		}
		if attempt < retry {
			prog.note(fmt.Sprintf("retry %s (attempt %d of %d): %s", j.Name(), attempt+2, retry+1, o.Reason()))
		}
	}
	return o
}

// attemptScript opens a device, runs the script once and writes its report.
func attemptScript(ctx context.Context, env *Env, opts *RunOptions, st *store.Store, flags DeviceFlags, j runJob, prog *progress, attempt int) (*runner.Result, string, error) {
	if !flags.Sim && flags.ID == "" {
		switch j.Script.Target.Kind {
		case "sim":
			flags.Sim = true
		case "android", "ios":
			flags.ID = j.Script.Target.DeviceID
			if j.Script.Target.WDAURL != "" {
				flags.ID = wdaPrefix + j.Script.Target.WDAURL
			}
		}
	}
	if !flags.Sim && flags.ID == "" && j.Suite != nil {
		// The suite's device, where neither the command line nor the
		// script names one: an ID, sim or sim:ios.
		switch d := j.Suite.Defaults.Device; d {
		case "sim", "sim:android", "sim:ios":
			flags.Sim, flags.SimPlatform = true, strings.TrimPrefix(strings.TrimPrefix(d, "sim"), ":")
		default:
			flags.ID = d
		}
	}
	if flags.Sim && flags.SimPlatform == "" && j.Script.Target.Kind == "sim" {
		flags.SimPlatform = j.Script.Target.Platform
	}
	drv, target, release, err := opts.Open(ctx, env, &flags)
	if err != nil {
		return nil, "", fmt.Errorf("open a device for %s: %w", j.Name(), err)
	}
	defer release()
	ro := runner.Options{}
	if opts.Runner != nil {
		ro = *opts.Runner
	}
	ro.Store, ro.Device, ro.Log = st, target.ID, env.Log
	if opts.Output != "" {
		ro.Output = opts.Output
	}
	mode, _ := perceive.ParseMode(opts.OCR) // checked in runRun
	ro.Perception.Mode = mode
	// ai* steps run on the AI runtime, with the replay cache beside the
	// script (written only when a step is resolved and succeeds).
	cache, err := agent.OpenCache(ctx, agent.CachePath(j.File), st)
	if err != nil {
		return nil, "", err
	}
	if ro.Perception.Engine == nil {
		ro.Perception.Engine = opts.ocr
	}
	rt, err := agentFor(env, opts.model, cache, nil, mode, ro.Perception.Engine)
	if err != nil {
		return nil, "", err
	}
	ro.AI = rt
	ro.Space = action.ForPlatform(target.Platform)
	ro.Values = j.Values
	if j.Suite != nil && j.Suite.Defaults.Timeout > 0 && ro.FindTimeout == 0 {
		ro.FindTimeout = j.Suite.Defaults.Timeout
	}
	name := strings.TrimSuffix(filepath.Base(j.File), filepath.Ext(j.File))
	if j.Row > 0 {
		name = fmt.Sprintf("%s [row %d]", name, j.Row)
	}
	if attempt > 0 {
		name = fmt.Sprintf("%s (attempt %d)", name, attempt+1)
	}
	if j.Row > 0 || attempt > 0 {
		ro.Name = name
	}
	ro.OnStep = func(p runner.Progress) { prog.step(j.Name(), p) }
	res, err := runner.Run(ctx, drv, j.Script, &ro)
	if err != nil {
		return res, "", err
	}
	path, rerr := report.WriteWith(context.WithoutCancel(ctx), st, res.Run.ID, &report.Options{Inline: opts.Report == "inline"})
	if rerr != nil {
		env.Log.Warn("write report", "run", res.Run.ID, "err", rerr)
		prog.note(fmt.Sprintf("%s: could not write the report: %v", j.Name(), rerr))
	}
	return res, path, nil
}

// finishBatch writes the summary and JUnit files, prints the batch's
// outcome (the JSON summary with --json, else a line when the batch had
// several scripts) and picks the exit code.
func finishBatch(ctx context.Context, env *Env, opts *RunOptions, outs []runner.Outcome, took time.Duration) error {
	var errs []error
	if opts.Summary != "" {
		errs = append(errs, writeFileWith(opts.Summary, func(w io.Writer) error { return runner.WriteSummary(w, outs) }))
	}
	if opts.JUnit != "" {
		errs = append(errs, writeFileWith(opts.JUnit, func(w io.Writer) error { return runner.WriteJUnit(w, outs) }))
	}
	if env.JSON {
		errs = append(errs, env.PrintJSON(runner.Summarize(outs)))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	failed := 0
	for _, o := range outs {
		if !o.Passed() {
			failed++
		}
	}
	if !env.JSON && len(outs) > 1 {
		if _, err := fmt.Fprintln(env.Out, batchLine(outs, took)); err != nil {
			return err
		}
	}
	switch {
	case ctx.Err() != nil:
		return &ExitError{Code: 130, Err: fmt.Errorf("interrupted: %d of %d scripts did not pass", failed, len(outs))}
	case failed > 0:
		return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d scripts did not pass", failed, len(outs))}
	}
	return nil
}

// noteSimTargets says when scripts whose target is sim: will run on an
// in-process simulated phone although real devices are attached: without
// --sim or --device that is what the script asks for, but a person who
// attached a phone likely meant it.
func noteSimTargets(ctx context.Context, env *Env, opts *RunOptions, jobs []runJob) {
	if opts.Device.Sim || opts.Device.ID != "" {
		return
	}
	var files []string
	for _, j := range jobs {
		if j.Script.Target.Kind == "sim" {
			files = append(files, j.File)
		}
	}
	if len(files) == 0 {
		return
	}
	// Only an adb server already running is asked: a note is no reason
	// to start one.
	c, err := adb.NewClient(&adb.Options{Log: env.Log})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, completeTimeout)
	defer cancel()
	ts, _ := android.NewHost(c, &android.HostOptions{Log: env.Log}).Targets(ctx)
	var ready []string
	for _, t := range ts {
		if t.Ready() {
			ready = append(ready, t.ID)
		}
	}
	if len(ready) > 0 {
		fmt.Fprintf(env.Progress(), "apex: %s target sim:, so they run on a simulated phone in this process although %s attached; to run them there, give --device %s\n",
			strings.Join(files, ", "), strings.Join(ready, ", ")+map[bool]string{true: " is", false: " are"}[len(ready) == 1], ready[0])
	}
}

// batchLine is the one-line outcome of a batch: how many scripts ended
// how, and how long the batch took.
func batchLine(outs []runner.Outcome, took time.Duration) string {
	counts := map[string]int{}
	for _, o := range outs {
		counts[o.Status()]++
	}
	var parts []string
	for _, st := range []string{store.StatusPassed, store.StatusFailed, store.StatusError, store.StatusCanceled} {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	return fmt.Sprintf("%d scripts: %s in %s", len(outs), strings.Join(parts, ", "), since(took))
}

func writeFileWith(path string, write func(io.Writer) error) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// knownAction tells the script loader which generic steps name an action
// (of any platform) and checks their params.
func knownAction(name string, params json.RawMessage) (bool, error) {
	for _, p := range []device.Platform{device.Android, device.IOS} {
		if a, ok := action.ForPlatform(p).Lookup(name); ok {
			if params == nil {
				return true, nil
			}
			_, err := a.Decode(params)
			return true, err
		}
	}
	return false, nil
}

// since formats a duration for progress lines.
func since(d time.Duration) string { return d.Round(10 * time.Millisecond).String() }
