package patience

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	for _, tc := range []struct {
		name   string
		d      time.Duration
		passAt int // the call that returns nil; 0: never
		want   string
	}{
		{"at once", time.Minute, 1, ""},
		{"after a few tries", time.Minute, 3, ""},
		{"never", 100 * time.Millisecond, 0, "after "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := Until(tc.d, func() error {
				calls++
				if calls == tc.passAt {
					return nil
				}
				return errors.New("the light is still red")
			})
			if tc.want == "" {
				if err != nil || calls != tc.passAt {
					t.Fatalf("Until: %v after %d calls; want nil after %d", err, calls, tc.passAt)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !strings.HasSuffix(err.Error(), "the light is still red") {
				t.Fatalf("Until = %v; want how long it waited and the last word", err)
			}
			if calls < 2 {
				t.Errorf("Until asked %d times in %v; want it to ask again", calls, Of(tc.d))
			}
		})
	}
}

// TestContext: the context's deadline is Of(d) away, and it ends with the
// test that asked for it.
func TestContext(t *testing.T) {
	var ctx context.Context
	t.Run("inner", func(t *testing.T) {
		ctx = Context(t, time.Minute)
		dl, ok := ctx.Deadline()
		if left := time.Until(dl); !ok || left > Of(time.Minute) || left < Of(time.Minute)-10*time.Second {
			t.Errorf("deadline in %v (set: %v); want about %v", left, ok, Of(time.Minute))
		}
		if ctx.Err() != nil {
			t.Fatalf("the context ended before its test: %v", ctx.Err())
		}
	})
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("after its test the context's error is %v; want it canceled", ctx.Err())
	}
}
