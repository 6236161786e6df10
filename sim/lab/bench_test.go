package lab_test

// Benchmarks of the simulated phone as tools see it: through Debian's real
// adb server (private port), and 50 devices in one process. Figures are in
// bench/README.md; run them with bench/sim.sh.

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/adb/adbtest"
	"github.com/apexagent/apex/bench/benchtest"
	"github.com/apexagent/apex/sim"
	"github.com/apexagent/apex/sim/lab"
)

// benchCtx bounds a benchmark's device calls.
func benchCtx(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	b.Cleanup(cancel)
	return ctx
}

// startLab runs n simulated Android phones for the benchmark's lifetime.
func startLab(b *testing.B, n int) *lab.Lab {
	b.Helper()
	l, err := lab.Start(context.Background(), lab.Options{Android: n, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

// changeScreen alternates the foreground app between Settings and Notes
// (in-process, untimed), so the phone's screenshot cache never answers:
// a real phone renders every screencap afresh.
func changeScreen(b *testing.B, p *sim.Phone, i int) {
	b.Helper()
	app := "com.android.settings"
	if i%2 == 1 {
		app = "com.apex.notes"
	}
	if err := p.Launch(app); err != nil {
		b.Fatal(err)
	}
}

// serverDevice connects one simulated phone to a private adb server and
// returns a transport through that server.
func serverDevice(b *testing.B) (*lab.Device, adb.Transport) {
	dev, c := serverClient(b)
	return dev, c.Device(dev.Serial)
}

func serverClient(b *testing.B) (*lab.Device, *adb.Client) {
	b.Helper()
	dev := startLab(b, 1).Devices()[0]
	c := adbtest.StartServer(b)
	adbtest.Connect(b, c, dev.Serial)
	return dev, c
}

// BenchmarkADBCommandLine is what a person or a tool that spawns Google's
// adb sees: `adb -P PORT -s SERIAL exec-out …` per call, process start
// included, on a screen changed before each call.
func BenchmarkADBCommandLine(b *testing.B) {
	for _, tc := range []struct{ name, cmd, want string }{
		{"Dump", "uiautomator dump /dev/tty", "</hierarchy>"},
		{"Screencap", "screencap -p", "\x89PNG"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dev, c := serverClient(b)
			_, port, err := net.SplitHostPort(c.Addr())
			if err != nil {
				b.Fatal(err)
			}
			ctx := benchCtx(b)
			var s benchtest.Sampler
			var out []byte
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				changeScreen(b, dev.Phone, i)
				b.StartTimer()
				s.Time(func() {
					out, err = exec.CommandContext(ctx, "adb", "-P", port, "-s", dev.Serial, "exec-out", tc.cmd).Output()
				})
				if err != nil || !bytes.Contains(out, []byte(tc.want)) {
					b.Fatalf("adb exec-out %s: %v, %d bytes", tc.cmd, err, len(out))
				}
			}
			s.Report(b, "")
		})
	}
}

// BenchmarkADBServerDump is `adb exec-out uiautomator dump /dev/tty`
// through Debian's adb server, on a screen that changes every time.
func BenchmarkADBServerDump(b *testing.B) {
	dev, tr := serverDevice(b)
	ctx := benchCtx(b)
	var s benchtest.Sampler
	var out []byte
	var err error
	i := 0
	for b.Loop() {
		b.StopTimer()
		changeScreen(b, dev.Phone, i)
		i++
		b.StartTimer()
		s.Time(func() { out, err = adb.Exec(ctx, tr, "uiautomator dump /dev/tty") })
		if err != nil || !bytes.Contains(out, []byte("</hierarchy>")) {
			b.Fatalf("dump: %v, %d bytes", err, len(out))
		}
	}
	s.Report(b, "")
	size := len(out)
	b.ReportMetric(float64(size)/1024, "KiB/dump")
}

// BenchmarkADBServerScreencap is `adb exec-out screencap -p` through
// Debian's adb server. Fresh renders a changed screen every call; Cached
// asks again for an unchanged screen (the sim keeps its last PNG).
func BenchmarkADBServerScreencap(b *testing.B) {
	for _, fresh := range []bool{true, false} {
		name := "Cached"
		if fresh {
			name = "Fresh"
		}
		b.Run(name, func(b *testing.B) {
			dev, tr := serverDevice(b)
			ctx := benchCtx(b)
			var s benchtest.Sampler
			var out []byte
			var err error
			i := 0
			for b.Loop() {
				if fresh {
					b.StopTimer()
					changeScreen(b, dev.Phone, i)
					i++
					b.StartTimer()
				}
				s.Time(func() { out, err = adb.Exec(ctx, tr, "screencap -p") })
				if err != nil || !bytes.HasPrefix(out, []byte("\x89PNG")) {
					b.Fatalf("screencap: %v, %d bytes", err, len(out))
				}
			}
			s.Report(b, "")
			b.ReportMetric(float64(len(out))/1024, "KiB/png")
		})
	}
}

// BenchmarkFiftyDevices starts 50 simulated phones in this process, dials
// each over the device protocol and takes a UI dump and a screenshot of
// each, then reports the memory each device holds: the live heap, and the
// process's resident set after the Go runtime returned free pages.
func BenchmarkFiftyDevices(b *testing.B) {
	const n = 50
	for b.Loop() {
		b.StopTimer()
		heap0, rss0 := liveMemory(b)
		b.StartTimer()
		l, err := lab.Start(context.Background(), lab.Options{Android: n, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		ctx := benchCtx(b)
		conns := make([]*adb.Direct, 0, n)
		for _, dev := range l.Devices() {
			d, err := adb.Dial(ctx, dev.Addr, nil)
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, d)
			if out, err := adb.Exec(ctx, d, "uiautomator dump /dev/tty"); err != nil || !bytes.Contains(out, []byte("</hierarchy>")) {
				b.Fatalf("%s: dump: %v", dev.Serial, err)
			}
			if out, err := adb.Exec(ctx, d, "screencap -p"); err != nil || !bytes.HasPrefix(out, []byte("\x89PNG")) {
				b.Fatalf("%s: screencap: %v", dev.Serial, err)
			}
		}
		b.StopTimer()
		heap1, rss1 := liveMemory(b)
		b.ReportMetric(float64(heap1-heap0)/n/(1<<20), "MiB-heap/device")
		b.ReportMetric(float64(rss1-rss0)/n/(1<<20), "MiB-RSS/device")
		b.ReportMetric(float64(rss1)/(1<<20), "MiB-RSS-total")
		// VmHWM is the process's peak: run this benchmark alone to read
		// it as the peak of the 50 devices' work.
		b.ReportMetric(float64(benchtest.ProcStatus(b, "VmHWM")-rss0)/n/(1<<20), "MiB-peakRSS/device")
		for _, d := range conns {
			d.Close()
		}
		l.Close()
		b.StartTimer()
	}
}

// liveMemory collects garbage, returns free pages to the OS and reads the
// live heap and the resident set size.
func liveMemory(b *testing.B) (heap, rss int64) {
	b.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc), benchtest.ProcStatus(b, "VmRSS")
}

// BenchmarkADBDExec is what the device protocol costs one `exec:` on the
// simulated phone, beside the phone's own work: a screencap of an
// unchanged screen (the phone answers with the PNG it kept) and a plain
// command, each over one direct connection, against Phone.Screenshot
// in-process. cpu-us/op is the whole process's CPU (client, adbd, phone).
func BenchmarkADBDExec(b *testing.B) {
	dev := startLab(b, 1).Devices()[0]
	ctx := benchCtx(b)
	d, err := adb.Dial(ctx, dev.Addr, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	cpu := func(b *testing.B, f func() error) {
		b.ReportAllocs()
		if err := f(); err != nil { // the first screenshot draws the screen
			b.Fatal(err)
		}
		c0 := benchtest.CPU()
		for b.Loop() {
			if err := f(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(benchtest.CPU()-c0)/float64(time.Microsecond)/float64(b.N), "cpu-us/op")
	}
	for _, cmd := range []string{"screencap -p", "getprop ro.product.model"} {
		b.Run(cmd, func(b *testing.B) {
			cpu(b, func() error { _, err := adb.Exec(ctx, d, cmd); return err })
		})
	}
	b.Run("in-process screenshot", func(b *testing.B) {
		cpu(b, func() error { _, err := dev.Phone.Screenshot(); return err })
	})
}
