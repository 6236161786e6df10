//go:build !apexlite

package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/device/ios"
	"github.com/apexagent/apex/sim/lab"
)

// simCallTimeout bounds each call to a simulated phone this process
// started: it cannot be unplugged or hang apart from this process, so a
// slow answer means a busy machine (one CPU shared by many, the race
// detector), not a lost phone; the drivers' defaults (15 s, 20 s) are for
// real phones, whose silence means they are gone.
const simCallTimeout = 2 * time.Minute

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
	d, err := android.OpenDirect(ctx, dev.Addr, &android.Options{Log: env.Log, Timeout: simCallTimeout})
	if err != nil {
		l.Close()
		return nil, device.Target{}, nil, err
	}
	w, h, _ := dev.Phone.Display()
	t := device.Target{ID: device.QualifiedID("sim", dev.Serial), Host: "sim", Serial: dev.Serial,
		Platform: device.Android, State: "device", Model: dev.Phone.Props()["ro.product.model"], Width: w, Height: h}
	return d, t, func() { d.Close(); l.Close() }, nil
}

// openSimIOS starts a simulated iPhone in-process and drives it through
// its WebDriverAgent face, as a real iPhone is driven.
func openSimIOS(ctx context.Context, env *Env, f *DeviceFlags) (device.Driver, device.Target, func(), error) {
	// The lab lives until release, not until ctx ends.
	l, err := lab.Start(context.WithoutCancel(ctx), lab.Options{IOS: 1, AppFiles: f.Apps, Log: env.Log})
	if err != nil {
		return nil, device.Target{}, nil, fmt.Errorf("starting the simulated iPhone: %w", err)
	}
	dev := l.Devices()[0]
	d, err := ios.Open(ctx, dev.URL, &ios.Options{Log: env.Log, Timeout: simCallTimeout})
	if err != nil {
		l.Close()
		return nil, device.Target{}, nil, err
	}
	w, h, _ := dev.Phone.Display()
	t := device.Target{ID: device.QualifiedID("sim", dev.Serial), Host: "sim", Serial: dev.Serial,
		Platform: device.IOS, State: "ready", Model: dev.Phone.Model(), Width: w, Height: h}
	return d, t, func() { d.Close(); l.Close() }, nil
}
