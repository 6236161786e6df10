package runner

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
)

// timedDriver adds up the time spent in device calls, so a step's record
// can tell Apex's own overhead from the device's.
type timedDriver struct {
	device.Driver
	spent atomic.Int64 // nanoseconds
}

func (t *timedDriver) since(start time.Time) { t.spent.Add(int64(time.Since(start))) }

// Spent is the total time spent in device calls so far.
func (t *timedDriver) Spent() time.Duration { return time.Duration(t.spent.Load()) }

func (t *timedDriver) Info(ctx context.Context) (device.Info, error) {
	defer t.since(time.Now())
	return t.Driver.Info(ctx)
}
func (t *timedDriver) Screenshot(ctx context.Context) ([]byte, error) {
	defer t.since(time.Now())
	return t.Driver.Screenshot(ctx)
}
func (t *timedDriver) Source(ctx context.Context) (device.Source, error) {
	defer t.since(time.Now())
	return t.Driver.Source(ctx)
}
func (t *timedDriver) Tap(ctx context.Context, p device.Point) error {
	defer t.since(time.Now())
	return t.Driver.Tap(ctx, p)
}
func (t *timedDriver) LongPress(ctx context.Context, p device.Point, d time.Duration) error {
	defer t.since(time.Now())
	return t.Driver.LongPress(ctx, p, d)
}
func (t *timedDriver) Swipe(ctx context.Context, from, to device.Point, d time.Duration) error {
	defer t.since(time.Now())
	return t.Driver.Swipe(ctx, from, to, d)
}
func (t *timedDriver) InputText(ctx context.Context, text string) error {
	defer t.since(time.Now())
	return t.Driver.InputText(ctx, text)
}
func (t *timedDriver) PressKey(ctx context.Context, k device.Key) error {
	defer t.since(time.Now())
	return t.Driver.PressKey(ctx, k)
}
func (t *timedDriver) LaunchApp(ctx context.Context, app string) error {
	defer t.since(time.Now())
	return t.Driver.LaunchApp(ctx, app)
}
func (t *timedDriver) TerminateApp(ctx context.Context, app string) error {
	defer t.since(time.Now())
	return t.Driver.TerminateApp(ctx, app)
}
func (t *timedDriver) ForegroundApp(ctx context.Context) (string, error) {
	defer t.since(time.Now())
	return t.Driver.ForegroundApp(ctx)
}

// wrapTimed wraps d so device time is counted, keeping the optional
// extensions (action.TextClearer, action.DoubleTapper) d has, and only those.
func wrapTimed(d device.Driver) (device.Driver, *timedDriver) {
	t := &timedDriver{Driver: d}
	_, clears := d.(action.TextClearer)
	_, doubles := d.(action.DoubleTapper)
	switch {
	case clears && doubles:
		return timedBoth{t}, t
	case clears:
		return timedClear{t}, t
	case doubles:
		return timedDouble{t}, t
	}
	return t, t
}

type timedClear struct{ *timedDriver }

func (t timedClear) ClearText(ctx context.Context) error {
	defer t.since(time.Now())
	return t.Driver.(action.TextClearer).ClearText(ctx)
}

type timedDouble struct{ *timedDriver }

func (t timedDouble) DoubleTap(ctx context.Context, p device.Point) error {
	defer t.since(time.Now())
	return t.Driver.(action.DoubleTapper).DoubleTap(ctx, p)
}

type timedBoth struct{ *timedDriver }

func (t timedBoth) ClearText(ctx context.Context) error { return timedClear(t).ClearText(ctx) }
func (t timedBoth) DoubleTap(ctx context.Context, p device.Point) error {
	return timedDouble(t).DoubleTap(ctx, p)
}

// WDARequester is implemented by drivers that can send a raw
// WebDriverAgent request; runWdaRequest steps need it.
type WDARequester interface {
	WDARequest(ctx context.Context, method, endpoint string, body []byte) ([]byte, error)
}

// timedCall runs a device call that bypasses the Driver interface, counting
// its time.
func timedCall[T any](t *timedDriver, f func() (T, error)) (T, error) {
	defer t.since(time.Now())
	return f()
}
