package action_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/action/actiontest"
	"github.com/apexagent/apex/device"
	"github.com/google/go-cmp/cmp"
)

// Pinch follows Midscene's geometry (a quarter of the shorter side apart,
// changed by distance), kept on the screen, on a driver with two fingers.
func TestPinch(t *testing.T) {
	const ms = 500 * time.Millisecond
	pinch := func(x, y, from, to int, d time.Duration) actiontest.Call {
		return actiontest.Call{Op: "Pinch", Point: pt(x, y), Span: from, ToSpan: to, Duration: d}
	}
	tests := []struct {
		name, params string
		want         actiontest.Call
	}{
		{"out at the screen's middle", `{"direction":"out"}`, pinch(540, 1200, 270, 540, ms)},
		{"in at the screen's middle", `{"direction":"in"}`, pinch(540, 1200, 270, 10, ms)},
		{"out by a distance, slowly", `{"direction":"out","distance":100,"duration":900}`, pinch(540, 1200, 270, 370, 900*time.Millisecond)},
		{"in by less than the span", `{"direction":"in","distance":200}`, pinch(540, 1200, 270, 70, ms)},
		{"on an element", `{"locate":"OK","direction":"out"}`, pinch(540, 1800, 270, 540, ms)},
		{"near the edge: the span fits the screen", `{"locate":"card","direction":"out","distance":1000}`, pinch(300, 700, 270, 600, ms)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := actiontest.NewDriver()
			env := &action.Env{Driver: actiontest.PinchingDriver{Driver: d}, Resolver: &actiontest.Resolver{Targets: screen}}
			if err := action.Pinch.Run(context.Background(), env, []byte(tt.params)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]actiontest.Call{tt.want}, d.Calls()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPinchRefusals(t *testing.T) {
	tests := []struct {
		name   string
		driver device.Driver
		params string
		want   string
	}{
		{"a driver with one finger", actiontest.NewDriver(), `{"direction":"out"}`, "no two-finger gesture"},
		{"no direction", actiontest.PinchingDriver{Driver: actiontest.NewDriver()}, `{}`, "direction"},
		{"at the screen's edge", actiontest.PinchingDriver{Driver: actiontest.NewDriver()}, `{"locate":{"x":5,"y":100},"direction":"in"}`, "no room for two fingers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := &action.Env{Driver: tt.driver, Resolver: &actiontest.Resolver{Targets: screen}}
			err := action.Pinch.Run(context.Background(), env, []byte(tt.params))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to say %q", err, tt.want)
			}
			if tt.name == "a driver with one finger" && !errors.Is(err, device.ErrUnsupported) {
				t.Errorf("err = %v, want device.ErrUnsupported", err)
			}
		})
	}
}
