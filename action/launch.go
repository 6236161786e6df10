package action

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apexagent/apex/device"
)

// launch starts what app names: a package or bundle id, a component
// (pkg/.Activity) or a URL, which the driver starts, or an app's label as
// the home screen shows it ("Settings"), which is tapped there.
func launch(ctx context.Context, env *Env, app string) error {
	if !isAppLabel(app) {
		return env.Driver.LaunchApp(ctx, app)
	}
	if env.Resolver == nil {
		return fmt.Errorf("launch %q: an app's label is found on the home screen, and nothing here reads the screen: give its package name", app)
	}
	if err := env.Driver.PressKey(ctx, device.KeyHome); err != nil {
		return fmt.Errorf("launch %q: go home: %w", app, err)
	}
	t, err := env.Resolver.Resolve(ctx, Locator{Text: app})
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("launch %q: no app of that name on the home screen; give its package name (adb shell pm list packages): %w", app, err)
	}
	if err != nil {
		return fmt.Errorf("launch %q: %w", app, err)
	}
	return env.Driver.Tap(ctx, t.Point)
}

// isAppLabel reports whether app is an app's name as people read it
// rather than an id: no scheme, no component, and spaces or no dots.
func isAppLabel(app string) bool {
	if strings.Contains(app, "://") || strings.Contains(app, "/") {
		return false
	}
	return strings.ContainsAny(app, " \t") || !strings.Contains(app, ".")
}
