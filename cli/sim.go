//go:build !apexlite

package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/apexagent/apex/internal/supervise"
	"github.com/apexagent/apex/sim"
	"github.com/apexagent/apex/sim/lab"
	"github.com/spf13/cobra"
)

// simOptions are the flags of `apex sim`.
type simOptions struct {
	Android   int
	IOS       int
	WDAPort   int
	Apps      []string
	Seed      int64
	PortBase  int
	StateAddr string
	// StateFile keeps the one phone's state (installed apps, settings,
	// the app in front) across restarts: read at start, written as it
	// changes.
	StateFile string
	// EventsFD, when set, is a file descriptor the process that started
	// this one reads the supervised processes' events from
	// (supervise.Relay): the encoder's crashes reach its playground.
	EventsFD int
}

func newCmdSim(env *Env) *cobra.Command {
	opts := simOptions{Android: 1, PortBase: lab.DefaultPortBase, WDAPort: DefaultWDAPort}
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run simulated phones that adb, WebDriverAgent clients (and Apex) can connect to",
		Long: `Run simulated Android phones, each serving adbd on a loopback TCP port, until
interrupted (Ctrl-C). Attach one with the printed "adb connect" command, then
use it like any device: adb shell, adb install, scrcpy-free screenshots, …

--ios N adds N simulated iPhones (only iPhones unless --android is given),
each serving the WebDriverAgent HTTP API at the printed URL
(http://127.0.0.1:8100, 8101, …): use it with --device wda:URL.

Apps come from the built-ins plus any --app YAML specs (docs/sim-apps.md).
--state-addr serves the apps' state as JSON on loopback for test suites:
GET /devices and GET /devices/{serial}/state/{package}.`,
		Example: `  apex sim
  apex sim --android 3 --app myapp.yaml --state-addr 127.0.0.1:7000
  apex sim --ios 2
  # apex sim serves until Ctrl-C; in another terminal:
  adb connect 127.0.0.1:6520 && adb -s 127.0.0.1:6520 shell wm size
  curl http://127.0.0.1:8100/status`,
		Annotations: map[string]string{annotBlocks: "until Ctrl-C"},
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.IOS > 0 && !cmd.Flags().Changed("android") {
				opts.Android = 0
			}
			return simRun(cmd.Context(), env, opts, simReady)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.Android, "android", opts.Android, "number of simulated Android phones")
	f.IntVar(&opts.IOS, "ios", 0, "number of simulated iPhones (WebDriverAgent over HTTP)")
	f.IntVar(&opts.WDAPort, "wda-port-base", opts.WDAPort, "first WebDriverAgent port (iPhone i listens on base+i); 0 picks free ports")
	f.StringArrayVar(&opts.Apps, "app", nil, "YAML app spec to install on every phone (repeatable)")
	f.Int64Var(&opts.Seed, "seed", 0, "random seed (phone i uses seed+i): same seed, same popups")
	f.IntVar(&opts.PortBase, "port-base", opts.PortBase, "first adbd port (phone i listens on base+i); 0 picks free ports")
	f.StringVar(&opts.StateAddr, "state-addr", "", "serve app state as JSON on this loopback address (e.g. 127.0.0.1:7000)")
	f.StringVar(&opts.StateFile, "state-file", "", "keep the phone's installed apps, settings and app in front in this file across restarts (one phone only)")
	f.IntVar(&opts.EventsFD, "events-fd", 0, "write the supervised processes' starts and crashes (the H.264 encoder's) as JSON lines to this inherited file descriptor")
	_ = f.MarkHidden("events-fd") // for the playground that starts it
	return cmd
}

// DefaultWDAPort is WebDriverAgent's usual port, the first `apex sim --ios`
// uses.
const DefaultWDAPort = 8100

// simReady, when set (by tests), is called once `apex sim` has printed its
// devices.
var simReady func(*lab.Lab)

// simRun starts the lab, prints the devices and serves until ctx ends.
// ready, when set, is called once the devices are printed (for tests).
func simRun(ctx context.Context, env *Env, opts simOptions, ready func(*lab.Lab)) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.Android < 0 || opts.IOS < 0 || opts.Android+opts.IOS < 1 {
		return fmt.Errorf("--android %d --ios %d: run at least one phone", opts.Android, opts.IOS)
	}
	if opts.StateFile != "" && opts.Android+opts.IOS != 1 {
		return fmt.Errorf("--state-file keeps one phone's state: run one (--android 1 or --ios 1)")
	}
	lo := lab.Options{Android: opts.Android, IOS: opts.IOS, AppFiles: opts.Apps, Seed: opts.Seed,
		PortBase: opts.PortBase, WDAPortBase: opts.WDAPort, StateAddr: opts.StateAddr, Log: env.Log}
	if opts.EventsFD > 0 {
		lo.OnSupervise = supervise.Relay(os.NewFile(uintptr(opts.EventsFD), "events"))
	}
	if opts.StateFile != "" {
		// Restored before the phone answers: no client sees it afresh.
		lo.Prepare = func(_ int, p *sim.Phone) error { return restoreSimState(p, opts.StateFile) }
	}
	l, err := lab.Start(ctx, lo)
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
		na, ni := 0, 0
		for _, d := range l.Devices() {
			if d.Platform == "ios" {
				ni++
				fmt.Fprintf(env.Out, "ios-%d\twda\t%s\t%s\t(%s)\n", ni, d.URL, d.Info().Connect, d.Info().Model)
				continue
			}
			na++
			fmt.Fprintf(env.Out, "android-%d\tadb\t%s\t%s\t(%s)\n", na, d.Addr, d.Info().Connect, d.Info().Model)
		}
		if u := l.StateURL(); u != "" {
			fmt.Fprintf(env.Out, "state\thttp\t%s/devices\n", u)
		}
	}
	fmt.Fprintln(env.Err, "apex sim: serving; press Ctrl-C to stop")
	if ready != nil {
		ready(l)
	}
	if opts.StateFile != "" {
		return keepSimState(ctx, l.Devices()[0].Phone, opts.StateFile)
	}
	<-ctx.Done()
	return nil
}
