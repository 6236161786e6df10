package action

import (
	"context"
	"fmt"

	"github.com/apexagent/apex/device"
)

// PullGestureParams are the params of PullGesture.
type PullGestureParams struct {
	Direction string   `json:"direction" jsonschema:"down opens the notification shade (from the top edge) or refreshes a list (from locate); up pulls a list to load more" enum:"down,up"`
	Locate    *Locator `json:"locate,omitempty" jsonschema:"where the pull starts, e.g. the list to refresh; the screen edge when left out"`
	Distance  Distance `json:"distance,omitzero" jsonschema:"how far to pull: pixels, or screen or half (the default)"`
}

// pressKey declares an action whose whole job is one key press.
func pressKey(name, description string, k device.Key, e Effect) *Action {
	return Define(name, description, func(ctx context.Context, env *Env, _ *struct{}) error {
		return env.Driver.PressKey(ctx, k)
	}).WithEffect(e)
}

// The platform actions. Their aliases are Midscene's names, so scripts
// written for it find them.
var (
	Back       = pressKey("Back", "Go back one screen, or close a dialog or the keyboard (Android's back button; on iOS the navigation bar's back button or a swipe from the left edge).", device.KeyBack, Cumulative).WithAliases("AndroidBackButton")
	Home       = pressKey("Home", "Go to the home screen.", device.KeyHome, Idempotent).WithAliases("AndroidHomeButton", "IOSHomeButton")
	RecentApps = pressKey("RecentApps", "Open the Android recent apps (overview) screen.", device.KeyRecents, Cumulative).WithAliases("AndroidRecentAppsButton")
	// AppSwitcher is iOS's RecentApps.
	AppSwitcher = pressKey("AppSwitcher", "Open the iOS app switcher.", device.KeyAppSwitch, Cumulative).WithAliases("IOSAppSwitcher")

	PullGesture = Define("PullGesture", "Pull down from the top edge (notification shade) or on a list (pull to refresh), or pull a list up.",
		func(ctx context.Context, env *Env, p *PullGestureParams) error {
			info, err := env.Driver.Info(ctx)
			if err != nil {
				return fmt.Errorf("read screen size: %w", err)
			}
			d := p.Distance
			if d.IsZero() {
				d = Half
			}
			length := d.Pixels
			if length == 0 {
				length = int(float64(info.Height) * d.Screens)
			}
			from := device.Point{X: info.Width / 2}
			switch {
			case p.Locate != nil:
				from = p.Locate.Target().Point
			case p.Direction == "down":
				from.Y = 1 // the very top edge, where the shade is pulled from
			default:
				// Above the bottom edge, whose swipe-up is the home gesture.
				from.Y = info.Height * 4 / 5
			}
			to := from
			if p.Direction == "down" {
				to.Y = min(from.Y+length, info.Height-1)
			} else {
				to.Y = max(from.Y-length, 0)
			}
			if to == from {
				return fmt.Errorf("nowhere to pull %s from (%d, %d) on a %dx%d screen", p.Direction, from.X, from.Y, info.Width, info.Height)
			}
			return env.Driver.Swipe(ctx, from, to, pullDuration)
		}).WithAliases("AndroidPull").WithEffect(Cumulative)
)
