//go:build !apexlite

package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/hub"
	"github.com/spf13/cobra"
)

// hostRow is one line of `apex hosts`.
type hostRow struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Boots   bool   `json:"boots"`
	Devices int    `json:"devices"`
	RunCap  int    `json:"run_cap,omitempty"`
	IdleCap string `json:"idle_cap,omitempty"`
	// Note says why a host cannot boot, or what it boots.
	Note string `json:"note,omitempty"`
}

func newCmdHosts(env *Env) *cobra.Command {
	stateDir := ""
	cmd := &cobra.Command{
		Use:   "hosts",
		Short: "List the device hosts, which of them boot devices, their caps and the sessions they started",
		Long: `List the device hosts this machine has: the adb server and WebDriverAgent
(which list the devices they see), simulated phones (booted as processes on
demand), and the Android SDK's emulator when it is installed with an AVD.
Session hosts record their run cap, idle cap and the sessions they started
in a state directory; the sessions are listed with their owner process, and
"orphaned" when that process is gone (the next session host stops them).`,
		Example: `  apex hosts
  apex --json hosts
  apex hosts --state-dir /var/lib/apex/sessions`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return hostsRun(cmd.Context(), env, stateDir)
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "where session hosts record their sessions (default $APEX_SESSIONS_DIR or ~/.local/state/apex/sessions)")
	return cmd
}

func hostsRun(ctx context.Context, env *Env, stateDir string) error {
	if stateDir == "" {
		stateDir = hub.DefaultStateDir()
	}
	hosts, err := deviceHosts(env)
	if err != nil {
		return err
	}
	caps := map[string]hub.HostCaps{}
	if cs, err := hub.ReadHostCaps(stateDir); err == nil {
		for _, c := range cs {
			caps[c.Host] = c
		}
	}
	var rows []hostRow
	for _, h := range hosts {
		r := hostRow{Name: h.Name(), Kind: hostKind(h.Name())}
		ts, err := h.Targets(ctx)
		r.Devices = len(ts)
		if err != nil {
			r.Note = err.Error()
		}
		_, r.Boots = h.(device.Booter)
		rows = append(rows, r)
	}
	rows = append(rows, hostRow{Name: bootHostName(device.Android), Kind: "simulated phones", Boots: true, Note: "apex playground and apex mcp --boot start `apex sim --android 1` processes on demand"},
		hostRow{Name: bootHostName(device.IOS), Kind: "simulated iPhones", Boots: true, Note: "apex playground starts `apex sim --ios 1` processes on demand"})
	emu := hostRow{Name: "emulator", Kind: "Android emulator"}
	if e, err := hub.DetectEmulator(ctx, os.Getenv); err != nil {
		emu.Note = err.Error()
	} else {
		emu.Boots, emu.Note = true, "AVDs: "+strings.Join(e.AVDs, ", ")
	}
	rows = append(rows, emu)
	for i := range rows {
		if c, ok := caps[rows[i].Name]; ok {
			rows[i].RunCap, rows[i].IdleCap = c.RunCap, c.IdleCap
		}
	}
	sessions, err := hub.ReadSessions(stateDir)
	if err != nil {
		return err
	}
	if env.JSON {
		type sessionRow struct {
			hub.Session
			Orphaned bool `json:"orphaned"`
		}
		ss := []sessionRow{}
		for _, s := range sessions {
			ss = append(ss, sessionRow{s, !s.OwnerAlive()})
		}
		return env.PrintJSON(map[string]any{"hosts": rows, "state_dir": stateDir, "sessions": ss})
	}
	tw := tabwriter.NewWriter(env.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tKIND\tBOOTS\tDEVICES\tRUN CAP\tIDLE CAP\tNOTE")
	for _, r := range rows {
		boots, run, idle := "no", "-", "-"
		if r.Boots {
			boots = "yes"
		}
		if r.RunCap > 0 {
			run = strconv.Itoa(r.RunCap)
		}
		if r.IdleCap != "" && r.IdleCap != "0s" {
			idle = r.IdleCap
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", r.Name, r.Kind, boots, r.Devices, run, idle, r.Note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.Out, "\nSessions recorded in %s:\n", stateDir)
	if len(sessions) == 0 {
		_, err := fmt.Fprintln(env.Out, "  none")
		return err
	}
	tw = tabwriter.NewWriter(env.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  HOST\tDEVICE\tPID\tOWNER\tSTATE\tSTARTED")
	for _, s := range sessions {
		state := "running"
		if !s.OwnerAlive() {
			state = "orphaned (owner gone: the next session host stops it)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%s\t%s\n", s.Host, s.Target.ID, s.PID, s.Owner, state, s.Started.Format(time.DateTime))
	}
	return tw.Flush()
}

func hostKind(name string) string {
	switch name {
	case "adb":
		return "adb server"
	case "wda":
		return "WebDriverAgent"
	}
	return name
}
