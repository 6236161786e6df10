package device

import (
	"context"
	"fmt"
)

// Setting is one typed device setting with its value: the driver turns it
// into the device's own command (Android) or protocol call (WDA) from the
// typed fields, never from a command string, and reads the value back.
type Setting interface {
	// SettingName names the control: "appearance", "locale", …
	SettingName() string
}

// Configurator is a driver that applies typed settings. Configure sets s
// and returns the value the device reports afterwards (read back, not
// echoed); a setting the device cannot change is an error wrapping
// ErrUnsupported that says why.
type Configurator interface {
	Configure(ctx context.Context, s Setting) (Setting, error)
}

// The settings. Their zero values are valid settings (light, portrait, …)
// except where a field says otherwise.
type (
	// Appearance is the system's dark or light mode.
	Appearance struct {
		Dark bool `json:"dark"`
	}
	// Locale is the system language and region, a BCP 47 tag: "de-DE".
	Locale struct {
		Tag string `json:"tag"`
	}
	// FontScale scales system text: 1 is the default, 1.3 larger.
	FontScale struct {
		Scale float64 `json:"scale"`
	}
	// Rotation locks the display in a quarter turn: 0 portrait, 1
	// landscape (turned left), 2 upside down, 3 landscape (turned right).
	Rotation struct {
		Quarter int `json:"quarter"`
	}
	// Location is a mock location in degrees.
	Location struct {
		Lat float64 `json:"lat"`
		Lon float64 `json:"lon"`
	}
	// Radio switches a radio on or off.
	Radio struct {
		Radio RadioKind `json:"radio"`
		On    bool      `json:"on"`
	}
	// Animations turns system animations on or off.
	Animations struct {
		On bool `json:"on"`
	}
	// TimeZone is the system time zone, an IANA name: "Europe/Berlin".
	TimeZone struct {
		Name string `json:"name"`
	}
	// Battery is the battery level the device reports (0–100) and whether
	// it is charging: simulated, as `cmd battery set` does.
	Battery struct {
		Level    int  `json:"level"`
		Charging bool `json:"charging"`
	}
)

// RadioKind names a radio of Radio.
type RadioKind string

const (
	WiFi       RadioKind = "wifi"
	MobileData RadioKind = "data"
	Airplane   RadioKind = "airplane"
)

func (Appearance) SettingName() string { return "appearance" }
func (Locale) SettingName() string     { return "locale" }
func (FontScale) SettingName() string  { return "font_scale" }
func (Rotation) SettingName() string   { return "rotation" }
func (Location) SettingName() string   { return "location" }
func (r Radio) SettingName() string    { return string(r.Radio) }
func (Animations) SettingName() string { return "animations" }
func (TimeZone) SettingName() string   { return "time_zone" }
func (Battery) SettingName() string    { return "battery" }

// Unsupported is the error of a setting a platform cannot change: why, and
// what to do instead.
func Unsupported(platform string, s Setting, why string) error {
	return fmt.Errorf("%s cannot set %s: %s: %w", platform, s.SettingName(), why, ErrUnsupported)
}
