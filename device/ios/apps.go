package ios

import (
	"context"
	"strings"

	"github.com/apexagent/apex/wda"
)

// LaunchApp starts an app by bundle id and brings it to the foreground; an
// app that is not installed fails with device.ErrNotFound. A URL
// (https://…, or an app's own scheme) opens in the app that handles it,
// through WebDriverAgent's /url as Safari's address bar would.
func (d *Driver) LaunchApp(ctx context.Context, app string) error {
	if strings.Contains(app, "://") {
		return d.call(ctx, "open "+app, true, 2*d.opts.Timeout, func(ctx context.Context) error {
			return d.c.OpenURL(ctx, app)
		})
	}
	return d.call(ctx, "launch "+app, true, 2*d.opts.Timeout, func(ctx context.Context) error {
		return d.c.LaunchApp(ctx, app, nil, nil)
	})
}

// TerminateApp stops an app; one that is not running is left as is.
func (d *Driver) TerminateApp(ctx context.Context, app string) error {
	return d.call(ctx, "terminate "+app, true, d.opts.Timeout, func(ctx context.Context) error {
		_, err := d.c.TerminateApp(ctx, app)
		return err
	})
}

// ForegroundApp returns the bundle id on screen (com.apple.springboard on
// the home screen).
func (d *Driver) ForegroundApp(ctx context.Context) (string, error) {
	var a wda.AppInfo
	err := d.call(ctx, "foreground app", true, d.opts.Timeout, func(ctx context.Context) (err error) {
		a, err = d.c.ActiveApp(ctx)
		return err
	})
	return a.BundleID, err
}

// Lock locks the screen.
func (d *Driver) Lock(ctx context.Context) error {
	return d.call(ctx, "lock", true, d.opts.Timeout, d.c.Lock)
}

// Unlock wakes and unlocks the screen (phones without a passcode).
func (d *Driver) Unlock(ctx context.Context) error {
	return d.call(ctx, "unlock", true, d.opts.Timeout, d.c.Unlock)
}
