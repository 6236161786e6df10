package lab_test

// Issue 20's "screenshots at scale": 50 simulated phones polled together.
// The file uses only APIs older than the issue, so bench/shots.sh can copy it
// into a checkout of the old code and run both side by side.

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/bench/benchtest"
	"github.com/apexagent/apex/sim"
	"github.com/apexagent/apex/sim/adbd/adbdtest"
	"github.com/apexagent/apex/sim/lab"
)

// pollRounds is how many actions each phone takes during the burst.
const pollRounds = 4

// settleWait bounds the wait for the memory to come back after the burst.
const settleWait = 90 * time.Second

// BenchmarkPolledPhones starts 50 simulated phones in the Shop with the
// search field focused, then lets one client per phone, all together, do
// what an agent's steps do: change the screen (see pollChange),
// take a screenshot of the changed screen and a second one of the unchanged
// screen (the settle check). "adbd" asks each phone's adbd for
// `screencap -p` over its own connection, as a client does; "inproc" calls
// Phone.Screenshot. It reports the screenshots per second of the whole
// burst, the median and largest latency of one screenshot (and of the
// changed-screen ones), and the memory idle (50 phones, each with one
// screenshot taken, all free pages returned to the OS), right after the
// burst, after two GCs, and once the runtime has given back enough for
// the process to be within 1.5× idle (s-to-settle: how long that took;
// settleWait at most).
func BenchmarkPolledPhones(b *testing.B) {
	const n = 50
	for _, via := range []string{"adbd", "inproc"} {
		b.Run(via, func(b *testing.B) {
			for b.Loop() {
				pollBurst(b, n, via)
			}
		})
	}
}

