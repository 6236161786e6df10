package sim

import (
	"runtime/debug"
	"sync"
	"time"
)

// burstTrim returns the memory a burst of screenshots used to the OS once
// the process's phones have been quiet for a second. 50 phones polled
// together leave ~60 MB of free heap behind (the PNGs, the clients'
// copies of them); the Go runtime gives it back at its own pace, and after
// the GC that ends a burst it may keep most of it until the next GC, two
// minutes later when nothing allocates.
var burstTrim = &trimmer{idle: time.Second, min: 32 << 20, release: releaseBurst}

// releaseBurst drops the bands shared between phones (a burst fills the
// cache; the next screenshots compress what they show again) and returns
// the free heap to the OS: one GC and a scavenge, a few milliseconds.
func releaseBurst() {
	sharedBands.clear()
	debug.FreeOSMemory()
}

// trimmer calls release once after a burst: when at least min bytes of
// screenshots were handed out since the last release and none for idle.
// A phone polled now and then (an agent's steps) reaches min in minutes,
// so the release runs rarely outside bursts.
type trimmer struct {
	idle    time.Duration
	min     int
	release func()

	mu    sync.Mutex
	n     int         // bytes handed out since the last release
	timer *time.Timer // armed once n reached min
}

// note counts a screenshot of n bytes handed out.
func (t *trimmer) note(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n += n
	switch {
	case t.n < t.min:
	case t.timer == nil:
		t.timer = time.AfterFunc(t.idle, t.fire)
	default:
		t.timer.Reset(t.idle)
	}
}

func (t *trimmer) fire() {
	t.mu.Lock()
	t.n = 0
	t.mu.Unlock()
	t.release()
}
