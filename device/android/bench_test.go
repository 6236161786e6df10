package android_test

// Benchmarks of the Android driver against the simulated phone: the native
// client against `adb` spawned per call, Source + Screenshot, and the two
// screenshot forms. Figures are in bench/README.md; run them with
// bench/android.sh.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/adb/adbtest"
	"github.com/apexagent/apex/bench/benchtest"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/sim/lab"
)

// flipScreen alternates the foreground app (in-process, untimed) so the
// simulated phone's screenshot cache never answers: a real phone renders
// every screencap afresh.
func flipScreen(b *testing.B, dev *lab.Device, i int) {
	b.Helper()
	app := "com.android.settings"
	if i%2 == 1 {
		app = "com.apex.notes"
	}
	if err := dev.Phone.Launch(app); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkShellRoundTrip runs `echo ok` on the same simulated phone, in
// the same run, three ways: the native client through Debian's adb server,
// `adb -P PORT -s SERIAL shell echo ok` spawned per call (through the same
// server), and the native client in direct mode (no server). It reports
// each median and how many times faster the native client is than a
// spawned adb.
func BenchmarkShellRoundTrip(b *testing.B) {
	dev := startLab(b)
	c := adbtest.StartServer(b)
	adbtest.Connect(b, c, dev.Serial)
	_, port, err := net.SplitHostPort(c.Addr())
	if err != nil {
		b.Fatal(err)
	}
	server := c.Device(dev.Serial)
	cx := ctx(b)
	direct, err := adb.Dial(cx, dev.Addr, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { direct.Close() })
	var native, spawned, straight benchtest.Sampler
	check := func(how string, out []byte, err error) {
		if err != nil || !bytes.Equal(bytes.TrimSpace(out), []byte("ok")) {
			b.Fatalf("%s: %q, %v", how, out, err)
		}
	}
	var out []byte
	for b.Loop() {
		native.Time(func() { out, err = adb.Shell(cx, server, "echo ok") })
		check("native", out, err)
		spawned.Time(func() {
			out, err = exec.CommandContext(cx, "adb", "-P", port, "-s", dev.Serial, "shell", "echo", "ok").Output()
		})
		check("spawned adb", out, err)
		straight.Time(func() { out, err = adb.Shell(cx, direct, "echo ok") })
		check("direct", out, err)
	}
	native.Report(b, "native")
	spawned.Report(b, "spawned")
	straight.Report(b, "direct")
	b.ReportMetric(float64(spawned.Median())/float64(native.Median()), "x-faster")
}

// openPath opens the simulated phone directly ("Direct") or through
// Debian's adb server ("ADBServer"), with the given screenshot mode.
func openPath(b *testing.B, dev *lab.Device, path string, mode android.ScreenshotMode) *android.Driver {
	b.Helper()
	opts := &android.Options{Screenshot: mode}
	if path == "Direct" {
		return openDirect(b, dev, opts)
	}
	return openServer(b, dev, opts)
}

// timeFresh times f once per iteration, on a screen changed (untimed)
// before each call, and reports the median.
func timeFresh(b *testing.B, dev *lab.Device, f func(ctx context.Context) error) {
	b.Helper()
	var s benchtest.Sampler
	var err error
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		flipScreen(b, dev, i)
		b.StartTimer()
		// Each call gets its own deadline: under heavy load a whole run
		// can outlast any one budget.
		cx, cancel := context.WithTimeout(context.Background(), time.Minute)
		s.Time(func() { err = f(cx) })
		cancel()
		if err != nil {
			b.Fatal(err)
		}
	}
	s.Report(b, "")
}

// BenchmarkSourceScreenshot is one observation as the runner makes it:
// Source then Screenshot (the default form) of a screen that changed.
func BenchmarkSourceScreenshot(b *testing.B) {
	dev := startLab(b)
	for _, path := range []string{"Direct", "ADBServer"} {
		b.Run(path, func(b *testing.B) {
			d := openPath(b, dev, path, "")
			timeFresh(b, dev, func(ctx context.Context) error {
				if _, err := d.Source(ctx); err != nil {
					return err
				}
				_, err := d.Screenshot(ctx)
				return err
			})
		})
	}
}

// BenchmarkScreenshotForms compares `screencap -p` (the device encodes the
// PNG) with the raw framebuffer pulled and encoded on the host, on a
// screen that changed, direct and through the adb server.
func BenchmarkScreenshotForms(b *testing.B) {
	dev := startLab(b)
	for _, path := range []string{"Direct", "ADBServer"} {
		for _, mode := range []android.ScreenshotMode{android.ScreenshotPNG, android.ScreenshotRaw} {
			b.Run(path+"/"+string(mode), func(b *testing.B) {
				d := openPath(b, dev, path, mode)
				var png []byte
				timeFresh(b, dev, func(ctx context.Context) (err error) {
					png, err = d.Screenshot(ctx)
					if err == nil && !bytes.HasPrefix(png, []byte("\x89PNG")) {
						err = fmt.Errorf("screenshot is not a PNG: % x", png[:min(8, len(png))])
					}
					return err
				})
				b.ReportMetric(float64(len(png))/1024, "KiB/png")
			})
		}
	}
}

// BenchmarkRawFramebufferSize reports what the raw form moves over the
// transport per screenshot, against the PNG the device would send.
func BenchmarkRawFramebufferSize(b *testing.B) {
	dev := startLab(b)
	d := openDirect(b, dev, nil)
	var raw, png []byte
	var err error
	cx := ctx(b)
	for b.Loop() {
		if raw, err = adb.Exec(cx, d.Transport(), "screencap"); err != nil {
			b.Fatal(err)
		}
		if png, err = adb.Exec(cx, d.Transport(), "screencap -p"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(raw))/(1<<20), "MiB-raw")
	b.ReportMetric(float64(len(png))/(1<<20), "MiB-png")
}
