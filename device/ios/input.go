package ios

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/wda"
)

// input runs one touch or key call. Input is not repeated once it may
// have reached WebDriverAgent.
func (d *Driver) input(ctx context.Context, op string, f func(ctx context.Context) error) error {
	return d.call(ctx, op, false, d.opts.Timeout, f)
}

// Tap taps a pixel position.
func (d *Driver) Tap(ctx context.Context, p device.Point) error {
	return d.input(ctx, "tap", func(ctx context.Context) error {
		pt, err := d.pt(ctx, p)
		if err != nil {
			return err
		}
		return d.c.Tap(ctx, pt)
	})
}

// LongPress holds a pixel position for dur (default 1 s).
func (d *Driver) LongPress(ctx context.Context, p device.Point, dur time.Duration) error {
	if dur <= 0 {
		dur = time.Second
	}
	return d.call(ctx, "long press", false, d.opts.Timeout+dur, func(ctx context.Context) error {
		pt, err := d.pt(ctx, p)
		if err != nil {
			return err
		}
		return d.c.LongPress(ctx, pt, dur)
	})
}

// Swipe moves a finger between pixel positions over dur (default 300 ms).
func (d *Driver) Swipe(ctx context.Context, from, to device.Point, dur time.Duration) error {
	if dur <= 0 {
		dur = 300 * time.Millisecond
	}
	return d.stroke(ctx, "swipe", from, to, dur, func(ctx context.Context, a, b wda.Point) error {
		return d.c.Swipe(ctx, a, b, dur)
	})
}

// stroke runs a one-finger gesture between two pixel positions, given in
// points to f, with the call's deadline stretched by the gesture's length.
func (d *Driver) stroke(ctx context.Context, op string, from, to device.Point, length time.Duration, f func(ctx context.Context, a, b wda.Point) error) error {
	return d.call(ctx, op, false, d.opts.Timeout+length, func(ctx context.Context) error {
		a, err := d.pt(ctx, from)
		if err != nil {
			return err
		}
		b, err := d.pt(ctx, to)
		if err != nil {
			return err
		}
		return f(ctx, a, b)
	})
}

// InputText types any Unicode text into the focused field: XCTest types
// characters, not key codes, so no keyboard app is needed.
func (d *Driver) InputText(ctx context.Context, text string) error {
	if text == "" {
		return nil
	}
	err := d.input(ctx, "input text", func(ctx context.Context) error { return d.c.Keys(ctx, text) })
	if errors.Is(err, wda.ErrElementState) || errors.Is(err, wda.ErrNotInteractable) {
		return fmt.Errorf("%w; tap a text field first so the keyboard shows", err)
	}
	return err
}

// typed keys are characters XCTest's typeText understands.
var typed = map[device.Key]string{
	device.KeyEnter: "\n", device.KeyDelete: "\b", device.KeyTab: "\t", device.KeySpace: " ",
}

// buttons are the hardware buttons /wda/pressButton knows.
var buttons = map[device.Key]string{
	device.KeyHome: wda.ButtonHome, device.KeyVolumeUp: wda.ButtonVolumeUp, device.KeyVolumeDown: wda.ButtonVolumeDown,
}

// PressKey presses a key. iPhones have home (or its gesture), volume and
// side buttons; return, delete, tab and space are typed. Back taps the
// navigation bar's back button or swipes from the left edge, as iOS has
// no back key; recents opens the
// app switcher. The rest (arrows, menu, search, escape) fail with
// device.ErrUnsupported.
func (d *Driver) PressKey(ctx context.Context, k device.Key) error {
	op := "press " + string(k)
	switch {
	case typed[k] != "":
		return d.input(ctx, op, func(ctx context.Context) error { return d.c.Keys(ctx, typed[k]) })
	case buttons[k] != "":
		return d.input(ctx, op, func(ctx context.Context) error {
			err := d.c.PressButton(ctx, buttons[k])
			if k == device.KeyHome && errors.Is(err, wda.ErrUnknownCommand) {
				return d.c.Homescreen(ctx)
			}
			return err
		})
	case k == device.KeyPower:
		// The side button: locks an unlocked phone, wakes a locked one.
		return d.input(ctx, op, func(ctx context.Context) error {
			locked, err := d.c.Locked(ctx)
			if err != nil {
				return err
			}
			if locked {
				return d.c.Unlock(ctx)
			}
			return d.c.Lock(ctx)
		})
	case k == device.KeyBack:
		return d.back(ctx)
	case k == device.KeyRecents || k == device.KeyAppSwitch:
		return d.input(ctx, op, d.appSwitcher)
	}
	return fmt.Errorf("ios %s: %s: %w: iPhones have no %s key", d.id, op, device.ErrUnsupported, k)
}

