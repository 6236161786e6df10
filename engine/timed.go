package engine

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/apexagent/apex/device"
)

// timedDriver adds up the time spent in device calls, so a step's record
// can tell Apex's own overhead from the device's. The actions find the
// wrapped driver's optional extensions (clear text, double tap, drag)
// through Unwrap; the time of those calls is not counted.
type timedDriver struct {
	device.Driver
	spent atomic.Int64 // nanoseconds
}

func wrapTimed(d device.Driver) (device.Driver, *timedDriver) {
	t := &timedDriver{Driver: d}
	return t, t
}

func (t *timedDriver) since(start time.Time) { t.spent.Add(int64(time.Since(start))) }

// Spent is the total time spent in device calls so far.
func (t *timedDriver) Spent() time.Duration { return time.Duration(t.spent.Load()) }

// Unwrap is the driver as given (action.Wrapper).
func (t *timedDriver) Unwrap() device.Driver { return t.Driver }

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

// Timed runs a device call that bypasses the Driver interface (a shell
// command, a raw WebDriverAgent request), counting its time.
func Timed[T any](s *Session, f func() (T, error)) (T, error) {
	defer s.timed.since(time.Now())
	return f()
}
