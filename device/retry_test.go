package device_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apexagent/apex/device"
)

var (
	errFlaky = errors.New("connection refused")
	errBad   = errors.New("no such element")
	errLost  = errors.New("session gone")
)

func classify(err error) device.Verdict {
	switch {
	case errors.Is(err, errFlaky):
		return device.Again
	case errors.Is(err, errLost):
		return device.Lost
	}
	return device.Final
}

func TestRetry(t *testing.T) {
	policy := device.RetryPolicy{Timeout: 10 * time.Second, Retries: 3, Backoff: 100 * time.Millisecond}
	tests := []struct {
		name     string
		errs     []error // what each attempt returns; past the end, errFlaky
		hang     bool    // attempts block until their context ends
		policy   device.RetryPolicy
		want     device.Ending
		attempts int
		retried  int // attempts onRetry heard of
		elapsed  time.Duration
		msg      string
	}{
		{name: "first try", errs: []error{nil}, want: 0, attempts: 1},
		{name: "flaky then fine", errs: []error{errFlaky, errFlaky, nil}, want: 0, attempts: 3, retried: 2, elapsed: 300 * time.Millisecond},
		{name: "final error at once", errs: []error{errBad}, want: device.Failed, attempts: 1, msg: "no such element"},
		{name: "lost device at once", errs: []error{errFlaky, errLost}, want: device.Gone, attempts: 2, retried: 1, elapsed: 100 * time.Millisecond, msg: "session gone"},
		{name: "retries run out", want: device.Gone, attempts: 4, retried: 3, elapsed: 700 * time.Millisecond, msg: "still failing after 4 attempts"},
		{name: "deadline while pausing", policy: device.RetryPolicy{Timeout: 250 * time.Millisecond, Retries: 9, Backoff: 100 * time.Millisecond},
			want: device.Gone, attempts: 2, retried: 2, elapsed: 250 * time.Millisecond, msg: "no answer within 250ms"},
		{name: "a hanging attempt", hang: true, want: device.Gone, attempts: 1, elapsed: 10 * time.Second, msg: "no answer within 10s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := policy
				if tt.policy != (device.RetryPolicy{}) {
					p = tt.policy
				}
				n, retried := 0, 0
				start := time.Now()
				end, err := device.Retry(context.Background(), p, func(ctx context.Context) error {
					n++
					if tt.hang {
						<-ctx.Done()
						return ctx.Err()
					}
					if n <= len(tt.errs) {
						return tt.errs[n-1]
					}
					return errFlaky
				}, classify, func(int, error) { retried++ })
				if end != tt.want || n != tt.attempts || retried != tt.retried {
					t.Errorf("ending %v after %d attempts (%d retried), want %v after %d (%d retried)", end, n, retried, tt.want, tt.attempts, tt.retried)
				}
				if got := time.Since(start); got != tt.elapsed {
					t.Errorf("took %v, want %v", got, tt.elapsed)
				}
				if tt.msg != "" && (err == nil || !strings.Contains(err.Error(), tt.msg)) {
					t.Errorf("error %v, want it to say %q", err, tt.msg)
				}
				if tt.want == 0 && err != nil {
					t.Errorf("error %v on success", err)
				}
			})
		})
	}
}

func TestRetryCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(150*time.Millisecond, cancel)
		end, err := device.Retry(ctx, device.RetryPolicy{Timeout: time.Minute, Retries: 9, Backoff: 100 * time.Millisecond},
			func(context.Context) error { return errFlaky }, classify, nil)
		if end != device.Canceled || !errors.Is(err, context.Canceled) {
			t.Errorf("Retry with a context cancelled while pausing: %v %v, want Canceled with the context's error", end, err)
		}
		if end, _ := device.Retry(ctx, device.RetryPolicy{Timeout: time.Minute}, func(context.Context) error {
			t.Error("an attempt ran after the context ended")
			return nil
		}, classify, nil); end != device.Canceled {
			t.Errorf("Retry with an ended context: %v, want Canceled", end)
		}
	})
}
