package runner

import (
	"context"
	"time"

	"github.com/apexagent/apex/perceive"
)

// screen is one observation of the device (package perceive).
type screen = perceive.Screen

// observe reads the UI source and builds its Scene.
func (r *run) observe(ctx context.Context) (*screen, error) { return r.perceiver().Observe(ctx) }

// settle observes until two consecutive observations have the same
// fingerprint, or SettleTimeout passes (then the last one is returned with
// settled false). Observations start at least SettleInterval apart, timed
// from the start of the previous one: a device slower to answer than the
// interval is observed again at once, never after a fixed sleep.
func (r *run) settle(ctx context.Context) (*screen, error) {
	tick := time.NewTicker(r.opts.SettleInterval)
	defer tick.Stop()
	prev, err := r.observe(ctx)
	if err != nil {
		return nil, err
	}
	deadline := time.NewTimer(r.opts.SettleTimeout)
	defer deadline.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			r.log.Debug("screen did not settle", "timeout", r.opts.SettleTimeout)
			return prev, r.perceive(ctx, prev)
		case <-tick.C:
		}
		cur, err := r.observe(ctx)
		if err != nil {
			return nil, err
		}
		if cur.FP == prev.FP {
			cur.Settled = true
			return cur, r.perceive(ctx, cur)
		}
		prev = cur
	}
}

// shoot adds a screenshot to s unless it has one.
func (r *run) shoot(ctx context.Context, s *screen) error { return r.perceiver().Shoot(ctx, s) }

// poll re-observes (settled) until check reports done or timeout passes.
// It returns the last screen and whether check succeeded.
func (r *run) poll(ctx context.Context, first *screen, timeout time.Duration, check func(*screen) bool) (*screen, bool, error) {
	cur := first
	if check(cur) {
		return cur, true, nil
	}
	if timeout <= 0 {
		return cur, false, nil
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(r.opts.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return cur, false, ctx.Err()
		case <-deadline.C:
			return cur, false, nil
		case <-tick.C:
		}
		next, err := r.observe(ctx)
		if err == nil {
			err = r.perceive(ctx, next)
		}
		if err != nil {
			return cur, false, err
		}
		cur = next
		if check(cur) {
			return cur, true, nil
		}
	}
}
