//go:build !apexlite

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/apexagent/apex/report"
	"github.com/apexagent/apex/store"
	"github.com/spf13/cobra"
)

// DefaultRunsDir is where runs are recorded unless --dir or APEX_RUNS_DIR
// says otherwise.
const DefaultRunsDir = "apex-runs"

// RunsDirEnv names the environment variable that sets the default --dir.
const RunsDirEnv = "APEX_RUNS_DIR"

// ReportOptions are the inputs of `apex report`.
type ReportOptions struct {
	Dir     string
	RunID   string // "" lists runs; "latest" is the newest run
	Open    bool
	Rebuild bool
	Limit   int
	// OpenFile shows a file to the user; default: xdg-open (open on macOS).
	OpenFile func(ctx context.Context, path string) error
}

// runListing is one run in `apex report --json` output.
type runListing struct {
	store.Run
	Report string `json:"report,omitempty"` // path of report.html when written
}

func defaultRunsDir() string {
	if d := os.Getenv(RunsDirEnv); d != "" {
		return d
	}
	return DefaultRunsDir
}

func newCmdReport(env *Env) *cobra.Command {
	opts := &ReportOptions{}
	cmd := &cobra.Command{
		Use:   "report [RUN-ID]",
		Short: "List recorded runs, or print (and open) the HTML report of one",
		Long: `Without RUN-ID, list the runs recorded in --dir, newest first.

With RUN-ID (or "latest"), print the path of the run's HTML report,
writing it first when it is missing, when the run has no recorded end yet,
or with --rebuild. The report is a plain file next to the run's
screenshots: open it in any browser, or pass --open.`,
		Example: `  apex report
  apex report latest --open
  apex --json report --dir ci-runs`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeRunIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.RunID = args[0]
			}
			return reportRun(cmd.Context(), env, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", defaultRunsDir(), "directory of recorded runs (env "+RunsDirEnv+")")
	cmd.Flags().BoolVar(&opts.Open, "open", false, "open the report in the default browser")
	cmd.Flags().BoolVar(&opts.Rebuild, "rebuild", false, "write the report again even if it exists")
	cmd.Flags().IntVar(&opts.Limit, "limit", 20, "most runs to list (0: all)")
	return cmd
}

func reportRun(ctx context.Context, env *Env, opts *ReportOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, store.DBName)); err != nil {
		if opts.RunID != "" {
			return fmt.Errorf("no runs recorded in %s: check --dir (or %s), or record one with `apex run`", opts.Dir, RunsDirEnv)
		}
		if env.JSON {
			return env.PrintJSON([]runListing{})
		}
		_, err := fmt.Fprintf(env.Out, "No runs recorded in %s yet. Record one with: apex run --sim examples/shop-checkout.yaml\n", opts.Dir)
		return err
	}
	s, err := store.OpenWith(opts.Dir, &store.Options{Log: env.Log})
	if err != nil {
		return err
	}
	defer s.Close()
	if opts.RunID == "" {
		return listRuns(ctx, env, s, opts.Limit)
	}
	return showReport(ctx, env, s, opts)
}

func listRuns(ctx context.Context, env *Env, s *store.Store, limit int) error {
	runs, err := s.Runs(ctx, limit)
	if err != nil {
		return err
	}
	out := make([]runListing, 0, len(runs))
	for _, r := range runs {
		l := runListing{Run: r}
		if p := filepath.Join(r.Dir, report.FileName); fileExists(p) {
			l.Report = p
		}
		out = append(out, l)
	}
	if env.JSON {
		return env.PrintJSON(out)
	}
	if len(out) == 0 {
		_, err := fmt.Fprintf(env.Out, "No runs recorded in %s yet.\n", s.Dir())
		return err
	}
	tw := tabwriter.NewWriter(env.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tSTARTED\tDURATION\tSCRIPT\tDEVICE\tPLATFORM")
	now := time.Now()
	for _, r := range out {
		dur := r.Duration(now).Round(time.Millisecond).String()
		if r.Status == store.StatusRunning {
			dur = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Status, r.Started.Local().Format("2006-01-02 15:04:05"),
			dur, dash(r.Script), dash(r.Device), dash(r.Platform))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(env.Out, "\nShow one with: apex report RUN-ID [--open]")
	return err
}

func showReport(ctx context.Context, env *Env, s *store.Store, opts *ReportOptions) error {
	id := opts.RunID
	if id == "latest" {
		runs, err := s.Runs(ctx, 1)
		if err != nil {
			return err
		}
		if len(runs) == 0 {
			return fmt.Errorf("no runs recorded in %s yet", s.Dir())
		}
		id = runs[0].ID
	}
	run, err := s.Run(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("run %q is not in %s: list the runs there with `apex report --dir %s`", id, s.Dir(), s.Dir())
	}
	if err != nil {
		return err
	}
	path := filepath.Join(run.Dir, report.FileName)
	// A lost run's report may have been written while it still ran.
	if opts.Rebuild || run.Status == store.StatusRunning || run.Status == store.StatusLost || !fileExists(path) {
		if path, err = report.Write(ctx, s, id); err != nil {
			return err
		}
	}
	if env.JSON {
		if err := env.PrintJSON(runListing{Run: run, Report: path}); err != nil {
			return err
		}
	} else if _, err := fmt.Fprintln(env.Out, path); err != nil {
		return err
	}
	if opts.Open {
		open := opts.OpenFile
		if open == nil {
			open = openInBrowser
		}
		if err := open(ctx, path); err != nil {
			// The path is printed; not opening it is no reason to fail.
			fmt.Fprintf(env.Err, "apex: could not open the report (%v); open %s in a browser\n", err, path)
		}
	}
	return nil
}

func openInBrowser(ctx context.Context, path string) error {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("%s not found", name)
	}
	// Not tied to ctx: the browser should outlive this command.
	cmd := exec.Command(bin, path)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// xdg-open fails fast when nothing can show HTML; a handler that keeps
	// running is a browser showing the report.
	timer := time.NewTimer(3 * time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return nil
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
