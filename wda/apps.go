package wda

import (
	"context"
	"errors"
	"fmt"
)

// AppState is what /wda/apps/state reports (XCUIApplicationState).
type AppState int

const (
	AppUnknown             AppState = 0 // not installed, or unknown
	AppNotRunning          AppState = 1
	AppBackgroundSuspended AppState = 2
	AppBackground          AppState = 3
	AppForeground          AppState = 4
)

func (s AppState) String() string {
	switch s {
	case AppNotRunning:
		return "not running"
	case AppBackgroundSuspended:
		return "suspended in the background"
	case AppBackground:
		return "running in the background"
	case AppForeground:
		return "running in the foreground"
	}
	return "unknown"
}

// LaunchApp starts (or restarts into the foreground) the app with the given
// bundle id. An app that is not installed gives an error matching
// ErrAppNotInstalled.
func (c *Client) LaunchApp(ctx context.Context, bundleID string, args []string, env map[string]string) error {
	body := map[string]any{"bundleId": bundleID}
	if len(args) > 0 {
		body["arguments"] = args
	}
	if len(env) > 0 {
		body["environment"] = env
	}
	err := c.spost(ctx, "/wda/apps/launch", body, nil)
	if err != nil && !errors.Is(err, ErrAppNotInstalled) && !errors.Is(err, ErrInvalidSession) {
		// Messages differ across versions; the state is definite.
		if st, serr := c.AppState(ctx, bundleID); serr == nil && st == AppUnknown {
			return fmt.Errorf("%w: %w", ErrAppNotInstalled, err)
		}
	}
	return err
}

// OpenURL opens a URL in the app that handles its scheme (POST /url):
// Safari for http and https, an app for its own scheme.
func (c *Client) OpenURL(ctx context.Context, url string) error {
	return c.spost(ctx, "/url", map[string]string{"url": url}, nil)
}

// ActivateApp brings a running app to the foreground (launching it if
// needed).
func (c *Client) ActivateApp(ctx context.Context, bundleID string) error {
	return c.spost(ctx, "/wda/apps/activate", map[string]string{"bundleId": bundleID}, nil)
}

// TerminateApp stops the app; it reports whether the app was running.
func (c *Client) TerminateApp(ctx context.Context, bundleID string) (bool, error) {
	var was bool
	err := c.spost(ctx, "/wda/apps/terminate", map[string]string{"bundleId": bundleID}, &was)
	return was, err
}

// AppState reports the app's state.
func (c *Client) AppState(ctx context.Context, bundleID string) (AppState, error) {
	var s int
	err := c.spost(ctx, "/wda/apps/state", map[string]string{"bundleId": bundleID}, &s)
	return AppState(s), err
}

// AppInfo describes the app in the foreground.
type AppInfo struct {
	BundleID string `json:"bundleId"`
	Name     string `json:"name"`
	PID      int    `json:"pid"`
}

// ActiveApp returns the app in the foreground (com.apple.springboard on
// the home screen).
func (c *Client) ActiveApp(ctx context.Context) (AppInfo, error) {
	var a AppInfo
	err := c.sget(ctx, "/wda/activeAppInfo", &a)
	if err == nil && a.BundleID == "" {
		err = fmt.Errorf("wda: active app: %w: no bundleId", ErrBadResponse)
	}
	return a, err
}

// Springboard is the bundle id of the iOS home screen.
const Springboard = "com.apple.springboard"
