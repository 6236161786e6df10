//go:build !apexlite

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/ocr"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/report"
	"github.com/apexagent/apex/store"
	"github.com/spf13/cobra"
)

// ActOptions are the inputs of `apex act`.
type ActOptions struct {
	Device DeviceFlags
	Goal   string
	Config string // --config: apex.yaml with a model: section
	Dir    string // --dir: where the task is recorded
	Launch string // --launch: an app to start first
	Cache  string // --cache: replay cache file
	OCR    string // --ocr: auto, always or off
	// Getenv reads the model settings (APEX_MODEL_*); default os.Getenv.
	Getenv func(string) string
}

func newCmdAct(env *Env) *cobra.Command {
	opts := &ActOptions{}
	cmd := &cobra.Command{
		Use:   `act "GOAL"`,
		Short: "Carry out a goal on a device with the AI runtime (or the offline rule planner)",
		Long: `Carry out a goal on a device: the planner splits it into steps, the executor
does each one through the action space, the validator checks the screen after
it, and recovery retries (at most twice, each time differently) or re-plans.
Every interaction is an event recorded in the runs directory.

With a model configured (apex.yaml's model: section, or APEX_MODEL_BASE_URL,
APEX_MODEL_NAME and APEX_MODEL_API_KEY) the goal can be plain words. Without
one, write it in the controlled language the rule planner reads:

  tap "Search", type "headphones", then check "Results" exists
  点击“搜索”，输入“耳机”，然后确认出现“结果”

The exit code is 0 when the task is done, 1 when it failed, 2 when a person
must review an uncertain check, 130 when cancelled.`,
		Example: `  apex act --sim --launch com.apex.login 'type "demo" into "Username", type "apex123" into "Password", tap "Sign in", then check "Welcome, demo!" exists'
  apex act --device emulator-5554 "add the cheapest headphones to the cart"
  apex act --sim --json '点击“购物清单”，确认出现“共 4 项，已完成 1 项”'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Goal = args[0]
			return actRun(cmd.Context(), env, opts)
		},
	}
	opts.Device.Register(cmd)
	f := cmd.Flags()
	f.StringVar(&opts.Config, "config", "", configUsage)
	f.StringVar(&opts.Dir, "dir", "", "where the task's events are recorded (default $"+RunsDirEnv+" or "+DefaultRunsDir+")")
	f.StringVar(&opts.Launch, "launch", "", "start this app (package name) before the task")
	cmd.RegisterFlagCompletionFunc("launch", completeApps)
	f.StringVar(&opts.Cache, "cache", "", "replay cache file (JSON); the runs directory's store keeps one too")
	f.StringVar(&opts.OCR, "ocr", "auto", "read the screen with OCR: auto (only when the UI tree cannot be trusted: stale, system windows only, text in pixels), always, or off")
	return cmd
}

func actRun(ctx context.Context, env *Env, opts *ActOptions) error {
	if strings.TrimSpace(opts.Goal) == "" {
		return errors.New(`say what to do: apex act "tap \"Settings\""`)
	}
	ocrMode, err := perceive.ParseMode(opts.OCR)
	if err != nil {
		return fmt.Errorf("--ocr: %w", err)
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	dir := opts.Dir
	if dir == "" {
		dir = getenv(RunsDirEnv)
	}
	if dir == "" {
		dir = DefaultRunsDir
	}
	st, err := openRuns(env, dir)
	if err != nil {
		return fmt.Errorf("open the runs directory %s: %w", dir, err)
	}
	defer st.Close()
	d, t, release, err := openDevice(ctx, env, &opts.Device)
	if err != nil {
		return err
	}
	defer release()
	if opts.Launch != "" {
		if err := d.LaunchApp(ctx, opts.Launch); err != nil {
			return launchError(t, &opts.Device, opts.Launch, err)
		}
	}
	cache, err := agent.OpenCache(ctx, opts.Cache, st)
	if err != nil {
		return err
	}
	run, err := st.StartRun(ctx, store.Run{Name: "act: " + truncateRunes(opts.Goal, 60), Device: t.ID, Platform: string(t.Platform)})
	if err != nil {
		return fmt.Errorf("record the task: %w", err)
	}
	onEvent := func(e event.Event) { printActEvent(env.Progress(), e) }
	rt, err := newAgent(env, opts.Config, getenv, cache, onEvent, ocrMode)
	if err != nil {
		return err
	}
	res, actErr := rt.Act(ctx, agent.Task{Goal: opts.Goal, Driver: d, DeviceID: t.ID, Space: action.ForPlatform(t.Platform), Store: st, RunID: run.ID,
		Steps: st.StepRecorder(run.ID)})
	status, reason := agent.RunStatus(res, actErr)
	if err := st.FinishRun(context.WithoutCancel(ctx), run.ID, status, reason); err != nil {
		env.Log.Warn("finish the record", "run", run.ID, "err", err)
	}
	if actErr != nil && res == nil {
		return actErr
	}
	reportPath, rerr := report.Write(context.WithoutCancel(ctx), st, run.ID)
	if rerr != nil {
		env.Log.Warn("write the report", "run", run.ID, "err", rerr)
	}
	if env.JSON {
		if err := env.PrintJSON(map[string]any{"run_id": run.ID, "dir": st.RunDir(run.ID), "report": reportPath, "device": t.ID, "result": res}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(env.Out, "%s\n", res.Summary)
		if res.ModelCalls > 0 {
			fmt.Fprintf(env.Out, "model: %d calls, %d prompt + %d completion tokens, largest prompt %d tokens\n",
				res.ModelCalls, res.Usage.PromptTokens, res.Usage.CompletionTokens, res.MaxPromptTokens)
		}
		fmt.Fprintf(env.Out, "recorded as run %s (task %s) in %s\n", run.ID, res.TaskID, st.Dir())
		if reportPath != "" {
			fmt.Fprintf(env.Out, "report: %s\n", reportPath)
		}
	}
	code := 1
	switch res.Status {
	case agent.Done:
		return nil
	case agent.ReviewRequired:
		code = 2
	case agent.Canceled:
		code = 130
	}
	switch {
	case res.Status == agent.ReviewRequired:
		actErr = fmt.Errorf("review required: %s", res.Reason)
	case res.Status == agent.Canceled:
		actErr = errors.New(res.Reason)
	case actErr == nil:
		actErr = fmt.Errorf("%s: %s", res.Status, res.Reason)
	}
	// Without --json the summary printed above says why; Main saying it
	// again would print the same reason twice.
	return &ExitError{Code: code, Err: actErr, Shown: !env.JSON}
}

// newAgent builds the AI runtime: the roles' models from apex.yaml's
// model: section and the environment (APEX_MODEL_*, …), or the offline rule
// planner when none is configured. cache may be nil (in memory only).
func newAgent(env *Env, configFile string, getenv func(string) string, cache *agent.Cache, onEvent func(event.Event), ocrMode perceive.Mode) (*agent.Runtime, error) {
	cfg, err := loadModelConfig(env, configFile, getenv)
	if err != nil {
		return nil, err
	}
	return agentFor(env, cfg, cache, onEvent, ocrMode, nil)
}

// agentFor is a runtime on loaded model settings: the configured model, or
// the offline rule planner when none is configured.
func agentFor(env *Env, cfg *llm.Config, cache *agent.Cache, onEvent func(event.Event), ocrMode perceive.Mode, engine ocr.Engine) (*agent.Runtime, error) {
	ac := agent.Config{Log: env.Log, Cache: cache, OnEvent: onEvent, Perception: perceive.Options{Mode: ocrMode, Engine: engine}}
	if cfg.Configured() {
		ac.LLM = cfg
	}
	return agent.New(ac)
}

// printActEvent shows progress on w: the plan, each step's summary,
// retries and the tracer's alarms — projections of the event stream. A
// plan that failed is not shown: the task ends with it, and its summary
// says why once.
func printActEvent(w io.Writer, e event.Event) {
	var p map[string]json.RawMessage
	_ = json.Unmarshal(e.Payload, &p)
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(p[k], &s)
		return s
	}
	switch e.ActionType {
	case event.EvPlan:
		var steps []agent.Step
		if json.Unmarshal(p["steps"], &steps) != nil || len(steps) == 0 {
			return
		}
		fmt.Fprintf(w, "plan (%s, %d steps)\n", str("source"), len(steps))
	case event.EvStepSummary:
		var id int
		_ = json.Unmarshal(p["step_id"], &id)
		status := str("status")
		if status == "failed" {
			status = "FAIL"
		}
		fmt.Fprintf(w, "  %d. %s %s → %s\n", id, status, str("step"), indentLines(str("summary"), "     ", 0))
	case event.EvRetry:
		fmt.Fprintf(w, "     retry: %s (%s)\n", str("strategy"), indentLines(str("reason"), "       ", 0))
	case event.EvSignal:
		if e.Status == event.StatusFailed {
			fmt.Fprintf(w, "     %s: %s %s\n", str("kind"), str("app"), indentLines(str("detail"), "       ", 0))
		}
	}
}
