//go:build !apexlite

package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/api"
	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/script"
	"github.com/spf13/cobra"
)

// farmRunOptions are the flags of `apex farm run`.
type farmRunOptions struct {
	Farm    farmFlags
	Labels  []string
	Project string
	Timeout time.Duration
	Retries int
	Reset   []string
	Apps    []string
	Device  string
	Follow  bool
}

func newCmdFarmRun(env *Env) *cobra.Command {
	o := &farmRunOptions{}
	cmd := &cobra.Command{
		Use:   "run SCRIPT…",
		Short: "Queue scripts on the farm; with --follow, stream their steps until they end",
		Long: `Queue each script as a run on the farm. A host with a free device matching
--labels leases it, resets the apps the script launches (and every --reset),
runs the script and uploads its record and report. A run whose host dies is
lost once its lease expires, and runs again elsewhere while --retries allow.

States: queued → leased → running → passed | failed | error | canceled |
timed_out | lost. The exit code with --follow is 0 only when every run passed.`,
		Example: `  apex farm run --farm nats://127.0.0.1:4222 --follow examples/settings-toggle.yaml
  apex farm run --labels platform=android,model=Pixel_8 --project shop --timeout 10m --retries 1 tests/*.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return farmRun(cmd.Context(), env, o, args) },
	}
	o.Farm.register(cmd, "farm")
	f := cmd.Flags()
	f.StringArrayVar(&o.Labels, "labels", nil, "run only on devices with these labels: key=value,… (platform, model, os, screen, host, or a host's --label)")
	f.StringVar(&o.Project, "project", "default", "the project the runs count against (see apex farm limit)")
	f.DurationVar(&o.Timeout, "timeout", 0, "stop a run that takes longer (it ends timed_out); 0: no limit")
	f.IntVar(&o.Retries, "retries", 0, "run a lost run again on another host up to N times")
	f.StringArrayVar(&o.Reset, "reset", nil, "also clear this app's data before the run (repeatable)")
	f.StringArrayVar(&o.Apps, "app", nil, "install this app first: an artifact's hash or its name in --project (apex farm app upload; repeatable)")
	f.StringVar(&o.Device, "device", "", "run only on this farm device (its ID or a unique part; see apex farm devices); it waits while the device is busy or offline")
	f.BoolVar(&o.Follow, "follow", false, "stream the runs' steps and wait for them to end")
	return cmd
}

func farmRun(ctx context.Context, env *Env, o *farmRunOptions, files []string) error {
	labels, err := registry.ParseLabels(o.Labels...)
	if err != nil {
		return fmt.Errorf("--labels: %w", err)
	}
	if o.Retries < 0 {
		return fmt.Errorf("--retries %d: give 0 or more", o.Retries)
	}
	var runs []queue.Run
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if _, err := script.Load(data, f, &script.Options{Action: knownAction}); err != nil {
			return err
		}
		runs = append(runs, queue.Run{Project: o.Project, Name: filepath.Base(f), Script: data, Labels: labels,
			Timeout: o.Timeout, Retries: o.Retries, Reset: o.Reset, By: farmActor()})
	}
	c, err := o.Farm.dial(ctx, "apex farm run")
	if err != nil {
		return err
	}
	defer c.Close()
	apps, err := resolveApps(ctx, c, o.Project, o.Apps)
	if err != nil {
		return err
	}
	pin, err := pinDevice(ctx, c, o.Device)
	if err != nil {
		return err
	}
	for i, r := range runs {
		r.ID, r.Apps = queue.NewID(), apps
		if pin != nil {
			r.Pin, r.Platform = pin.ID, pin.Platform
		}
		rctx, cancel := context.WithTimeout(ctx, farmWait)
		// A refusal is final; a cluster electing leaders answers again soon.
		err = farm.Retry(rctx, func(ctx context.Context) (err error) {
			runs[i], err = c.api.Submit(ctx, r)
			if errors.Is(err, auth.ErrForbidden) || errors.Is(err, auth.ErrBadToken) {
				return farm.Permanent(err)
			}
			return err
		})
		cancel()
		if err != nil {
			return err
		}
		if !env.JSON {
			fmt.Fprintf(env.Out, "%s\tqueued\t%s\n", runs[i].ID, r.Name)
		}
	}
	if pin == nil && len(runs) > 0 {
		warnUnmatched(ctx, env, c, runs[0])
	}
	if !o.Follow {
		if env.JSON {
			return env.PrintJSON(runs)
		}
		return nil
	}
	failed := 0
	var final []queue.Run
	for _, r := range runs {
		end, err := followRun(ctx, env, c, r)
		if err != nil {
			return err
		}
		final = append(final, end)
		if end.State != queue.Passed {
			failed++
		}
	}
	if env.JSON {
		if err := env.PrintJSON(final); err != nil {
			return err
		}
	}
	if failed > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d runs did not pass", failed, len(runs))}
	}
	return nil
}

// warnUnmatched says so when no device registered on the farm could take
// run (its platform, labels and project), which then waits in the queue
// until one joins: a label spelt wrong, or a phone not yet attached,
// shows at once instead of as a run that never starts.
func warnUnmatched(ctx context.Context, env *Env, c *farmClient, r queue.Run) {
	devs, err := c.reg.Devices(ctx)
	if err != nil {
		return // the runs are queued; this is a hint only
	}
	for _, d := range devs {
		if _, err := api.LeaseProject(d, r.Project); err == nil && d.Platform == r.Platform && d.Matches(r.Labels) {
			return
		}
	}
	want := map[string]string{"platform": r.Platform}
	maps.Copy(want, r.Labels)
	fmt.Fprintf(env.Err, "apex: no device on the farm matches %s in project %s (%d registered; apex farm devices lists them with their labels): the runs wait in the queue until one joins; apex farm cancel ID drops one\n",
		labelString(want), r.Project, len(devs))
}

// pinDevice finds the farm device --device names (nil when empty): its
// exact ID, or the one device whose ID contains it, in any state.
func pinDevice(ctx context.Context, c *farmClient, query string) (*registry.Device, error) {
	if query == "" {
		return nil, nil
	}
	devs, err := c.reg.Devices(ctx)
	if err != nil {
		return nil, err
	}
	var match []registry.Device
	for _, d := range devs {
		if d.ID == query {
			return &d, nil
		}
		if strings.Contains(d.ID, query) {
			match = append(match, d)
		}
	}
	switch len(match) {
	case 1:
		return &match[0], nil
	case 0:
		return nil, fmt.Errorf("--device %s: no farm device matches (see apex farm devices)", query)
	}
	var ids []string
	for _, d := range match {
		ids = append(ids, d.ID)
	}
	return nil, fmt.Errorf("--device %s: %d farm devices match (%s): give more of the ID", query, len(match), strings.Join(ids, ", "))
}

// followWait is how long one ask for a run's next events waits.
const followWait = 5 * time.Second

// followRun prints run r's events until it ends, following its retries.
// It asks the farm API for the events after the last one it printed (the
// API checks that the caller may see the run's project).
func followRun(ctx context.Context, env *Env, c *farmClient, r queue.Run) (queue.Run, error) {
	for {
		var after uint64
		// An end event is written just after the final state; a lost run
		// has none: a run final one ask ago with no end since has ended.
		for wasFinal, ended := false, false; !ended; {
			var page api.Events
			rctx, cancel := context.WithTimeout(ctx, farmWait)
			err := farm.Retry(rctx, func(ctx context.Context) (err error) {
				page, err = c.api.Events(ctx, r.ID, after, followWait)
				if errors.Is(err, auth.ErrForbidden) || errors.Is(err, auth.ErrBadToken) || errors.Is(err, queue.ErrNoRun) {
					return farm.Permanent(err)
				}
				return err
			})
			cancel()
			if err != nil {
				return r, err
			}
			for _, e := range page.Events {
				if !env.JSON {
					printEvent(env, r, e)
				}
				after, ended = e.Seq, ended || e.Kind == "end"
			}
			r, ended = page.Run, ended || wasFinal
			wasFinal = queue.Final(r.State)
		}
		var err error
		if !queue.Final(r.State) { // read before its end event came
			if r, err = c.api.Run(ctx, r.ID); err != nil {
				return r, err
			}
		}
		if r.State != queue.Lost || r.RetriedBy == "" {
			return r, nil
		}
		if !env.JSON {
			fmt.Fprintf(env.Out, "%s\tlost: %s\n", r.ID, r.Reason)
		}
		if r, err = c.api.Run(ctx, r.RetriedBy); err != nil {
			return r, err
		}
	}
}

func printEvent(env *Env, r queue.Run, e queue.Event) {
	switch e.Kind {
	case "state":
		fmt.Fprintf(env.Out, "%s\t%s\t%s on %s\n", r.ID, e.State, r.Name, e.Device)
	case "step":
		line := fmt.Sprintf("%s\tstep %d/%d %s: %s", r.ID, e.Step, e.Steps, e.Name, e.Status)
		if e.Error != "" {
			line += ": " + indentLines(e.Error, "    ", 0)
		}
		fmt.Fprintln(env.Out, line)
	case "end":
		line := fmt.Sprintf("%s\t%s\t%s", r.ID, e.State, r.Name)
		if e.Reason != "" {
			line += ": " + indentLines(e.Reason, "    ", 0)
		}
		if e.Report != "" {
			line += " (report: " + e.Report + ")"
		}
		fmt.Fprintln(env.Out, line)
	}
}

// farmActor names who acts in the audit log.
func farmActor() string {
	u := os.Getenv("USER")
	if u == "" {
		u = "unknown"
	}
	h, _ := os.Hostname()
	return u + "@" + h
}

func newCmdFarmDevices(env *Env) *cobra.Command {
	var ff farmFlags
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List the farm's devices with their labels, health and holder",
		Long: `List the farm's devices with their labels, health and holder. Who holds a
device is shown for leases in your projects; a device held for another
project shows "` + api.Hidden + `".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := ff.dial(cmd.Context(), "apex farm devices")
			if err != nil {
				return err
			}
			defer c.Close()
			devs, err := c.api.Devices(cmd.Context())
			if err != nil {
				return err
			}
			if env.JSON {
				return env.PrintJSON(devs)
			}
			tw := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "DEVICE\tSTATE\tHELD BY\tLABELS")
			for _, d := range devs {
				holder := "-"
				if rec := d.Lease; rec != nil {
					holder = rec.Holder
					if rec.Run != "" {
						holder += " (" + rec.Run + ")"
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.ID, d.Health.State, holder, labelString(d.Labels))
			}
			return tw.Flush()
		},
	}
	ff.register(cmd, "farm")
	return cmd
}

