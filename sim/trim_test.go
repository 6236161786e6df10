package sim

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apexagent/apex/internal/patience"
)

// TestTrimmer: the memory of a burst is released once, a second after its
// last screenshot; screenshots below the threshold release nothing, and a
// screenshot during the quiet second postpones the release.
func TestTrimmer(t *testing.T) {
	type shot struct {
		after time.Duration // since the one before
		bytes int
	}
	cases := []struct {
		name  string
		shots []shot
		want  []time.Duration // releases, since the first shot
	}{
		{"a few shots", []shot{{0, 30}, {100 * time.Millisecond, 30}}, nil},
		{"a burst", []shot{{0, 60}, {10 * time.Millisecond, 60}, {10 * time.Millisecond, 60}},
			[]time.Duration{20*time.Millisecond + time.Second}},
		{"a shot in the quiet second", []shot{{0, 100}, {900 * time.Millisecond, 1}},
			[]time.Duration{1900 * time.Millisecond}},
		{"two bursts", []shot{{0, 100}, {3 * time.Second, 50}, {10 * time.Millisecond, 50}},
			[]time.Duration{time.Second, 3010*time.Millisecond + time.Second}},
		{"the count starts again after a release", []shot{{0, 100}, {3 * time.Second, 50}}, []time.Duration{time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var mu sync.Mutex
				var got []time.Duration
				tr := &trimmer{idle: time.Second, min: 100, release: func() {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, time.Since(start))
				}}
				for _, s := range tc.shots {
					time.Sleep(s.after)
					tr.note(s.bytes)
				}
				time.Sleep(10 * time.Second)
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				if len(got) != len(tc.want) {
					t.Fatalf("released at %v; want %v", got, tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Errorf("release %d at %v; want %v", i, got[i], tc.want[i])
					}
				}
			})
		})
	}
}

// TestBurstMemoryReturns: once phones that took a burst of screenshots
// are quiet, the heap is back to its size before the burst, without a GC
// of the test's: what the burst left is collected and its free pages are
// returned to the OS.
func TestBurstMemoryReturns(t *testing.T) {
	burstTrim.mu.Lock()
	min := burstTrim.min
	burstTrim.min = 4 << 20 // fewer screenshots, for the race detector
	burstTrim.mu.Unlock()
	t.Cleanup(func() {
		burstTrim.mu.Lock()
		burstTrim.min = min
		burstTrim.mu.Unlock()
	})
	phones := make([]*Phone, 4)
	for i := range phones {
		p, err := NewPhone(Options{Seed: 1, Clock: newFakeClock()})
		if err != nil {
			t.Fatal(err)
		}
		p.Launch("com.apex.shop")
		p.Tap(540, 400)
		if _, err := p.Screenshot(); err != nil {
			t.Fatal(err)
		}
		phones[i] = p
	}
	runtime.GC()
	debug.FreeOSMemory()
	idle := retainedHeap()

	// The burst: each phone types and is shot until min bytes were handed
	// out; the PNGs are kept until its end, as clients hold them a while.
	var held [][]byte
	for n, r := 0, 0; n < 2*burstTrim.min; r++ {
		for i, p := range phones {
			p.InputText(string(rune('a' + (i+r)%26)))
			png, err := p.Screenshot()
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, bytes.Clone(png))
			n += len(png)
		}
	}
	burst := retainedHeap()
	held = nil

	const slack = 4 << 20
	deadline := time.Now().Add(patience.Of(10 * time.Second))
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for now := retainedHeap(); now > idle+slack; now = retainedHeap() {
		if time.Now().After(deadline) {
			t.Fatalf("the heap kept %.1f MiB after the burst (%.1f MiB at its end), %.1f MiB before it; want at most %.1f MiB more than before",
				mib(now), mib(burst), mib(idle), mib(slack))
		}
		<-tick.C
	}
}

// retainedHeap is the heap memory the process holds from the OS: its
// objects, live or not yet collected, and free pages not yet returned.
func retainedHeap() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapSys - ms.HeapReleased
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }
