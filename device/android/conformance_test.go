package android_test

import (
	"context"
	"testing"
	"time"

	"github.com/apexagent/apex/adb/adbtest"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/device/devicetest"
	"github.com/apexagent/apex/sim/lab"
)

// startLab runs one simulated phone with the conformance app installed.
func startLab(t testing.TB) *lab.Device {
	t.Helper()
	// The lab lives as long as its context: the test's lifetime.
	l, err := lab.Start(context.Background(), lab.Options{Android: 1, AppFiles: []string{devicetest.AppFile()}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Devices()[0]
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// openDirect drives the device with no adb server at all.
func openDirect(t testing.TB, dev *lab.Device, opts *android.Options) *android.Driver {
	t.Helper()
	d, err := android.OpenDirect(ctx(t), dev.Addr, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// openServer drives the device through Debian's adb server on a private port.
func openServer(t testing.TB, dev *lab.Device, opts *android.Options) *android.Driver {
	t.Helper()
	c := adbtest.StartServer(t)
	adbtest.Connect(t, c, dev.Serial)
	d, err := android.OpenWith(ctx(t), c.Device(dev.Serial), dev.Serial, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestConformanceDirect(t *testing.T) {
	d := openDirect(t, startLab(t), nil)
	devicetest.Run(t, func(*testing.T) device.Driver { return d })
}

func TestConformanceADBServer(t *testing.T) {
	d := openServer(t, startLab(t), nil)
	devicetest.Run(t, func(*testing.T) device.Driver { return d })
}

// offlineOpts keep the retry budget small so the bound is meaningful.
var offlineOpts = &android.Options{Timeout: 5 * time.Second, Retries: 3, Backoff: 100 * time.Millisecond}

func TestOfflineDirect(t *testing.T) {
	dev := startLab(t)
	d := openDirect(t, dev, offlineOpts)
	devicetest.Offline(t, d, dev.Stop, 6*time.Second)
}

func TestOfflineADBServer(t *testing.T) {
	dev := startLab(t)
	d := openServer(t, dev, offlineOpts)
	devicetest.Offline(t, d, dev.Stop, 6*time.Second)
}
