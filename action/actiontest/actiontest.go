// Package actiontest provides a recording device.Driver and a map-backed
// action.Resolver for unit tests of layers above the driver (the action
// space, executors, scripts). Tests that prove device behaviour use a real
// peer (the simulated phone over adb) instead.
package actiontest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
)

// Call is one recorded driver call; only the fields the method takes are set.
type Call struct {
	Op       string // the Driver method: "Tap", "Swipe", "InputText", …
	Point    device.Point
	To       device.Point
	Duration time.Duration
	Text     string
	Key      device.Key
	App      string
	// Span and ToSpan are a pinch's distances between the fingers.
	Span, ToSpan int
}

func (c Call) String() string {
	switch c.Op {
	case "Tap", "DoubleTap":
		return fmt.Sprintf("%s(%d,%d)", c.Op, c.Point.X, c.Point.Y)
	case "LongPress":
		return fmt.Sprintf("LongPress(%d,%d %v)", c.Point.X, c.Point.Y, c.Duration)
	case "Swipe":
		return fmt.Sprintf("Swipe(%d,%d→%d,%d %v)", c.Point.X, c.Point.Y, c.To.X, c.To.Y, c.Duration)
	case "InputText":
		return fmt.Sprintf("InputText(%q)", c.Text)
	case "PressKey":
		return "PressKey(" + string(c.Key) + ")"
	case "LaunchApp", "TerminateApp":
		return c.Op + "(" + c.App + ")"
	case "Pinch":
		return fmt.Sprintf("Pinch(%d,%d %d→%d %v)", c.Point.X, c.Point.Y, c.Span, c.ToSpan, c.Duration)
	}
	return c.Op + "()"
}

// Driver records every input call. Info returns DeviceInfo (1080x2400
// Android by default); Fail makes a method return an error. Safe for
// concurrent use.
type Driver struct {
	DeviceInfo device.Info
	// Fail maps a method name to the error it returns.
	Fail map[string]error

	mu    sync.Mutex
	calls []Call
}

// NewDriver returns a recording driver for a 1080x2400 Android phone.
func NewDriver() *Driver {
	return &Driver{DeviceInfo: device.Info{ID: "test/fake", Platform: device.Android, Model: "fake", Width: 1080, Height: 2400, Density: 420}}
}

var _ device.Driver = (*Driver)(nil)

// Calls returns the input calls so far (Info, Source and Screenshot are not
// recorded).
func (d *Driver) Calls() []Call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Call(nil), d.calls...)
}

// Trace renders the calls one per line, for readable test failures.
func (d *Driver) Trace() string {
	var b strings.Builder
	for _, c := range d.Calls() {
		b.WriteString(c.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func (d *Driver) record(ctx context.Context, c Call) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.Fail[c.Op]; err != nil {
		return err
	}
	d.calls = append(d.calls, c)
	return nil
}

func (d *Driver) Info(ctx context.Context) (device.Info, error) {
	if err := ctx.Err(); err != nil {
		return device.Info{}, err
	}
	if err := d.Fail["Info"]; err != nil {
		return device.Info{}, err
	}
	return d.DeviceInfo, nil
}

func (d *Driver) Screenshot(ctx context.Context) ([]byte, error) {
	return nil, fmt.Errorf("actiontest: Screenshot: %w", device.ErrUnsupported)
}

func (d *Driver) Source(ctx context.Context) (device.Source, error) {
	return device.Source{}, fmt.Errorf("actiontest: Source: %w", device.ErrUnsupported)
}

func (d *Driver) Tap(ctx context.Context, p device.Point) error {
	return d.record(ctx, Call{Op: "Tap", Point: p})
}

func (d *Driver) LongPress(ctx context.Context, p device.Point, dur time.Duration) error {
	return d.record(ctx, Call{Op: "LongPress", Point: p, Duration: dur})
}

func (d *Driver) Swipe(ctx context.Context, from, to device.Point, dur time.Duration) error {
	return d.record(ctx, Call{Op: "Swipe", Point: from, To: to, Duration: dur})
}

func (d *Driver) InputText(ctx context.Context, text string) error {
	return d.record(ctx, Call{Op: "InputText", Text: text})
}

func (d *Driver) PressKey(ctx context.Context, k device.Key) error {
	return d.record(ctx, Call{Op: "PressKey", Key: k})
}

func (d *Driver) LaunchApp(ctx context.Context, app string) error {
	return d.record(ctx, Call{Op: "LaunchApp", App: app})
}

func (d *Driver) TerminateApp(ctx context.Context, app string) error {
	return d.record(ctx, Call{Op: "TerminateApp", App: app})
}

func (d *Driver) ForegroundApp(ctx context.Context) (string, error) { return "", ctx.Err() }
func (d *Driver) Lock(ctx context.Context) error                    { return d.record(ctx, Call{Op: "Lock"}) }
func (d *Driver) Unlock(ctx context.Context) error                  { return d.record(ctx, Call{Op: "Unlock"}) }
func (d *Driver) Close() error                                      { return nil }

// ClearingDriver is a Driver that also implements action.TextClearer.
type ClearingDriver struct{ *Driver }

var _ action.TextClearer = ClearingDriver{}

// ClearText records a "ClearText" call.
func (d ClearingDriver) ClearText(ctx context.Context) error {
	return d.record(ctx, Call{Op: "ClearText"})
}

// PinchingDriver is a Driver that also implements action.Pincher.
type PinchingDriver struct{ *Driver }

var _ action.Pincher = PinchingDriver{}

// Pinch records a "Pinch" call.
func (d PinchingDriver) Pinch(ctx context.Context, center device.Point, from, to int, dur time.Duration) error {
	return d.record(ctx, Call{Op: "Pinch", Point: center, Span: from, ToSpan: to, Duration: dur})
}

// Resolver finds a locator by the first of its Prompt, Text, ID or Desc that
// is a key of Targets, else by its String() form. Unknown locators are not
// found.
// It counts lookups. Safe for concurrent use.
type Resolver struct {
	Targets map[string]action.Target

	mu      sync.Mutex
	lookups int
}

var _ action.Resolver = (*Resolver)(nil)

// Resolve implements action.Resolver.
func (r *Resolver) Resolve(ctx context.Context, l action.Locator) (action.Target, error) {
	if err := ctx.Err(); err != nil {
		return action.Target{}, err
	}
	r.mu.Lock()
	r.lookups++
	r.mu.Unlock()
	for _, k := range []string{l.Prompt, l.Text, l.ID, l.Desc} {
		if t, ok := r.Targets[k]; ok && k != "" {
			return t, nil
		}
	}
	if t, ok := r.Targets[l.String()]; ok {
		return t, nil
	}
	return action.Target{}, fmt.Errorf("actiontest: %s: %w", l, action.ErrNotFound)
}

// Lookups says how many times Resolve was called.
func (r *Resolver) Lookups() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups
}
