package ios

import (
	"context"
	"fmt"
	"math"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/wda"
)

// pixelsPerPoint returns the screen scale, asking WebDriverAgent once.
func (d *Driver) pixelsPerPoint(ctx context.Context) (float64, error) {
	d.mu.Lock()
	s := d.scale
	d.mu.Unlock()
	if s > 0 {
		return s, nil
	}
	scr, err := d.c.Screen(ctx)
	if err != nil {
		return 0, err
	}
	d.mu.Lock()
	d.scale = scr.Scale
	d.mu.Unlock()
	return scr.Scale, nil
}

// Scale is the screen's pixels per point (0 before Open read it).
func (d *Driver) Scale() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.scale
}

// Info reports the screen in pixels. The window size is asked each time,
// since it turns with the phone.
func (d *Driver) Info(ctx context.Context) (device.Info, error) {
	var info device.Info
	err := d.call(ctx, "info", true, d.opts.Timeout, func(ctx context.Context) error {
		s, err := d.pixelsPerPoint(ctx)
		if err != nil {
			return err
		}
		size, err := d.c.WindowSize(ctx)
		if err != nil {
			return err
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		info = device.Info{
			ID: d.id, Platform: device.IOS, Model: d.model, OSVersion: d.osVer,
			Width: int(math.Round(size.Width * s)), Height: int(math.Round(size.Height * s)),
			// iPhones are 163 dpi per point of scale (326 at 2x, ~460 at 3x).
			Density: int(math.Round(163 * s)),
		}
		return nil
	})
	return info, err
}

// Screenshot returns the screen as PNG bytes, in pixels.
func (d *Driver) Screenshot(ctx context.Context) ([]byte, error) {
	var png []byte
	err := d.call(ctx, "screenshot", true, d.opts.Timeout, func(ctx context.Context) (err error) {
		png, err = d.c.Screenshot(ctx)
		return err
	})
	return png, err
}

// Source returns the XCUITest XML of the screen with its geometry in
// pixels (x, y, width and height multiplied by the scale), so that an
// element's centre can be passed to Tap as on Android.
func (d *Driver) Source(ctx context.Context) (device.Source, error) {
	var src []byte
	err := d.call(ctx, "source", true, 2*d.opts.Timeout, func(ctx context.Context) error {
		s, err := d.pixelsPerPoint(ctx)
		if err != nil {
			return err
		}
		raw, err := d.c.Source(ctx)
		if err != nil {
			return err
		}
		src, err = ScaleSource(d.markFocus(ctx, raw), s)
		if err != nil {
			return fmt.Errorf("%w: %w", wda.ErrBadResponse, err)
		}
		return nil
	})
	return device.Source{Format: device.FormatXCUITest, Data: src}, err
}

// pt converts a pixel position to points.
func (d *Driver) pt(ctx context.Context, p device.Point) (wda.Point, error) {
	s, err := d.pixelsPerPoint(ctx)
	if err != nil {
		return wda.Point{}, err
	}
	return wda.Point{X: float64(p.X) / s, Y: float64(p.Y) / s}, nil
}
