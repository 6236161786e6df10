// Package adbd serves a simulated phone as an Android device over the adbd
// TCP protocol, so Google's adb (and Apex's own adb client) can drive it.
package adbd

import (
	"errors"
	"image"
	"time"
)

// Phone is the simulated device behind the adbd face. It knows nothing of
// the protocol; adbd turns shell commands into these calls. Implementations
// are safe for concurrent use.
type Phone interface {
	// Props returns system properties as getprop reports them
	// (ro.product.model, ro.build.version.release, ro.build.version.sdk, …).
	Props() map[string]string
	// Display returns the physical screen size in pixels (portrait, as
	// `wm size` reports it whatever the rotation) and the density in dpi.
	Display() (width, height, density int)
	// Rotation is the display's rotation, 0–3 (Surface.ROTATION_*): 1 and
	// 3 are landscape, and dumps and screenshots are laid out that way.
	// The phone follows the system settings user_rotation and
	// accelerometer_rotation.
	Rotation() int
	// DumpUI returns the current hierarchy as `uiautomator dump` writes it.
	DumpUI() ([]byte, error)
	// Screenshot returns the current screen as PNG bytes (cached until the
	// screen changes).
	Screenshot() ([]byte, error)
	// Frame returns the current screen as pixels, for raw `screencap`.
	Frame() (*image.RGBA, error)

	Tap(x, y int)
	// Swipe moves from one point to another over d; a swipe that does not
	// move is a tap, or a long press when d is long.
	Swipe(x1, y1, x2, y2 int, d time.Duration)
	// InputText types into the focused field; any Unicode is accepted (the
	// ADBKeyBoard broadcast path).
	InputText(text string)
	// KeyEvent presses an Android key code (KEYCODE_BACK = 4, …).
	KeyEvent(code int)

	// Launch brings an installed package to the foreground, starting it if
	// needed; ErrUnknownPackage when it is not installed.
	Launch(pkg string) error
	ForceStop(pkg string)
	// Foreground returns the package and activity on screen.
	Foreground() (pkg, activity string)
	Packages() []Package
	Install(p Package) error
	// ResetApp clears an app's data (`pm clear`): it is killed and starts
	// again from its initial state.
	ResetApp(pkg string) error
	// Uninstall removes an app; InstallExisting brings back a built-in one
	// that was removed (`cmd package install-existing`).
	Uninstall(pkg string) error
	InstallExisting(pkg string) error
	// View opens a URI as a VIEW intent does and returns the package that
	// opened it; an error when no app opens it.
	View(uri string) (pkg string, err error)

	// Logcat returns the log lines so far, in `logcat -d` threadtime form.
	Logcat() []string
	KeyboardShown() bool
	// Awake reports whether the screen is on; Locked whether the keyguard shows.
	Awake() bool
	Locked() bool
	Setting(namespace, key string) (string, bool)
	PutSetting(namespace, key, value string)
	// Settings returns a copy of one namespace (system, secure, global).
	Settings(namespace string) map[string]string
	// DeleteSetting removes a key; false when it was not there.
	DeleteSetting(namespace, key string) bool
}

// Package is an installed app.
type Package struct {
	Name             string // com.apex.shop
	Label            string // Shop
	Version          string
	LauncherActivity string // .MainActivity or full class name
	System           bool
	Debuggable       bool
	Aliases          []string // other names that resolve to this package
}

// ErrUnknownPackage is returned for a package that is not installed.
var ErrUnknownPackage = errors.New("unknown package")
