package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/apexagent/apex/device"
	"github.com/spf13/cobra"
)

func newCmdDevices(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "devices",
		Short: "List the devices every host can see (adb server, …)",
		Long: `List every device Apex can reach, with its ID (use it with --device), state,
model and screen size. Devices that cannot be driven in their state
(unauthorized, offline) are listed with what to do about it. The adb server is
started if none runs, as adb does; ADB_SERVER_SOCKET and
ANDROID_ADB_SERVER_PORT choose which server.`,
		Example: `  apex devices
  apex --json devices`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return devicesRun(cmd, env) },
	}
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

// openChosenDevice is openDevice for commands that drive one device, with
// the error a person needs when --device was left out and several devices
// are attached.
func openChosenDevice(ctx context.Context, env *Env, f *DeviceFlags) (device.Driver, device.Target, func(), error) {
	d, t, release, err := openDevice(ctx, env, f)
	var amb *device.AmbiguousError
	if errors.As(err, &amb) && amb.Query == "" {
		err = &chooseError{amb}
	}
	return d, t, release, err
}

// chooseError is an empty --device with several devices attached.
type chooseError struct{ *device.AmbiguousError }

func (e *chooseError) Error() string {
	return fmt.Sprintf("%d devices are attached: choose one with --device ID (any unique part of it): %s",
		len(e.Candidates), strings.Join(e.Candidates, ", "))
}

func (e *chooseError) Unwrap() error { return e.AmbiguousError }
