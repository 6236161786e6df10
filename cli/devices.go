package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/spf13/cobra"
)

func newCmdDevices(env *Env) *cobra.Command {
	var watch bool
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List the devices every host can see (adb server, …)",
		Long: `List every device Apex can reach, with its ID (use it with --device), state,
model and screen size. Devices that cannot be driven in their state
(unauthorized, offline) are listed with what to do about it. The adb server is
started if none runs, as adb does; ADB_SERVER_SOCKET and
ANDROID_ADB_SERVER_PORT choose which server.

With --watch, print a line each time a device comes (+), changes state (~)
or goes (-), until Ctrl-C; with --json, one JSON object a line.`,
		Example: `  apex devices
  apex --json devices
  apex devices --watch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if watch {
				return devicesWatch(cmd.Context(), env)
			}
			return devicesRun(cmd, env)
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "keep printing devices as they come, change state and go, until Ctrl-C")
	return cmd
}

func devicesRun(cmd *cobra.Command, env *Env) error {
	hosts, err := deviceHosts(env)
	if err != nil {
		return err
	}
	ts, err := device.NewRegistry(hosts...).Targets(cmd.Context())
	if err != nil {
		if len(ts) == 0 && allFailed(err, len(hosts)) {
			return fmt.Errorf("no host could list devices: %w", err)
		}
		fmt.Fprintln(env.Err, "apex: warning:", err)
	}
	if env.JSON {
		if ts == nil {
			ts = []device.Target{}
		}
		return env.PrintJSON(ts)
	}
	if len(ts) == 0 {
		_, err := fmt.Fprintln(env.Out, "no devices: plug one in (USB debugging on), `adb connect HOST:PORT`, or use --sim")
		return err
	}
	tw := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tMODEL\tSIZE\tHINT")
	for _, t := range ts {
		size := ""
		if t.Width > 0 {
			size = fmt.Sprintf("%dx%d", t.Width, t.Height)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.State, t.Model, size, t.Hint)
	}
	return tw.Flush()
}

// allFailed reports whether the joined error has one cause per host.
func allFailed(err error, hosts int) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return len(j.Unwrap()) >= hosts
	}
	return hosts == 1
}

// watcher is a host that reports its devices as they change.
type watcher interface {
	Watch(ctx context.Context) iter.Seq2[[]device.Target, error]
}

// hostList is one list a watched host yielded; done means its watch ended.
type hostList struct {
	host string
	ts   []device.Target
	err  error
	done bool
}

// devicesWatch prints the changes in every watchable host's devices until
// ctx ends (not an error) or a host's watch fails.
func devicesWatch(ctx context.Context, env *Env) error {
	hosts, err := deviceHosts(env)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lists := make(chan hostList)
	send := func(l hostList) bool {
		select {
		case lists <- l:
			return true
		case <-ctx.Done():
			return false
		}
	}
	watched := 0
	for _, h := range hosts {
		w, ok := h.(watcher)
		if !ok {
			continue
		}
		watched++
		go func() {
			for ts, err := range w.Watch(ctx) {
				if !send(hostList{host: h.Name(), ts: ts, err: err}) {
					return
				}
			}
			send(hostList{host: h.Name(), done: true})
		}()
	}
	if watched == 0 {
		return errors.New("no host can report device changes: run apex devices instead")
	}
	seen := map[string]map[string]device.Target{} // host → ID → target
	for {
		var l hostList
		select {
		case <-ctx.Done():
			return nil
		case l = <-lists:
		}
		switch {
		case l.err != nil:
			return fmt.Errorf("host %s: %w", l.host, l.err)
		case l.done:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("host %s stopped reporting devices", l.host)
		}
		now := map[string]device.Target{}
		for _, t := range l.ts {
			now[t.ID] = t
		}
		for _, c := range deviceChanges(seen[l.host], now) {
			if err := printChange(env, c); err != nil {
				return err
			}
		}
		seen[l.host] = now
	}
}

// deviceChange is a device that came, changed state or went.
type deviceChange struct {
	Change string        `json:"change"` // added, changed, removed
	Device device.Target `json:"device"`
}

// deviceChanges lists what differs from before to now, by device ID.
func deviceChanges(before, now map[string]device.Target) []deviceChange {
	var cs []deviceChange
	for id, t := range now {
		old, ok := before[id]
		switch {
		case !ok:
			cs = append(cs, deviceChange{"added", t})
		case old.State != t.State || old.Hint != t.Hint:
			cs = append(cs, deviceChange{"changed", t})
		}
	}
	for id, t := range before {
		if _, ok := now[id]; !ok {
			cs = append(cs, deviceChange{"removed", t})
		}
	}
	slices.SortFunc(cs, func(a, b deviceChange) int { return strings.Compare(a.Device.ID, b.Device.ID) })
	return cs
}

func printChange(env *Env, c deviceChange) error {
	if env.JSON {
		return json.NewEncoder(env.Out).Encode(c)
	}
	t := c.Device
	fields := []string{map[string]string{"added": "+", "changed": "~", "removed": "-"}[c.Change], t.ID}
	if c.Change == "removed" {
		fields = append(fields, "gone")
	} else {
		fields = append(fields, t.State)
		if t.Model != "" {
			fields = append(fields, t.Model)
		}
		if t.Hint != "" {
			fields = append(fields, t.Hint)
		}
	}
	_, err := fmt.Fprintln(env.Out, strings.Join(fields, "  "))
	return err
}

// completeTimeout bounds the look-ups a completion makes (the adb server,
// WebDriverAgents), so a Tab never hangs.
const completeTimeout = 2 * time.Second

// completeDevices completes --device with the IDs of the devices the
// hosts list, and the wda: prefix.
func completeDevices(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx, cancel := context.WithTimeout(cmd.Context(), completeTimeout)
	defer cancel()
	var ids []cobra.Completion
	if hosts, err := deviceHosts(&Env{Log: slog.New(slog.DiscardHandler)}); err == nil {
		ts, _ := device.NewRegistry(hosts...).Targets(ctx)
		for _, t := range ts {
			ids = append(ids, cobra.CompletionWithDesc(t.ID, strings.TrimSpace(t.State+" "+t.Model)))
		}
	}
	ids = append(ids, cobra.CompletionWithDesc(wdaPrefix, "an iPhone's WebDriverAgent URL"))
	return filterPrefix(ids, toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// filterPrefix keeps the completions that start with prefix (shells filter
// too, but not all of them).
func filterPrefix(cs []cobra.Completion, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, c := range cs {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}
