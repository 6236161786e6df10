// Package ios drives iPhones through WebDriverAgent's HTTP API, with no
// Appium in between. Callers work in pixels, as on Android: the driver
// converts to and from WebDriverAgent's points with the screen's scale,
// in input and in the UI source it returns.
package ios

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/wda"
)

// Options tune a Driver; nil means defaults.
type Options struct {
	// Timeout bounds each call (default 20 s; Source and LaunchApp get
	// twice that, since XCTest snapshots and app starts are slow on real
	// phones).
	Timeout time.Duration
	// Retries is how many times an unreachable WebDriverAgent is retried
	// before the call fails with device.ErrOffline (default 3).
	Retries int
	// Backoff is the first wait between retries, doubled each time
	// (default 200 ms).
	Backoff time.Duration
	// HTTP, when set, is the client's per-request timeout (default: the
	// call's Timeout).
	HTTP time.Duration
	Log  *slog.Logger
}

// Driver drives one iPhone through its WebDriverAgent.
type Driver struct {
	c    *wda.Client
	id   string // host:port of the WebDriverAgent
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	scale    float64 // pixels per point, once known
	model    string
	osVer    string
	closed   bool
	closeErr error
}

var _ device.Driver = (*Driver)(nil)

// Open returns a driver for the WebDriverAgent at url after checking that
// it answers and reading the screen's scale.
func Open(ctx context.Context, url string, opts *Options) (*Driver, error) {
	d, err := New(url, opts)
	if err != nil {
		return nil, err
	}
	if err := d.call(ctx, "open", true, d.opts.Timeout, func(ctx context.Context) error {
		st, err := d.c.Status(ctx)
		if err != nil {
			return err
		}
		d.mu.Lock()
		d.osVer = st.OS.Version
		d.model = st.Device
		d.mu.Unlock()
		_, err = d.pixelsPerPoint(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	// The name is a label only: builds without /wda/device/info keep
	// the status's "iphone".
	ictx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if di, err := d.c.DeviceInfo(ictx); err == nil && di.Name != "" {
		d.mu.Lock()
		d.model = di.Name
		d.mu.Unlock()
	}
	return d, nil
}

// New returns a driver without contacting WebDriverAgent.
func New(url string, opts *Options) (*Driver, error) {
	d := &Driver{}
	if opts != nil {
		d.opts = *opts
	}
	if d.opts.Timeout <= 0 {
		d.opts.Timeout = 20 * time.Second
	}
	if d.opts.Retries <= 0 {
		d.opts.Retries = 3
	}
	if d.opts.Backoff <= 0 {
		d.opts.Backoff = 200 * time.Millisecond
	}
	d.log = d.opts.Log
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	httpTimeout := d.opts.HTTP
	if httpTimeout <= 0 {
		httpTimeout = 2 * d.opts.Timeout
	}
	c, err := wda.New(url, &wda.Options{Timeout: httpTimeout, Log: d.log})
	if err != nil {
		return nil, fmt.Errorf("ios: %w", err)
	}
	u, _ := wda.ParseURL(url)
	d.c, d.id = c, u.Host
	return d, nil
}

// Client is the WebDriverAgent client, for what the Driver contract lacks
// (alerts, element lookup, the JSON source).
func (d *Driver) Client() *wda.Client { return d.c }

// ID is the WebDriverAgent's host:port.
func (d *Driver) ID() string { return d.id }

// Close ends the WebDriverAgent session once.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.closed = true
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := d.c.DeleteSession(ctx); err != nil && !errors.Is(err, wda.ErrUnreachable) {
			d.closeErr = fmt.Errorf("ios %s: close: %w", d.id, err)
		}
	}
	return d.closeErr
}

// call runs f under a deadline. An unreachable WebDriverAgent is retried
// with doubling backoff (input only when the request never left: a
// refused connection), then reported as device.ErrOffline; so is a
// session that vanished again right after being recreated. Cancellation
// of ctx is returned as is.
func (d *Driver) call(ctx context.Context, op string, idempotent bool, timeout time.Duration, f func(ctx context.Context) error) error {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return fmt.Errorf("ios %s: %s: driver is closed", d.id, op)
	}
	classify := func(err error) device.Verdict {
		switch {
		case errors.Is(err, wda.ErrInvalidSession), errors.Is(err, wda.ErrSessionNotCreated):
			return device.Lost
		case !errors.Is(err, wda.ErrUnreachable):
			return device.Final
		case !idempotent && !refused(err):
			return device.Lost
		}
		return device.Again
	}
	end, err := device.Retry(ctx, device.RetryPolicy{Timeout: timeout, Retries: d.opts.Retries, Backoff: d.opts.Backoff}, f, classify,
		func(attempt int, err error) {
			d.log.Debug("ios call retried", "wda", d.id, "op", op, "attempt", attempt, "err", err)
		})
	switch end {
	case 0:
		return nil
	case device.Gone:
		return d.offline(op, err)
	case device.Failed:
		return d.mapErr(op, err)
	}
	return fmt.Errorf("ios %s: %s: %w", d.id, op, err)
}

// refused reports whether the request failed before reaching the server.
func refused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (d *Driver) offline(op string, cause error) error {
	return fmt.Errorf("ios %s: %s: %w (%v); check that WebDriverAgent runs and answers at %s/status, then retry", d.id, op, device.ErrOffline, cause, d.c.URL())
}

// mapErr files WebDriverAgent's own errors under the device errors.
func (d *Driver) mapErr(op string, err error) error {
	switch {
	case errors.Is(err, wda.ErrNoSuchElement), errors.Is(err, wda.ErrAppNotInstalled), errors.Is(err, wda.ErrNoAlert):
		return fmt.Errorf("ios %s: %s: %w: %w", d.id, op, device.ErrNotFound, err)
	case errors.Is(err, wda.ErrUnknownCommand), errors.Is(err, wda.ErrUnknownMethod), errors.Is(err, wda.ErrUnsupported):
		return fmt.Errorf("ios %s: %s: %w: this WebDriverAgent lacks the command (update it): %w", d.id, op, device.ErrUnsupported, err)
	}
	return fmt.Errorf("ios %s: %s: %w", d.id, op, err)
}
