package android_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/device/android"
)

// refusing is a transport whose device refuses everything; it counts what
// was asked of it.
type refusing struct{ asked int }

func (r *refusing) Open(context.Context, string) (adb.Stream, error) {
	r.asked++
	return nil, errors.New("refused")
}

func (r *refusing) Features(context.Context) ([]string, error) {
	r.asked++
	return nil, errors.New("refused")
}

func (r *refusing) Serial() string { return "refusing" }

// TestOpenUnchecked: OpenWith checks that the device answers a shell
// command unless Options.Unchecked, which asks the device nothing.
func TestOpenUnchecked(t *testing.T) {
	for _, tc := range []struct {
		unchecked bool
		wantErr   bool
	}{{false, true}, {true, false}} {
		r := &refusing{}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		d, err := android.OpenWith(ctx, r, "", &android.Options{Unchecked: tc.unchecked, Retries: 1, Backoff: time.Millisecond})
		cancel()
		if (err != nil) != tc.wantErr || (r.asked == 0) != tc.unchecked {
			t.Errorf("Unchecked=%v: err %v, %d requests to the device; want an error %v", tc.unchecked, err, r.asked, tc.wantErr)
		}
		if d != nil {
			d.Close()
		}
	}
}
