package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/device/lease"
	"github.com/spf13/cobra"
)

// DeviceFlags choose the device a command drives.
type DeviceFlags struct {
	ID   string   // --device: a device ID, serial, or any unambiguous part
	Sim  bool     // --sim: start a simulated phone in this process
	Apps []string // --app: extra app specs (YAML) to install on the simulated phone

	// SimPlatform is the simulated phone's platform: "" or "android", or
	// "ios" (--sim=ios, or a script's sim: {platform: ios}).
	SimPlatform string
	// Wait is --wait-device: how long to wait for a device another process
	// holds; 0 fails at once.
	Wait time.Duration
	// Farm is --farm: lease the device from this farm (cli/farm_device.go);
	// FarmToken is its token ($APEX_FARM_TOKEN).
	Farm, FarmToken string

	cmd *cobra.Command // the command the flags belong to, named in the lease
}

// Register adds --device, --sim, --app and --wait-device to cmd.
func (f *DeviceFlags) Register(cmd *cobra.Command) {
	f.cmd = cmd
	cmd.Flags().StringVarP(&f.ID, "device", "d", "", "device ID, serial or unique part of one (see apex devices); empty picks the only device")
	cmd.Flags().VarPF(simFlag{&f.Sim, &f.SimPlatform}, "sim", "", "drive a simulated phone started in this process for this command only (no adb needed); --sim=ios simulates an iPhone").NoOptDefVal = "true"
	cmd.Flags().StringArrayVar(&f.Apps, "app", nil, "with --sim: install this app spec (YAML) too; repeatable")
	cmd.Flags().StringVar(&f.Farm, "farm", "", "lease the device from this farm (nats://HOST:4222) and drive it through its host; token from $"+FarmTokenEnv)
	f.FarmToken = os.Getenv(FarmTokenEnv)
	cmd.RegisterFlagCompletionFunc("device", completeDevices)
	cmd.Flags().DurationVar(&f.Wait, "wait-device", 0, "when another process (apex act, mcp, playground, …) holds the device, wait up to this long for it (e.g. 10s, 5m); 0 fails at once")
}

// command is the command line other processes are told holds the device:
// the command and its arguments, shortened.
func (f *DeviceFlags) command() string {
	if f.cmd == nil {
		return "apex"
	}
	parts := []string{f.cmd.CommandPath()}
	for _, a := range f.cmd.Flags().Args() {
		if strings.ContainsAny(a, " \t\n'\"") {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return truncateRunes(strings.Join(parts, " "), 80)
}

// deviceHosts are the hosts `apex devices` lists and --device resolves
// against. New kinds of device add their host here.
func deviceHosts(env *Env) ([]device.Host, error) { return newDeviceHosts(env, true) }

// newDeviceHosts are deviceHosts; label reads each ready Android device's
// model and screen size (a shell command each), which lists show and
// opening a device does not need. Without labels (opening one) the
// Android driver does not first check that the device answers a shell
// command: the command's own first call finds out, with the same retries,
// one round trip and a features query sooner.
func newDeviceHosts(env *Env, label bool) ([]device.Host, error) {
	c, err := adb.NewClient(&adb.Options{Log: env.Log})
	if err != nil {
		return nil, err
	}
	wh, err := wdaHost(env)
	if err != nil {
		return nil, err
	}
	hosts := []device.Host{android.NewHost(c, &android.HostOptions{StartServer: true, NoLabels: !label, Log: env.Log, Driver: &android.Options{Log: env.Log, Unchecked: !label}})}
	if wh != nil {
		hosts = append(hosts, wh)
	}
	return hosts, nil
}

// openDevice opens the device f names, holding its lease (device/lease)
// until release, so no other process drives it meanwhile: one that does
// fails at once, or waits up to --wait-device. With --sim it starts a
// simulated phone in-process and drives it over the device protocol
// directly (no adb server, no adb binary); that phone is this process's
// own, so it takes no lease. The returned func releases everything.
func openDevice(ctx context.Context, env *Env, f *DeviceFlags) (device.Driver, device.Target, func(), error) {
	if f.Farm != "" {
		return openFarmDevice(ctx, env, f)
	}
	if f.Sim {
		return openSim(ctx, env, f)
	}
	if len(f.Apps) > 0 {
		return nil, device.Target{}, nil, fmt.Errorf("--app installs apps on the simulated phone only: add --sim")
	}
	var t device.Target
	var open func() (device.Driver, error)
	if url, ok := strings.CutPrefix(f.ID, wdaPrefix); ok {
		var err error
		if t, open, err = wdaDevice(ctx, env, url); err != nil {
			return nil, t, nil, err
		}
	} else {
		hosts, err := newDeviceHosts(env, false)
		if err != nil {
			return nil, device.Target{}, nil, err
		}
		reg := device.NewRegistry(hosts...)
		if t, err = reg.Resolve(ctx, f.ID); err != nil {
			return nil, t, nil, err
		}
		open = func() (device.Driver, error) { return reg.OpenTarget(ctx, t) }
	}
	l, err := lease.Acquire(ctx, t.ID, &lease.Options{Wait: f.Wait, Command: f.command(), Waiting: func(e *lease.InUseError) {
		fmt.Fprintf(env.Err, "apex: %v; waiting up to %v for it (--wait-device)\n", e, f.Wait)
	}})
	if err != nil {
		return nil, t, nil, leaseError(err)
	}
	d, err := open()
	if err != nil {
		l.Release()
		return nil, t, nil, err
	}
	return d, t, func() { d.Close(); l.Release() }, nil
}

// leaseError says what to do about a device another process holds.
func leaseError(err error) error {
	var inUse *lease.InUseError
	switch {
	case !errors.As(err, &inUse):
		return err
	case inUse.Waited > 0:
		return fmt.Errorf("%w: wait longer with --wait-device DURATION, or pick another device", err)
	}
	return fmt.Errorf("%w: wait for it with --wait-device DURATION, or pick another device", err)
}

// wdaPrefix marks a --device value that is a WebDriverAgent URL
// (--device wda:http://127.0.0.1:8100), opened without listing hosts.
const wdaPrefix = "wda:"

// wdaURLsEnv is ios.EnvURLs, named here for the light build, which links
// no iOS driver (TestLightNamesMatch).
const wdaURLsEnv = "APEX_WDA_URLS"

// simFlag is --sim: a bool that also takes the platform to simulate
// (--sim, --sim=android, --sim=ios).
type simFlag struct {
	on       *bool
	platform *string
}

func (s simFlag) String() string {
	if s.on == nil || !*s.on {
		return "false"
	}
	if *s.platform != "" {
		return *s.platform
	}
	return "true"
}

func (s simFlag) Set(v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "android":
		*s.on, *s.platform = true, ""
		if strings.EqualFold(v, "android") {
			*s.platform = "android"
		}
	case "ios", "iphone":
		*s.on, *s.platform = true, "ios"
	case "false", "0":
		*s.on, *s.platform = false, ""
	default:
		return fmt.Errorf("%q: use --sim (an Android phone), --sim=android or --sim=ios", v)
	}
	return nil
}

func (s simFlag) Type() string { return "bool" }

// FarmEnv and FarmTokenEnv name the environment variables that give --farm
// and --token their defaults.
const (
	FarmEnv      = "APEX_FARM"
	FarmTokenEnv = "APEX_FARM_TOKEN"
	// FarmCAEnv names the certificate a farm serving TLS is trusted by.
	FarmCAEnv = "APEX_FARM_CA"
)
