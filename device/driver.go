// Package device defines how Apex drives a phone: the Driver contract, device
// discovery through Hosts, and host-qualified device IDs.
package device

import (
	"context"
	"time"
)

// Platform names the operating system family of a device.
type Platform string

const (
	Android Platform = "android"
	IOS     Platform = "ios"
)

// Info describes a device. Sizes are in physical pixels, as screenshots and
// UI sources report them.
type Info struct {
	ID        string   `json:"id"`
	Platform  Platform `json:"platform"`
	Model     string   `json:"model"`
	OSVersion string   `json:"os_version"`
	Width     int      `json:"width"`
	Height    int      `json:"height"`
	Density   int      `json:"density"` // dots per inch, e.g. 420
}

// SourceFormat names the dialect of a raw UI source.
type SourceFormat string

const (
	FormatUIAutomator SourceFormat = "uiautomator" // Android uiautomator dump or Appium UiAutomator2 page source
	FormatXCUITest    SourceFormat = "xcuitest"    // iOS XCUITest / WebDriverAgent page source
)

// Source is a raw UI hierarchy as the device produced it.
type Source struct {
	Format SourceFormat
	Data   []byte
}

// Point is a position on the screen in device pixels.
type Point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// Driver drives one device. Every method takes a context first and returns
// when the context is done; a device that is gone surfaces as an error
// wrapping ErrOffline after a bounded number of retries, never as a hang.
//
// A Driver is safe for concurrent use, but input calls are applied in the
// order they reach the device, so callers that care about order serialise.
type Driver interface {
	Info(ctx context.Context) (Info, error)
	// Screenshot returns the current screen as PNG bytes.
	Screenshot(ctx context.Context) ([]byte, error)
	// Source returns the raw UI hierarchy of the current screen.
	Source(ctx context.Context) (Source, error)
	Tap(ctx context.Context, p Point) error
	LongPress(ctx context.Context, p Point, d time.Duration) error
	Swipe(ctx context.Context, from, to Point, d time.Duration) error
	// InputText types text into the focused field. Non-ASCII text is
	// supported where the platform allows it; otherwise the error says how.
	InputText(ctx context.Context, text string) error
	PressKey(ctx context.Context, k Key) error
	// LaunchApp starts an app by package name (Android) or bundle id (iOS).
	LaunchApp(ctx context.Context, app string) error
	TerminateApp(ctx context.Context, app string) error
	// ForegroundApp returns the package or bundle id on screen.
	ForegroundApp(ctx context.Context) (string, error)
	Lock(ctx context.Context) error
	Unlock(ctx context.Context) error
	Close() error
}