// pollBurst times only the burst; b.Loop wants the timer running again at
// the end.
func pollBurst(b *testing.B, n int, via string) {
	b.StopTimer()
	defer b.StartTimer()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	l, err := lab.Start(ctx, lab.Options{Android: n, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	devs := l.Devices()
	for _, dev := range devs {
		if err := dev.Phone.Launch("com.apex.shop"); err != nil {
			b.Fatal(err)
		}
	}
	// The Shop may open its promotional popup 800 ms after it starts (a
	// seeded chance): let it, close it, then focus the search field.
	time.Sleep(time.Second)
	shoot := make([]func() ([]byte, error), n)
	for i, dev := range devs {
		p := dev.Phone
		p.DismissAlert()
		p.Tap(540, 400) // the search field: the keyboard shows
		if !p.KeyboardShown() {
			b.Fatalf("%s: no keyboard after a tap on the search field", dev.Serial)
		}
		shoot[i] = p.Screenshot
		if via == "adbd" {
			d, err := adb.Dial(ctx, dev.Addr, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			shoot[i] = func() ([]byte, error) { return adb.Exec(ctx, d, "screencap -p") }
		}
		if _, err := shoot[i](); err != nil {
			b.Fatal(err)
		}
	}
	idle := readMemory(b, "idle")

	var (
		mu         sync.Mutex
		all, fresh []time.Duration
		failed     error
		wg         sync.WaitGroup
	)
	if f := os.Getenv("SHOTS_CPUPROFILE"); f != "" {
		// The burst alone, not the phones' start: bench/shots.sh PROFILE=1.
		out, err := os.Create(fmt.Sprintf("%s.%s", f, via))
		if err != nil {
			b.Fatal(err)
		}
		defer out.Close()
		pprof.StartCPUProfile(out)
	}
	b.StartTimer()
	c0 := benchtest.CPU()
	t0 := time.Now()
	for i, dev := range devs {
		wg.Go(func() {
			var mine, mineFresh []time.Duration
			var last []byte
			for r := range pollRounds {
				pollChange(dev.Phone, i, r)
				for k := range 2 {
					s := time.Now()
					out, err := shoot[i]()
					d := time.Since(s)
					switch {
					case err != nil:
					case !bytes.HasPrefix(out, []byte("\x89PNG")):
						err = fmt.Errorf("%d bytes, not a PNG", len(out))
					case k == 0 && bytes.Equal(out, last):
						err = fmt.Errorf("the screen did not change")
					}
					last = out
					if err != nil {
						mu.Lock()
						failed = fmt.Errorf("%s round %d: %w", dev.Serial, r, err)
						mu.Unlock()
						return
					}
					mine = append(mine, d)
					if k == 0 {
						mineFresh = append(mineFresh, d)
					}
				}
			}
			mu.Lock()
			all = append(all, mine...)
			fresh = append(fresh, mineFresh...)
			mu.Unlock()
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	cpu := benchtest.CPU() - c0
	pprof.StopCPUProfile()
	b.StopTimer()
	if failed != nil {
		b.Fatal(failed)
	}
	burst := readMemory(b, "burst")
	after := readMemory(b, "gc")
	// The runtime gives free pages back at its own pace: wait until the
	// process is within 1.5× its idle size, for at most settleWait.
	var settled memory
	var settle time.Duration
	for t := time.Now(); ; time.Sleep(250 * time.Millisecond) {
		settled, settle = readMemory(b, "settled"), time.Since(t)
		if float64(settled.rss) <= 1.5*float64(idle.rss) || settle > settleWait {
			break
		}
	}

	b.ReportMetric(float64(len(all))/wall.Seconds(), "shots/s")
	b.ReportMetric(ms(benchtest.Median(all)), "ms-median")
	b.ReportMetric(ms(slices.Max(all)), "ms-max")
	b.ReportMetric(ms(benchtest.Median(fresh)), "fresh-ms-median")
	b.ReportMetric(ms(cpu)/float64(len(all)), "cpu-ms/shot")
	for _, m := range []struct {
		name string
		v    memory
	}{{"idle", idle}, {"burst", burst}, {"gc", after}, {"settled", settled}} {
		b.ReportMetric(float64(m.v.heap)/(1<<20), "MiB-heap-"+m.name)
		b.ReportMetric(float64(m.v.rss)/(1<<20), "MiB-RSS-"+m.name)
	}
	b.ReportMetric(float64(after.rss)/float64(idle.rss), "RSS-gc/idle")
	b.ReportMetric(float64(settled.rss)/float64(idle.rss), "RSS-settled/idle")
	b.ReportMetric(settle.Seconds(), "s-to-settle")
}

// pollChange changes phone i's screen for round r: on even rounds a tap on
// the search field (the keyboard shows again) and a character typed (the
// field, and the results it filters); on odd ones the keyboard hidden (a
// third of the screen).
func pollChange(p *sim.Phone, i, r int) {
	if r%2 == 1 {
		p.KeyEvent(sim.KeycodeEscape)
		return
	}
	p.Tap(540, 400)
	p.InputText(string(rune('a' + (i+r)%26)))
}

type memory struct{ heap, rss int64 }

// readMemory reads the Go heap in use and the process's resident set:
// as they are (burst, settled); after two GCs (gc: what pools of buffers
// kept is dropped; the runtime gives free pages back at its own pace); or
// after two GCs that return every free page to the OS (idle).
func readMemory(b *testing.B, when string) memory {
	b.Helper()
	switch when {
	case "gc":
		runtime.GC()
		runtime.GC()
	case "idle":
		runtime.GC()
		debug.FreeOSMemory()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memory{heap: int64(ms.HeapInuse), rss: benchtest.ProcStatus(b, "VmRSS")}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TestPolledPhones is the benchmark's burst on 5 phones, for what the
// screenshots are, not how fast: every one, through adbd as a client asks
// for it, is a PNG the standard decoder reads, with the pixels the phone's
// renderer draws for the screen at that moment. The first phone answers
// Debian's adb (`adb exec-out screencap -p`), the others this module's
// client.
func TestPolledPhones(t *testing.T) {
	n, rounds := 5, pollRounds
	if raceEnabled {
		n, rounds = 2, 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// What the phones warn of (a connection adbd closed and why) shows
	// when the test fails.
	l, err := lab.Start(ctx, lab.Options{Android: n, Seed: 1,
		Log: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	devs := l.Devices()
	var real *adbdtest.ADB
	if _, err := exec.LookPath("adb"); err == nil {
		real = adbdtest.Start(t)
	}
	var wg sync.WaitGroup
	for i, dev := range devs {
		shoot := func() ([]byte, error) { return nil, nil }
		if i == 0 && real != nil {
			serial := real.Connect(dev.Addr)
			shoot = func() ([]byte, error) {
				out, stderr, err := real.Run("-s", serial, "exec-out", "screencap", "-p")
				if err != nil {
					return nil, fmt.Errorf("adb exec-out screencap -p: %v: %s", err, stderr)
				}
				return out, nil
			}
		} else {
			d, err := adb.Dial(ctx, dev.Addr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			shoot = func() ([]byte, error) { return adb.Exec(ctx, d, "screencap -p") }
		}
		p := dev.Phone
		if err := p.Launch("com.apex.shop"); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			p.DismissAlert()
			p.Tap(540, 400)
			for r := range rounds {
				pollChange(p, i, r)
				for k := range 2 {
					if err := sameScreen(p, shoot); err != nil {
						t.Errorf("%s round %d, screenshot %d: %v", dev.Serial, r, k, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// sameScreen takes a screenshot and fails unless it decodes to the frame
// the phone draws. When the screen changed by itself meanwhile (the Shop's
// banner shows a moment after it starts, the clock turns), it looks again.
func sameScreen(p *sim.Phone, shoot func() ([]byte, error)) error {
	for try := 0; ; try++ {
		before, err := p.Frame()
		if err != nil {
			return err
		}
		data, err := shoot()
		if err != nil {
			return err
		}
		frame, err := p.Frame()
		if err != nil {
			return err
		}
		if !bytes.Equal(before.Pix, frame.Pix) && try < 3 {
			continue
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("decode %d bytes: %v", len(data), err)
		}
		got, ok := img.(*image.RGBA)
		if !ok {
			return fmt.Errorf("decoded as %T; want 8-bit RGB", img)
		}
		if got.Rect != frame.Rect || !bytes.Equal(got.Pix, frame.Pix) {
			return fmt.Errorf("the PNG (%v) does not show the screen (%v)", got.Rect, frame.Rect)
		}
		return nil
	}
}
