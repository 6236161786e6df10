package device

import (
	"context"
	"fmt"
	"time"
)

// Verdict is what one failed attempt of a driver call means.
type Verdict int

const (
	// Final: the error is the answer (a bad argument, an element not
	// there); it is returned as is.
	Final Verdict = iota
	// Again: the call may be repeated safely (the request never reached
	// the device, or repeating it changes nothing).
	Again
	// Lost: the device is gone; repeating would not help.
	Lost
)

// Ending is why Retry stopped without success.
type Ending int

const (
	// Failed: an attempt's error was Final.
	Failed Ending = iota + 1
	// Gone: an attempt's error was Lost, the deadline passed, or the
	// retries ran out: the driver reports the device offline.
	Gone
	// Canceled: the caller's context ended; the error is its error.
	Canceled
)

// RetryPolicy bounds a driver call: every attempt shares one deadline,
// Timeout from the first; at most Retries attempts follow the first, with
// a pause of Backoff, doubled each time, between them.
type RetryPolicy struct {
	Timeout time.Duration
	Retries int
	Backoff time.Duration
}

// Retry runs f until it succeeds, an attempt's error is not worth
// repeating (classify), the retries run out, the deadline passes, or ctx
// ends. It returns how it ended and the error to report: for Gone, the
// cause with what ran out ("no answer within 10s: …"). onRetry, when set,
// is told of each attempt that will be repeated.
func Retry(ctx context.Context, p RetryPolicy, f func(ctx context.Context) error, classify func(error) Verdict, onRetry func(attempt int, err error)) (Ending, error) {
	if err := ctx.Err(); err != nil {
		return Canceled, err
	}
	cctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	wait := p.Backoff
	for attempt := 1; ; attempt++ {
		err := f(cctx)
		switch {
		case err == nil:
			return 0, nil
		case ctx.Err() != nil:
			return Canceled, ctx.Err()
		case cctx.Err() != nil:
			return Gone, fmt.Errorf("no answer within %v: %w", p.Timeout, err)
		}
		switch classify(err) {
		case Final:
			return Failed, err
		case Lost:
			return Gone, err
		}
		if attempt > p.Retries {
			return Gone, fmt.Errorf("still failing after %d attempts: %w", attempt, err)
		}
		if onRetry != nil {
			onRetry(attempt, err)
		}
		timer := time.NewTimer(wait)
		select {
		case <-cctx.Done():
			timer.Stop()
			if ctx.Err() != nil {
				return Canceled, ctx.Err()
			}
			return Gone, fmt.Errorf("no answer within %v: %w", p.Timeout, err)
		case <-timer.C:
		}
		wait *= 2
	}
}
