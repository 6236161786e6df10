// Package patience is how long tests wait for what they cannot synchronise
// on — a process to start, a page to draw, a stream to come back: every
// such deadline goes through Of, so one factor stretches them all on a
// slow or busy machine (`make stress`, the race detector) instead of each
// test guessing a margin of its own.
package patience

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// Env multiplies every deadline further, for a machine slower than
// `make stress` (APEX_TEST_PATIENCE=2 doubles them).
const Env = "APEX_TEST_PATIENCE"

// Factor stretches every deadline: raceFactor under the race detector,
// which makes our code 5–10 times slower, times Env when it is set.
var Factor = func() float64 {
	f := float64(raceFactor)
	if v, err := strconv.ParseFloat(os.Getenv(Env), 64); err == nil && v > 0 {
		f *= v
	}
	return f
}()

// Of is d stretched by Factor: how long a test waits for what it would
// see within d on an idle machine.
func Of(d time.Duration) time.Duration {
	return time.Duration(float64(d) * Factor)
}

// Poll calls cond until it returns nil, and fails t when Of(d) has passed
// first, with cond's last error: what it still waits for and what it saw.
func Poll(t testing.TB, d time.Duration, cond func() error) {
	t.Helper()
	if err := Until(d, cond); err != nil {
		t.Fatal(err)
	}
}

// Until is Poll for a caller that handles the timeout itself: it returns
// nil once cond does, or cond's last error, saying how long it waited, when
// Of(d) has passed first. It asks again after 10 ms, then less and less
// often, up to every 250 ms: quick for what comes at once, cheap for a
// condition that costs a process to ask.
func Until(d time.Duration, cond func() error) error {
	deadline := time.Now().Add(Of(d))
	timer := time.NewTimer(0)
	defer timer.Stop()
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 250*time.Millisecond) {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %w", Of(d), err)
		}
		timer.Reset(wait)
		<-timer.C
	}
}

// Context is a context that ends when Of(d) has passed or t ends: the
// deadline of work a test starts in its own process (a command run in
// place, a server it serves).
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Of(d))
	t.Cleanup(cancel)
	return ctx
}
