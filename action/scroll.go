package action

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apexagent/apex/device"
)

// MaxScrolls is how many times Scroll with untilVisible swipes before
// giving up, unless its maxScrolls param says otherwise.
const MaxScrolls = 10

const (
	scrollDuration = 500 * time.Millisecond // slow enough not to fling far past the distance
	pullDuration   = 600 * time.Millisecond
)

type (
	ScrollParams struct {
		Direction    string   `json:"direction,omitempty" jsonschema:"which content to reveal: down shows what is below (the finger moves up)" enum:"down,up,left,right" default:"down"`
		Distance     Distance `json:"distance,omitzero" jsonschema:"how far: pixels, or screen (the default) or half"`
		Locate       *Locator `json:"locate,omitempty" jsonschema:"the scrollable element (list, page) to scroll in; the whole screen when left out"`
		UntilVisible *Locator `json:"untilVisible,omitempty" jsonschema:"keep scrolling until this element is on screen" locator:"deferred"`
		MaxScrolls   int      `json:"maxScrolls,omitempty" jsonschema:"with untilVisible: give up after this many swipes" default:"10" minimum:"1" maximum:"100"`
	}
	SwipeParams struct {
		From     *Locator      `json:"from,omitempty" jsonschema:"the element the finger starts on"`
		To       *Locator      `json:"to,omitempty" jsonschema:"the element the finger ends on"`
		Start    *device.Point `json:"start,omitempty" jsonschema:"the start point in pixels, instead of from"`
		End      *device.Point `json:"end,omitempty" jsonschema:"the end point in pixels, instead of to"`
		Duration int           `json:"duration,omitempty" jsonschema:"how long the swipe takes, in milliseconds" default:"300" minimum:"10" maximum:"10000"`
	}
	DragAndDropParams struct {
		From     Locator `json:"from" jsonschema:"the element to pick up"`
		To       Locator `json:"to" jsonschema:"where to drop it"`
		Duration int     `json:"duration,omitempty" jsonschema:"how long the drag takes, in milliseconds" default:"1500" minimum:"100" maximum:"10000"`
	}
)

// Validate demands exactly one way to say each end of the swipe.
func (p *SwipeParams) Validate() error {
	var errs []error
	if (p.From == nil) == (p.Start == nil) {
		errs = append(errs, Invalid("from", "give either from (an element) or start (a point), not both or neither"))
	}
	if (p.To == nil) == (p.End == nil) {
		errs = append(errs, Invalid("to", "give either to (an element) or end (a point), not both or neither"))
	}
	return errors.Join(errs...)
}

var (
	Scroll = WithEffectBy(Define("Scroll", "Scroll the screen or a list, by a distance or until an element is visible.",
		func(ctx context.Context, env *Env, p *ScrollParams) error {
			area, center, err := gestureArea(ctx, env, p.Locate)
			if err != nil {
				return err
			}
			if p.UntilVisible == nil {
				d := p.Distance
				if d.IsZero() {
					d = Screen
				}
				strokes, err := scrollStrokes(p.Direction, d, area, center)
				if err != nil {
					return err
				}
				return swipeAll(ctx, env, strokes, scrollDuration)
			}
			d := p.Distance
			if d.IsZero() {
				d = Half // overlapping swipes, so nothing slides past unseen
			}
			strokes, err := scrollStrokes(p.Direction, d, area, center)
			if err != nil {
				return err
			}
			return scrollUntilVisible(ctx, env, p, strokes)
		}), func(p *ScrollParams) Effect {
		if p.UntilVisible != nil {
			return Idempotent // it stops where the element shows
		}
		return Cumulative
	})

	Swipe = Define("Swipe", "Swipe from one element or point to another.",
		func(ctx context.Context, env *Env, p *SwipeParams) error {
			from, err := endpoint(ctx, env, "start", p.From, p.Start)
			if err != nil {
				return err
			}
			to, err := endpoint(ctx, env, "end", p.To, p.End)
			if err != nil {
				return err
			}
			return env.Driver.Swipe(ctx, from, to, time.Duration(p.Duration)*time.Millisecond)
		}).WithEffect(Cumulative)

	DragAndDrop = Define("DragAndDrop", "Drag an element and drop it onto another.",
		func(ctx context.Context, env *Env, p *DragAndDropParams) error {
			from, to, d := p.From.Target().Point, p.To.Target().Point, time.Duration(p.Duration)*time.Millisecond
			if dr, ok := extension[Dragger](env.Driver); ok {
				return dr.Drag(ctx, from, to, d)
			}
			return env.Driver.Swipe(ctx, from, to, d)
		}).WithEffect(Cumulative)
)

// scrollUntilVisible looks for the target, swipes, and looks again, at most
// p.MaxScrolls times. Only "not found" keeps it going: any other resolver
// error means the screen cannot be read, and scrolling blind would not help.
func scrollUntilVisible(ctx context.Context, env *Env, p *ScrollParams, strokes []stroke) error {
	want := p.UntilVisible
	if env.Resolver == nil {
		return fmt.Errorf("cannot look for untilVisible %s: no resolver (Env.Resolver is nil)", want)
	}
	for swipes := 0; ; swipes++ {
		t, err := env.Resolver.Resolve(ctx, *want)
		if err == nil {
			want.setTarget(t)
			env.log().DebugContext(ctx, "scroll: found", "locator", want.String(), "swipes", swipes)
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("look for %s: %w", want, err)
		}
		if swipes == p.MaxScrolls {
			return fmt.Errorf("%s still not visible after %d scrolls %s: check the direction, or that it exists: %w", want, p.MaxScrolls, p.Direction, err)
		}
		if err := swipeAll(ctx, env, strokes, scrollDuration); err != nil {
			return err
		}
	}
}

func swipeAll(ctx context.Context, env *Env, strokes []stroke, d time.Duration) error {
	for i, s := range strokes {
		if err := env.Driver.Swipe(ctx, s.from, s.to, d); err != nil {
			return fmt.Errorf("swipe %d of %d from (%d, %d) to (%d, %d): %w", i+1, len(strokes), s.from.X, s.from.Y, s.to.X, s.to.Y, err)
		}
	}
	return nil
}

// endpoint is a swipe end: a resolved locator's point, or a point given in
// pixels, which must lie on the screen.
func endpoint(ctx context.Context, env *Env, name string, l *Locator, p *device.Point) (device.Point, error) {
	if l != nil {
		return l.Target().Point, nil
	}
	if err := checkOnScreen(ctx, env, name, *p); err != nil {
		return device.Point{}, err
	}
	return *p, nil
}
