package action

import (
	"context"
	"fmt"
	"time"

	"github.com/apexagent/apex/device"
)

// Pincher is the optional Driver extension for a two-finger pinch: two
// fingers on a horizontal line through center, from apart (pixels between
// them) at the start to to apart at the end, over d. Fingers moving apart
// zoom in; together, zoom out. Drivers without one cannot pinch: a
// one-finger path would scroll or drag instead.
type Pincher interface {
	Pinch(ctx context.Context, center device.Point, from, to int, d time.Duration) error
}

// PinchParams are the params of Pinch. They are Midscene's (aiPinch), with
// its geometry: the fingers start a quarter of the screen's shorter side
// apart and that span grows (out) or shrinks (in) by distance.
type PinchParams struct {
	Locate    *Locator `json:"locate,omitempty" jsonschema:"the element to pinch on (a map, a photo); the middle of the screen when left out"`
	Direction string   `json:"direction" jsonschema:"out spreads the fingers apart (zoom in), in pinches them together (zoom out)" enum:"in,out"`
	Distance  int      `json:"distance,omitempty" jsonschema:"how much the span between the fingers changes, in pixels; a quarter of the screen's shorter side by default" maximum:"10000"`
	Duration  int      `json:"duration,omitempty" jsonschema:"how long the gesture takes, in milliseconds" default:"500" minimum:"50" maximum:"10000"`
}

// Validate refuses a negative distance (0 is the default).
func (p *PinchParams) Validate() error {
	if p.Distance < 0 {
		return Invalid("distance", "must be at least 1 pixel; got %d", p.Distance)
	}
	return nil
}

// minPinchSpan is the closest two fingertips get: closer, a panel reads
// them as one touch.
const minPinchSpan = 10

// Pinch zooms with two fingers.
var Pinch = Define("Pinch", "Zoom with two fingers: out spreads them (zoom in), in pinches them (zoom out).",
	func(ctx context.Context, env *Env, p *PinchParams) error {
		pc, ok := extension[Pincher](env.Driver)
		if !ok {
			return fmt.Errorf("this device's driver has no two-finger gesture: %w", device.ErrUnsupported)
		}
		info, err := env.Driver.Info(ctx)
		if err != nil {
			return fmt.Errorf("read screen size: %w", err)
		}
		if info.Width <= 0 || info.Height <= 0 {
			return fmt.Errorf("device reports a %dx%d screen; cannot aim a pinch", info.Width, info.Height)
		}
		center := device.Point{X: info.Width / 2, Y: info.Height / 2}
		if p.Locate != nil {
			center = p.Locate.Target().Point
		}
		from, to, err := pinchSpans(p, info.Width, info.Height, center)
		if err != nil {
			return err
		}
		return pc.Pinch(ctx, center, from, to, time.Duration(p.Duration)*time.Millisecond)
	}).WithEffect(Cumulative) // each pinch zooms further

// pinchSpans is where the fingers start and end apart: Midscene's
// geometry, kept on the screen (both fingers lie on the line through
// center, so the span is at most twice the distance to the nearer edge).
func pinchSpans(p *PinchParams, w, h int, center device.Point) (from, to int, err error) {
	base := min(w, h) / 4
	d := p.Distance
	if d == 0 {
		d = base
	}
	from, to = base, max(minPinchSpan, base-d)
	if p.Direction == "out" {
		to = base + d
	}
	room := 2 * min(center.X, w-1-center.X)
	if room < 2*minPinchSpan {
		return 0, 0, fmt.Errorf("the pinch centre (%d, %d) is at the edge of the %dx%d screen: no room for two fingers", center.X, center.Y, w, h)
	}
	from, to = min(from, room), min(to, room)
	if from == to {
		return 0, 0, fmt.Errorf("no room to pinch %s at (%d, %d) on the %dx%d screen: the fingers would not move", p.Direction, center.X, center.Y, w, h)
	}
	return from, to, nil
}