// back taps the back button of the navigation bar (the leftmost button in
// the bar's left third), or, on a screen without one, swipes right from
// the left edge as a finger goes back on iOS.
func (d *Driver) back(ctx context.Context) error {
	var found bool
	err := d.input(ctx, "press back", func(ctx context.Context) error {
		els, err := d.c.FindElements(ctx, wda.ByClassChain, "**/XCUIElementTypeNavigationBar/XCUIElementTypeButton")
		if err != nil {
			return err
		}
		size, err := d.c.WindowSize(ctx)
		if err != nil {
			return err
		}
		var best *wda.Rect
		var bestEl wda.Element
		for _, e := range els {
			r, err := e.Rect(ctx)
			if err != nil || r.Width <= 0 || r.X+r.Width/2 > size.Width/3 {
				continue
			}
			if best == nil || r.X < best.X {
				best, bestEl = &r, e
			}
		}
		if best == nil {
			return nil
		}
		found = true
		return bestEl.Click(ctx)
	})
	if err != nil || found {
		return err
	}
	// No button: the edge swipe that pops a navigation stack.
	return d.input(ctx, "press back", func(ctx context.Context) error {
		size, err := d.c.WindowSize(ctx)
		if err != nil {
			return err
		}
		y := size.Height / 2
		return d.c.Swipe(ctx, wda.Point{X: 1, Y: y}, wda.Point{X: size.Width * 2 / 3, Y: y}, 300*time.Millisecond)
	})
}

// appSwitcher opens the app switcher as a finger does on iPhones without
// a home button: up from the bottom edge to two thirds of the height,
// pausing there before letting go.
func (d *Driver) appSwitcher(ctx context.Context) error {
	size, err := d.c.WindowSize(ctx)
	if err != nil {
		return err
	}
	from := wda.Point{X: size.Width / 2, Y: size.Height - 1}
	to := wda.Point{X: size.Width / 2, Y: size.Height * 2 / 3}
	return d.c.Touch(ctx, wda.Move(from, 0), wda.Down(), wda.Move(to, 400*time.Millisecond), wda.Pause(800*time.Millisecond), wda.Up())
}

// DoubleTap taps a pixel position twice in quick succession (one W3C
// action sequence, so the two taps are as close as XCTest makes them).
func (d *Driver) DoubleTap(ctx context.Context, p device.Point) error {
	return d.input(ctx, "double tap", func(ctx context.Context) error {
		pt, err := d.pt(ctx, p)
		if err != nil {
			return err
		}
		tap := 50 * time.Millisecond
		return d.c.Touch(ctx, wda.Move(pt, 0), wda.Down(), wda.Pause(tap), wda.Up(), wda.Pause(80*time.Millisecond), wda.Down(), wda.Pause(tap), wda.Up())
	})
}

// liftHold is how long a drag holds its start before moving: long enough
// for iOS to lift a list row or an icon.
const liftHold = 600 * time.Millisecond

// Drag lifts what is under from (a press held liftHold) and drops it at to
// after moving for dur (default 500 ms).
func (d *Driver) Drag(ctx context.Context, from, to device.Point, dur time.Duration) error {
	if dur <= 0 {
		dur = 500 * time.Millisecond
	}
	return d.stroke(ctx, "drag", from, to, liftHold+dur, func(ctx context.Context, a, b wda.Point) error {
		return d.c.Drag(ctx, a, b, liftHold, dur)
	})
}

// Pinch puts two fingers on a horizontal line through center, from pixels
// apart, and moves them to `to` apart over dur (default 500 ms), as one
// W3C action with two touch pointers: apart zooms in, together zooms out.
func (d *Driver) Pinch(ctx context.Context, center device.Point, from, to int, dur time.Duration) error {
	if dur <= 0 {
		dur = 500 * time.Millisecond
	}
	return d.call(ctx, "pinch", false, d.opts.Timeout+dur, func(ctx context.Context) error {
		s, err := d.pixelsPerPoint(ctx)
		if err != nil {
			return err
		}
		c := wda.Point{X: float64(center.X) / s, Y: float64(center.Y) / s}
		return d.c.Pinch(ctx, c, float64(from)/s, float64(to)/s, dur)
	})
}
