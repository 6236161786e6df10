// Package android drives Android devices over the ADB wire protocol: through
// an adb server or straight to an adbd, never by spawning adb per call.
package android

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/device"
)

// ScreenshotMode picks how screenshots travel.
type ScreenshotMode string

const (
	// ScreenshotPNG asks the device for a PNG (`screencap -p`).
	ScreenshotPNG ScreenshotMode = "png"
	// ScreenshotRaw pulls the raw framebuffer (`screencap`) and encodes the
	// PNG on the host.
	ScreenshotRaw ScreenshotMode = "raw"
)

// Options tune a Driver; nil means defaults.
type Options struct {
	// Timeout bounds each call (default 15 s; Source and LaunchApp get twice
	// that, since uiautomator and app start are slow on real phones).
	Timeout time.Duration
	// Retries is how many times a dropped transport is retried before the
	// call fails with device.ErrOffline (default 3).
	Retries int
	// Backoff is the first wait between retries, doubled each time
	// (default 100 ms).
	Backoff    time.Duration
	Screenshot ScreenshotMode // default ScreenshotPNG (see bench/README.md)
	Log        *slog.Logger
	// Close is called by Driver.Close, e.g. to drop a direct connection.
	Close func() error
	// Unchecked makes OpenWith skip its check that the device answers a
	// shell command (for one-shot commands, whose first call finds out).
	Unchecked bool
}

// Driver drives one Android device through an adb.Transport.
type Driver struct {
	t      adb.Transport
	serial string
	opts   Options
	log    *slog.Logger

	mu       sync.Mutex
	adbIME   *bool // ADBKeyBoard installed, once known
	closed   bool
	closeErr error
}

var _ device.Driver = (*Driver)(nil)

// Open returns a driver for the device behind t after checking that it
// answers a shell command within ctx.
func Open(ctx context.Context, t adb.Transport, serial string) (*Driver, error) {
	return OpenWith(ctx, t, serial, nil)
}

// OpenWith is Open with options (Options.Unchecked skips the check).
func OpenWith(ctx context.Context, t adb.Transport, serial string, opts *Options) (*Driver, error) {
	d := New(t, serial, opts)
	if d.opts.Unchecked {
		return d, nil
	}
	if err := d.call(ctx, "open", true, d.opts.Timeout, func(ctx context.Context) error {
		_, err := d.shell(ctx, "true")
		return err
	}); err != nil {
		return nil, err
	}
	return d, nil
}

// New returns a driver without contacting the device.
func New(t adb.Transport, serial string, opts *Options) *Driver {
	d := &Driver{t: t, serial: serial}
	if opts != nil {
		d.opts = *opts
	}
	if d.opts.Timeout <= 0 {
		d.opts.Timeout = 15 * time.Second
	}
	if d.opts.Retries <= 0 {
		d.opts.Retries = 3
	}
	if d.opts.Backoff <= 0 {
		d.opts.Backoff = 100 * time.Millisecond
	}
	if d.opts.Screenshot == "" {
		d.opts.Screenshot = ScreenshotPNG
	}
	d.log = d.opts.Log
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.serial == "" {
		d.serial = t.Serial()
	}
	return d
}

// Serial names the device.
func (d *Driver) Serial() string { return d.serial }

// Transport is the ADB transport the driver uses, for callers that need
// ADB services beyond the Driver contract and its extensions (Shell,
// Install); it ties them to the wire, so layers above device use the
// extensions instead.
func (d *Driver) Transport() adb.Transport { return d.t }

// Close releases the transport (for direct connections) once.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.closed = true
		if d.opts.Close != nil {
			d.closeErr = d.opts.Close()
		}
	}
	return d.closeErr
}

// errRetry marks a failure after which the call may be repeated safely:
// the transport dropped and the result was incomplete, or the command
// never reached the device.
var errRetry = errors.New("retryable")

// call runs f under a deadline, retrying dropped transports with doubling
// backoff. A transport that stays gone, or a device that does not answer
// before the deadline, is reported as device.ErrOffline with the serial.
// Cancellation of the caller's ctx is returned as is. idempotent says
// whether f may be repeated after the command reached the device.
func (d *Driver) call(ctx context.Context, op string, idempotent bool, timeout time.Duration, f func(ctx context.Context) error) error {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return fmt.Errorf("android %s: %s: driver is closed", d.serial, op)
	}
	classify := func(err error) device.Verdict {
		var openErr *adb.OpenError
		gone := errors.Is(err, adb.ErrGone) || errors.Is(err, adb.ErrNoServer)
		switch {
		case errors.Is(err, errRetry), gone && (idempotent || errors.As(err, &openErr)):
			return device.Again
		case gone:
			return device.Lost
		}
		return device.Final
	}
	end, err := device.Retry(ctx, device.RetryPolicy{Timeout: timeout, Retries: d.opts.Retries, Backoff: d.opts.Backoff}, f, classify,
		func(attempt int, err error) {
			d.log.Debug("android call retried", "serial", d.serial, "op", op, "attempt", attempt, "err", err)
		})
	switch end {
	case 0:
		return nil
	case device.Gone:
		return d.offline(op, err)
	}
	return fmt.Errorf("android %s: %s: %w", d.serial, op, err)
}

func (d *Driver) offline(op string, cause error) error {
	return fmt.Errorf("android %s: %s: %w (%v); check that the device is connected (adb devices) and retry", d.serial, op, device.ErrOffline, cause)
}

// shell runs a command and returns stdout; a non-zero status is an error
// carrying stderr.
func (d *Driver) shell(ctx context.Context, cmd string) (string, error) {
	out, err := adb.Shell(ctx, d.t, cmd)
	return string(out), err
}

// quote single-quotes s for the device's POSIX shell.
func quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/:=,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
