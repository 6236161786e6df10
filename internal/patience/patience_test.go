package patience

import (
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
