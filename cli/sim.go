package cli

import (
	"context"
	"fmt"

	"github.com/apexagent/apex/sim/lab"
	"github.com/spf13/cobra"
)

// simOptions are the flags of `apex sim`.
type simOptions struct {
	Android   int
	Apps      []string
	Seed      int64
	PortBase  int
	StateAddr string
}

func newCmdSim(env *Env) *cobra.Command {
	opts := simOptions{Android: 1, PortBase: lab.DefaultPortBase}
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run simulated phones that adb (and Apex) can connect to",
		Long: `Run simulated Android phones, each serving adbd on a loopback TCP port, until
interrupted (Ctrl-C). Attach one with the printed "adb connect" command, then
use it like any device: adb shell, adb install, scrcpy-free screenshots, …

Apps come from the built-ins plus any --app YAML specs (docs/sim-apps.md).
--state-addr serves the apps' state as JSON on loopback for test suites:
GET /devices and GET /devices/{serial}/state/{package}.`,
		Example: `  apex sim
  apex sim --android 3 --app myapp.yaml --state-addr 127.0.0.1:7000
  adb connect 127.0.0.1:6520 && adb -s 127.0.0.1:6520 shell wm size`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return simRun(cmd.Context(), env, opts, simReady)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.Android, "android", opts.Android, "number of simulated Android phones")
	f.StringArrayVar(&opts.Apps, "app", nil, "YAML app spec to install on every phone (repeatable)")
	f.Int64Var(&opts.Seed, "seed", 0, "random seed (phone i uses seed+i): same seed, same popups")
	f.IntVar(&opts.PortBase, "port-base", opts.PortBase, "first adbd port (phone i listens on base+i); 0 picks free ports")
	f.StringVar(&opts.StateAddr, "state-addr", "", "serve app state as JSON on this loopback address (e.g. 127.0.0.1:7000)")
	return cmd
}

// simReady, when set (by tests), is called once `apex sim` has printed its
// devices.
var simReady func(*lab.Lab)

// simRun starts the lab, prints the devices and serves until ctx ends.
// ready, when set, is called once the devices are printed (for tests).
func simRun(ctx context.Context, env *Env, opts simOptions, ready func(*lab.Lab)) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.Android < 1 {
		return fmt.Errorf("--android %d: run at least one phone", opts.Android)
	}
	l, err := lab.Start(ctx, lab.Options{Android: opts.Android, AppFiles: opts.Apps, Seed: opts.Seed,
		PortBase: opts.PortBase, StateAddr: opts.StateAddr, Log: env.Log})
	if err != nil {
		return err
	}
	defer l.Close()
	if env.JSON {
		devs := make([]lab.DeviceInfo, 0, len(l.Devices()))
		for _, d := range l.Devices() {
			devs = append(devs, d.Info())
		}
		if err := env.PrintJSON(map[string]any{"devices": devs, "state_url": l.StateURL()}); err != nil {
			return err
		}
	} else {
		for i, d := range l.Devices() {
			fmt.Fprintf(env.Out, "android-%d\tadb\t%s\t%s\t(%s)\n", i+1, d.Addr, d.Info().Connect, d.Info().Model)
		}
		if u := l.StateURL(); u != "" {
			fmt.Fprintf(env.Out, "state\thttp\t%s/devices\n", u)
		}
	}
	fmt.Fprintln(env.Err, "apex sim: serving; press Ctrl-C to stop")
	if ready != nil {
		ready(l)
	}
	<-ctx.Done()
	return nil
}
