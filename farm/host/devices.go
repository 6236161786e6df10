package host

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/sim/lab"
)

// slot is one device the host serves.
type slot struct {
	reg registry.Device
	// open returns a driver on a clean device: the app files install are
	// installed, then the apps reset names are cleared (a simulated phone
	// is started afresh from its spec).
	open func(ctx context.Context, reset, install []string) (device.Driver, func(), error)
	// real is a device of Options.Devices (listed again now and then);
	// offline is set while it is not listed ready.
	real    bool
	offline atomic.Bool
	// playground is the device's playground (Options.Playground), and
	// sessions counts the sessions it has open on the device.
	playground http.Handler
	sessions   atomic.Int32
	// sim is a simulated phone; busy is set while it runs a run, and
	// stop (set on one booted past Options.Sim) stops serving it.
	sim  bool
	busy atomic.Bool
	stop context.CancelFunc
}

// simSlots makes n simulated Android phones, and the func that makes the
// phone of index i (0-based) like them, for booting more later. Each run
// gets a phone started afresh from the built-in specs and seed i, so no
// run sees another's leftovers.
func simSlots(ctx context.Context, hostID string, n int, labels map[string]string, log *slog.Logger) ([]*slot, func(i int) *slot, error) {
	probe, err := lab.Start(ctx, lab.Options{Android: 1, Log: log})
	if err != nil {
		return nil, nil, fmt.Errorf("host: start a simulated phone: %w", err)
	}
	ph := probe.Devices()[0].Phone
	props := ph.Props()
	w, h, _ := ph.Display()
	probe.Close()
	make1 := func(i int) *slot {
		serial := "sim-" + strconv.Itoa(i+1)
		d := registry.Device{ID: device.QualifiedID(hostID, serial), Host: hostID, Serial: serial, Platform: "android",
			Labels: baseLabels(hostID, "android", props["ro.product.model"], props["ro.build.version.release"], w, h, labels),
			Health: registry.Health{State: "device", Battery: 100}}
		seed := int64(i)
		return &slot{reg: d, sim: true, open: func(ctx context.Context, _, install []string) (device.Driver, func(), error) {
			l, err := lab.Start(context.WithoutCancel(ctx), lab.Options{Android: 1, Seed: seed, Log: log})
			if err != nil {
				return nil, nil, fmt.Errorf("start simulated phone %s: %w", serial, err)
			}
			drv, err := android.OpenDirect(ctx, l.Devices()[0].Addr, &android.Options{Log: log})
			if err != nil {
				l.Close()
				return nil, nil, err
			}
			if err := installAll(ctx, drv, install); err != nil {
				drv.Close()
				l.Close()
				return nil, nil, err
			}
			return drv, func() { drv.Close(); l.Close() }, nil
		}}
	}
	var out []*slot
	for i := range n {
		out = append(out, make1(i))
	}
	return out, make1, nil
}

// hostSlots serves the ready devices real device hosts (adb, WDA) see
// now. Before a run, each app it names is cleared (pm clear) on devices
// that run shell commands.
func hostSlots(ctx context.Context, hostID string, hosts []device.Host, labels map[string]string) ([]*slot, error) {
	reg := device.NewRegistry(hosts...)
	ts, err := reg.Targets(ctx)
	if err != nil && len(ts) == 0 {
		return nil, err
	}
	var out []*slot
	for _, t := range ts {
		if !t.Ready() {
			continue
		}
		d := registry.Device{ID: device.QualifiedID(hostID, t.ID), Host: hostID, Serial: t.ID, Platform: string(t.Platform),
			Labels: baseLabels(hostID, string(t.Platform), t.Model, "", t.Width, t.Height, labels),
			Health: registry.Health{State: t.State}}
		id := t.ID
		out = append(out, &slot{reg: d, real: true, open: func(ctx context.Context, reset, install []string) (device.Driver, func(), error) {
			drv, _, err := reg.Open(ctx, id)
			if err != nil {
				return nil, nil, err
			}
			if err := installAll(ctx, drv, install); err != nil {
				drv.Close()
				return nil, nil, err
			}
			if len(reset) > 0 {
				sh, ok := drv.(device.Sheller)
				if !ok {
					drv.Close()
					return nil, nil, fmt.Errorf("device %s cannot reset apps (no shell): %w", id, device.ErrUnsupported)
				}
				for _, app := range reset {
					if _, err := sh.Shell(ctx, "pm clear "+app); err != nil {
						drv.Close()
						return nil, nil, fmt.Errorf("reset %s on %s: %w", app, id, err)
					}
				}
			}
			return drv, func() { drv.Close() }, nil
		}})
	}
	return out, nil
}

// errIOSInstall is why a farm iPhone installs no app: said in the run's
// reason, with what is missing.
var errIOSInstall = fmt.Errorf("installing iOS apps (.ipa, .app) on a farm iPhone is not supported: Apex drives iPhones through WebDriverAgent, which cannot install apps, and the host drives no device installer (ideviceinstaller, go-ios or xcrun devicectl); install the app on the iPhone beforehand and let the script launch its bundle id: %w", device.ErrUnsupported)

// installable fails unless a device of platform can install every app
// file (its extension is its kind: apk, ipa, app), before the device is
// opened for nothing.
func installable(platform string, files []string) error {
	for _, f := range files {
		kind := strings.TrimPrefix(filepath.Ext(f), ".")
		switch {
		case platform == "ios" && kind == "apk":
			return fmt.Errorf("app %s is an Android app (apk): an iPhone cannot install it; queue the run with --labels platform=android", filepath.Base(f))
		case platform == "ios":
			return errIOSInstall
		case kind != "apk":
			return fmt.Errorf("app %s is an iOS app (%s): %s devices install APKs; queue the run with --labels platform=ios", filepath.Base(f), kind, platform)
		}
	}
	return nil
}

// installAll installs app files on the device (Android: pushed and
// installed with pm install through the native adb client).
func installAll(ctx context.Context, drv device.Driver, files []string) error {
	if len(files) == 0 {
		return nil
	}
	in, ok := drv.(device.Installer)
	if !ok {
		return fmt.Errorf("this device cannot install apps (only Android devices do): %w", device.ErrUnsupported)
	}
	for _, f := range files {
		if err := in.Install(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

func baseLabels(hostID, platform, model, osVersion string, w, h int, custom map[string]string) map[string]string {
	l := map[string]string{"host": hostID, "platform": platform}
	if model != "" {
		l["model"] = model
	}
	if osVersion != "" {
		l["os"] = osVersion
	}
	if w > 0 {
		l["screen"] = strconv.Itoa(w) + "x" + strconv.Itoa(h)
	}
	for k, v := range custom {
		l[k] = v
	}
	return l
}