func labelString(l map[string]string) string {
	var parts []string
	for k, v := range l {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func newCmdFarmLeases(env *Env) *cobra.Command {
	var ff farmFlags
	cmd := &cobra.Command{
		Use:   "leases",
		Short: "List the farm's leases: what is held, by whom, since when, with which fence",
		Long: `List the farm's leases: what is held, by whom, since when, with which fence.
A lease in a project you are not a member of shows only that its resource
is held ("` + api.Hidden + `").`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := ff.dial(cmd.Context(), "apex farm leases")
			if err != nil {
				return err
			}
			defer c.Close()
			recs, err := c.api.Leases(cmd.Context())
			if err != nil {
				return err
			}
			if env.JSON {
				return env.PrintJSON(recs)
			}
			tw := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RESOURCE\tHOLDER\tPROJECT\tRUN\tFENCE\tSINCE")
			for _, r := range recs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", r.Resource, r.Holder, r.Project, r.Run, r.Fence, r.Since.Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	ff.register(cmd, "farm")
	return cmd
}

func newCmdFarmLease(env *Env) *cobra.Command {
	cmd := &cobra.Command{Use: "lease", Short: "Manage the farm's leases"}
	var ff farmFlags
	brk := &cobra.Command{
		Use:   "break DEVICE",
		Short: "End a lease whoever holds it (the holder stops at its next renewal)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := ff.dial(cmd.Context(), "apex farm lease break")
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.leases.Break(cmd.Context(), args[0], farmActor()); err != nil {
				return err
			}
			fmt.Fprintf(env.Out, "broke the lease of %s\n", args[0])
			return nil
		},
	}
	ff.register(brk, "farm")
	cmd.AddCommand(brk)
	return cmd
}

func newCmdFarmCancel(env *Env) *cobra.Command {
	var ff farmFlags
	cmd := &cobra.Command{
		Use:   "cancel RUN…",
		Short: "Cancel queued or running runs",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := ff.dial(cmd.Context(), "apex farm cancel")
			if err != nil {
				return err
			}
			defer c.Close()
			var errs []error
			for _, id := range args {
				r, err := c.api.Cancel(cmd.Context(), id)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if r.State == queue.Canceled {
					fmt.Fprintf(env.Out, "%s\tcanceled\n", id)
				} else {
					fmt.Fprintf(env.Out, "%s\tstopping (its host cancels it)\n", id)
				}
			}
			return errors.Join(errs...)
		},
	}
	ff.register(cmd, "farm")
	return cmd
}

func newCmdFarmLimit(env *Env) *cobra.Command {
	var ff farmFlags
	cmd := &cobra.Command{
		Use:   "limit PROJECT N",
		Short: "Let at most N runs of a project be leased or running at once (0: no limit)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[1])
			if err != nil || n < 0 {
				return fmt.Errorf("limit %q: give a number, 0 or more", args[1])
			}
			c, err := ff.dial(cmd.Context(), "apex farm limit")
			if err != nil {
				return err
			}
			defer c.Close()
			// Only an admin changes the farm's settings (NATS refuses the
			// others): say so, rather than time out.
			if err := c.api.Allow(cmd.Context(), auth.Manage, args[0]); err != nil {
				return err
			}
			if err := c.q.SetLimit(cmd.Context(), args[0], n); err != nil {
				return err
			}
			fmt.Fprintf(env.Out, "project %s: at most %d runs at once\n", args[0], n)
			return nil
		},
	}
	ff.register(cmd, "farm")
	return cmd
}
