package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/sim/lab"
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
}

// Register adds --device, --sim and --app to cmd.
func (f *DeviceFlags) Register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.ID, "device", "d", "", "device ID, serial or unique part of one (see apex devices); empty picks the only device")
	cmd.Flags().VarPF(simFlag{&f.Sim, &f.SimPlatform}, "sim", "", "drive a simulated phone started in this process for this command only (no adb needed); --sim=ios simulates an iPhone").NoOptDefVal = "true"
	cmd.Flags().StringArrayVar(&f.Apps, "app", nil, "with --sim: install this app spec (YAML) too; repeatable")
}

// deviceHosts are the hosts `apex devices` lists and --device resolves
// against. New kinds of device add their host here.
func deviceHosts(env *Env) ([]device.Host, error) {
	c, err := adb.NewClient(&adb.Options{Log: env.Log})
	if err != nil {
		return nil, err
	}
	wh, err := wdaHost(env)
	if err != nil {
		return nil, err
	}
	return []device.Host{android.NewHost(c, &android.HostOptions{StartServer: true, Log: env.Log, Driver: &android.Options{Log: env.Log}}), wh}, nil
}

// openDevice opens the device f names. With --sim it starts a simulated
// phone in-process and drives it over the device protocol directly (no adb
// server, no adb binary). The returned func releases everything.
func openDevice(ctx context.Context, env *Env, f *DeviceFlags) (device.Driver, device.Target, func(), error) {
	if f.Sim {
		return openSim(ctx, env, f)
	}
	if len(f.Apps) > 0 {
		return nil, device.Target{}, nil, fmt.Errorf("--app installs apps on the simulated phone only: add --sim")
	}
	if url, ok := strings.CutPrefix(f.ID, wdaPrefix); ok {
		return openWDA(ctx, env, url)
	}
	hosts, err := deviceHosts(env)
	if err != nil {
		return nil, device.Target{}, nil, err
	}
	d, t, err := device.NewRegistry(hosts...).Open(ctx, f.ID)
	if err != nil {
		return nil, t, nil, err
	}
	return d, t, func() { d.Close() }, nil
}

func openSim(ctx context.Context, env *Env, f *DeviceFlags) (device.Driver, device.Target, func(), error) {
	if f.ID != "" {
		return nil, device.Target{}, nil, fmt.Errorf("--device and --sim both given: use one")
	}
	if f.SimPlatform == "ios" {
		return openSimIOS(ctx, env, f)
	}
	// The lab lives until release, not until ctx ends.
	l, err := lab.Start(context.WithoutCancel(ctx), lab.Options{Android: 1, AppFiles: f.Apps, Log: env.Log})
	if err != nil {
		return nil, device.Target{}, nil, fmt.Errorf("starting the simulated phone: %w", err)
	}
	dev := l.Devices()[0]
	d, err := android.OpenDirect(ctx, dev.Addr, &android.Options{Log: env.Log})
	if err != nil {
		l.Close()
		return nil, device.Target{}, nil, err
	}
	w, h, _ := dev.Phone.Display()
	t := device.Target{ID: device.QualifiedID("sim", dev.Serial), Host: "sim", Serial: dev.Serial,
		Platform: device.Android, State: "device", Model: dev.Phone.Props()["ro.product.model"], Width: w, Height: h}
	return d, t, func() { d.Close(); l.Close() }, nil
}
