//go:build !apexlite

package cli

import (
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/records"
	"github.com/spf13/cobra"
)

func newCmdFarmRuns(env *Env) *cobra.Command {
	var ff farmFlags
	var project, state, labels, since string
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the farm's runs and their states, filtered by project, state, labels or age",
		Example: `  apex farm runs --project shop --state failed --since 24h
  apex farm report RUN --out ./record`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := records.ParseFilter(project, state, labels, since, time.Now())
			if err != nil {
				return err
			}
			c, err := ff.dial(cmd.Context(), "apex farm runs")
			if err != nil {
				return err
			}
			defer c.Close()
			runs, err := c.api.Runs(cmd.Context())
			if err != nil {
				return err
			}
			var shown []queue.Run
			for _, r := range runs {
				if f.Match(r) {
					r.Script = nil
					shown = append(shown, r)
				}
			}
			if env.JSON {
				return env.PrintJSON(shown)
			}
			tw := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tSTATE\tPROJECT\tSCRIPT\tDEVICE\tRECORD\tREASON")
			for _, r := range shown {
				rec := "-"
				if r.Report != "" {
					rec = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.State, r.Project, r.Name, r.Device, rec, oneLine(r.Reason))
			}
			return tw.Flush()
		},
	}
	ff.register(cmd, "farm")
	fl := cmd.Flags()
	fl.StringVar(&project, "project", "", "list only this project's runs")
	fl.StringVar(&state, "state", "", "list only runs in this state (queued, running, passed, lost, …)")
	fl.StringVar(&labels, "labels", "", "list only runs queued with these labels: key=value,…")
	fl.StringVar(&since, "since", "", "list only runs queued since: a duration back (24h) or a time (RFC 3339)")
	return cmd
}

func newCmdFarmReport(env *Env) *cobra.Command {
	var ff farmFlags
	var out string
	cmd := &cobra.Command{
		Use:   "report RUN",
		Short: "Download a farm run's record: its report, steps and screenshots",
		Long: `Download the record a host uploaded at the end of a run (report.html beside
its steps and screenshots) into --out (default ./RUN). Records are kept as
their project's retention says (apex farm retention).`,
		Example: `  apex farm report r1abc --out ./record && open record/report.html`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := ff.dial(ctx, "apex farm report")
			if err != nil {
				return err
			}
			defer c.Close()
			rs, err := records.Open(ctx, c.js)
			if err != nil {
				return err
			}
			// Asked through the API: a run of a project the caller may not
			// see is refused, saying so.
			r, err := c.api.Run(ctx, args[0])
			if err != nil {
				return err
			}
			if out == "" {
				out = r.ID
			}
			files, err := rs.Download(ctx, r, out)
			if err != nil {
				return err
			}
			if env.JSON {
				return env.PrintJSON(map[string]any{"run": r.ID, "files": files})
			}
			fmt.Fprintf(env.Out, "%s\t%s\t%d files in %s (report: %s)\n", r.ID, r.State, len(files), out,
				filepath.Join(out, "report.html"))
			return nil
		},
	}
	ff.register(cmd, "farm")
	cmd.Flags().StringVar(&out, "out", "", "directory to write the record into (default ./RUN)")
	return cmd
}

func newCmdFarmRetention(env *Env) *cobra.Command {
	var ff farmFlags
	var ret records.Retention
	cmd := &cobra.Command{
		Use:   "retention PROJECT",
		Short: "Set how long and how many of a project's run records the farm keeps",
		Long: `Set a project's record retention: records older than --max-age and the
oldest beyond --max-count are deleted by the control plane (every minute).
0 means no bound of that kind; with both 0 records are kept 30 days.`,
		Example: `  apex farm retention shop --max-age 720h --max-count 1000`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := ff.dial(cmd.Context(), "apex farm retention")
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.api.Allow(cmd.Context(), auth.Manage, args[0]); err != nil {
				return err // an admin's setting (see apex farm limit)
			}
			rs, err := records.Open(cmd.Context(), c.js)
			if err != nil {
				return err
			}
			if err := rs.SetRetention(cmd.Context(), args[0], ret); err != nil {
				return err
			}
			got, err := rs.Retention(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Out, "project %s: records kept %s\n", args[0], retentionText(got))
			return nil
		},
	}
	ff.register(cmd, "farm")
	cmd.Flags().DurationVar(&ret.MaxAge, "max-age", 0, "delete records older than this (e.g. 720h); 0: no age bound")
	cmd.Flags().IntVar(&ret.MaxCount, "max-count", 0, "keep at most this many records, the newest; 0: no count bound")
	return cmd
}

func retentionText(r records.Retention) string {
	switch {
	case r.MaxAge > 0 && r.MaxCount > 0:
		return fmt.Sprintf("for %v, the newest %d at most", r.MaxAge, r.MaxCount)
	case r.MaxAge > 0:
		return fmt.Sprintf("for %v", r.MaxAge)
	default:
		return fmt.Sprintf("the newest %d", r.MaxCount)
	}
}
