package ios_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/devicetest"
	"github.com/apexagent/apex/device/ios"
	"github.com/apexagent/apex/sim/lab"
)

// startLab runs one simulated iPhone with the conformance app installed.
func startLab(t testing.TB) *lab.Device {
	t.Helper()
	// The lab lives as long as its context: the test's lifetime.
	l, err := lab.Start(context.Background(), lab.Options{IOS: 1, AppFiles: []string{devicetest.AppFile()}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Devices()[0]
}

func openLab(t testing.TB, dev *lab.Device, opts *ios.Options) *ios.Driver {
	t.Helper()
	d, err := ios.Open(ctx(t), dev.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestConformance(t *testing.T) {
	d := openLab(t, startLab(t), nil)
	devicetest.Run(t, func(*testing.T) device.Driver { return d })
}

func TestOffline(t *testing.T) {
	dev := startLab(t)
	d := openLab(t, dev, &ios.Options{Timeout: 5 * time.Second, Retries: 3, Backoff: 100 * time.Millisecond})
	devicetest.Offline(t, d, dev.Stop, 6*time.Second)
}

// TestInputNeedsFocus: typing with no field focused says what to do.
func TestInputNeedsFocus(t *testing.T) {
	d := openLab(t, startLab(t), nil)
	must(t, d.TerminateApp(ctx(t), devicetest.App))
	must(t, d.LaunchApp(ctx(t), devicetest.App))
	err := d.InputText(ctx(t), "x")
	if err == nil || !strings.Contains(err.Error(), "tap a text field first") {
		t.Fatalf("InputText with no focus = %v; want a hint to tap a field", err)
	}
}

// TestAppSwitcherOnSim: the recents key opens the simulated iPhone's app
// switcher (SpringBoard on top, a card for the app that was open).
func TestAppSwitcherOnSim(t *testing.T) {
	d := openLab(t, startLab(t), nil)
	must(t, d.LaunchApp(ctx(t), devicetest.App))
	must(t, d.PressKey(ctx(t), device.KeyAppSwitch))
	src, err := d.Source(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	s := string(src.Data)
	if !strings.Contains(s, `<XCUIElementTypeApplication type="XCUIElementTypeApplication" name="SpringBoard"`) || !strings.Contains(s, `label="Conformance"`) {
		t.Fatalf("after the app switcher gesture the source is:\n%.1500s", s)
	}
}
