package perceive

import (
	"context"
	"time"
)

// Timing says how often the screen is observed while waiting on it. The
// zero value means the defaults.
type Timing struct {
	// SettleInterval is the gap between observations while the screen
	// settles (default 5ms); SettleTimeout bounds settling (3s).
	SettleInterval, SettleTimeout time.Duration
	// PollInterval is the gap between observations while waiting for a
	// target or a condition (default 100ms).
	PollInterval time.Duration
}

// WithDefaults fills the zero fields.
func (t Timing) WithDefaults() Timing {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.SettleInterval, 5*time.Millisecond)
	def(&t.SettleTimeout, 3*time.Second)
	def(&t.PollInterval, 100*time.Millisecond)
	return t
}

// Settle observes until two consecutive observations have the same
// fingerprint, or SettleTimeout passes (then the last one is used, with
// Settled false). Observations start at least SettleInterval apart, timed
// from the start of the previous one: a device slower to answer than the
// interval is observed again at once, never after a fixed sleep. Only the
// screen it settles on is perceived (OCR fused when its tree cannot be
// trusted).
func (p *Perceiver) Settle(ctx context.Context) (*Screen, error) {
	t := p.opts.Timing.WithDefaults()
	tick := time.NewTicker(t.SettleInterval)
	defer tick.Stop()
	deadline := time.NewTimer(t.SettleTimeout)
	defer deadline.Stop()
	prev, err := p.Observe(ctx)
	if err != nil {
		return nil, err
	}
	for {
		waited := time.Now()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			p.log.Debug("screen did not settle", "timeout", t.SettleTimeout)
			return prev, p.perceived(ctx, prev)
		case <-tick.C:
		}
		p.waited.Add(int64(time.Since(waited)))
		cur, err := p.Observe(ctx)
		if err != nil {
			return nil, err
		}
		if cur.FP == prev.FP {
			cur.Settled = true
			return cur, p.perceived(ctx, cur)
		}
		prev = cur
	}
}

// Waited is the time Settle and Poll have spent waiting between
// observations, on purpose: to see the screen stay the same, or give a
// target time to appear.
func (p *Perceiver) Waited() time.Duration { return time.Duration(p.waited.Load()) }

// Look observes once and perceives what it saw.
func (p *Perceiver) Look(ctx context.Context) (*Screen, error) {
	s, err := p.Observe(ctx)
	if err != nil {
		return nil, err
	}
	return s, p.perceived(ctx, s)
}

// perceived fuses OCR into s when needed; a failed screenshot leaves the
// tree alone (it is still a Scene), only the end of ctx is an error.
func (p *Perceiver) perceived(ctx context.Context, s *Screen) error {
	if err := p.Perceive(ctx, s); err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// Poll re-observes until done reports true for a screen or timeout passes,
// starting with first (observed fresh when nil). It returns the last
// screen and whether done held. A timeout of 0 looks once.
func (p *Perceiver) Poll(ctx context.Context, first *Screen, timeout time.Duration, done func(*Screen) bool) (*Screen, bool, error) {
	cur := first
	if cur == nil {
		var err error
		if cur, err = p.Look(ctx); err != nil {
			return nil, false, err
		}
	}
	if done(cur) {
		return cur, true, nil
	}
	if timeout <= 0 {
		return cur, false, nil
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(p.opts.Timing.WithDefaults().PollInterval)
	defer tick.Stop()
	for {
		waited := time.Now()
		select {
		case <-ctx.Done():
			return cur, false, ctx.Err()
		case <-deadline.C:
			return cur, false, nil
		case <-tick.C:
		}
		p.waited.Add(int64(time.Since(waited)))
		next, err := p.Look(ctx)
		if err != nil {
			return cur, false, err
		}
		cur = next
		if done(cur) {
			return cur, true, nil
		}
	}
}
