package action

import (
	"context"
	"fmt"

	"github.com/apexagent/apex/device"
)

// AsSetting returns a copy of the action marked as a device setting: it
// sets one typed control and answers with the value read back (Env.Answer).
// Settings are Idempotent: setting a value twice leaves it set.
func (a *Action) AsSetting() *Action {
	c := *a.WithEffect(Idempotent)
	c.setting = true
	return &c
}

// IsSetting reports whether the action is a device setting (AsSetting).
func (a *Action) IsSetting() bool { return a.setting }

// Settings lists the space's settings, in order.
func (s *Space) Settings() []*Action {
	var out []*Action
	for _, a := range s.actions {
		if a.setting {
			out = append(out, a)
		}
	}
	return out
}

// Params of the settings.
type (
	AppearanceParams struct {
		Appearance string `json:"appearance" jsonschema:"dark or light mode" enum:"dark,light"`
	}
	LocaleParams struct {
		Locale string `json:"locale" jsonschema:"the system language and region as a BCP 47 tag, e.g. de-DE, fr-FR, en-US"`
	}
	FontScaleParams struct {
		Scale float64 `json:"scale" jsonschema:"text size: 1 is the default, 1.3 larger" minimum:"0.5" maximum:"2"`
	}
	RotationParams struct {
		Rotation string `json:"rotation" jsonschema:"how the display is turned" enum:"portrait,landscape,upside-down,landscape-right"`
	}
	LocationParams struct {
		Lat float64 `json:"lat" jsonschema:"latitude in degrees" minimum:"-90" maximum:"90"`
		Lon float64 `json:"lon" jsonschema:"longitude in degrees" minimum:"-180" maximum:"180"`
	}
	SwitchParams struct {
		On bool `json:"on" jsonschema:"true turns it on, false off"`
	}
	TimeZoneParams struct {
		TimeZone string `json:"timeZone" jsonschema:"an IANA time zone name, e.g. Europe/Berlin"`
	}
	BatteryParams struct {
		Level    int  `json:"level" jsonschema:"the battery level to report, in percent" minimum:"0" maximum:"100"`
		Charging bool `json:"charging,omitempty" jsonschema:"whether the phone reports it is charging"`
	}
)

// Validate refuses an empty locale.
func (p *LocaleParams) Validate() error {
	if p.Locale == "" {
		return Invalid("locale", "is empty: give a language tag, e.g. de-DE")
	}
	return nil
}

// Validate refuses an empty time zone.
func (p *TimeZoneParams) Validate() error {
	if p.TimeZone == "" {
		return Invalid("timeZone", "is empty: give a time zone name, e.g. Europe/Berlin")
	}
	return nil
}

// rotations are RotationParams' names by quarter turn.
var rotations = []string{"portrait", "landscape", "upside-down", "landscape-right"}

// defineSetting declares a setting action: build turns its params into the
// typed device setting, which the driver applies and reads back.
func defineSetting[P any](name, description string, build func(p *P) device.Setting) *Action {
	return Define(name, description, func(ctx context.Context, env *Env, p *P) error {
		c, ok := extension[device.Configurator](env.Driver)
		if !ok {
			return fmt.Errorf("this device's driver cannot change settings: %w", device.ErrUnsupported)
		}
		got, err := c.Configure(ctx, build(p))
		if err != nil {
			return err
		}
		env.Answer = got
		return nil
	}).AsSetting()
}

// The settings. Each answers with the value the device reports afterwards.
var (
	SetAppearance = defineSetting("SetAppearance", "Switch the system to dark or light mode.",
		func(p *AppearanceParams) device.Setting { return device.Appearance{Dark: p.Appearance == "dark"} })
	SetLocale = defineSetting("SetLocale", "Set the system language and region.",
		func(p *LocaleParams) device.Setting { return device.Locale{Tag: p.Locale} })
	SetFontScale = defineSetting("SetFontScale", "Set the system text size.",
		func(p *FontScaleParams) device.Setting { return device.FontScale{Scale: p.Scale} })
	SetRotation = defineSetting("SetRotation", "Lock the display in portrait or landscape.",
		func(p *RotationParams) device.Setting {
			for q, r := range rotations {
				if r == p.Rotation {
					return device.Rotation{Quarter: q}
				}
			}
			return device.Rotation{}
		})
	SetLocation = defineSetting("SetLocation", "Set a mock location the apps see.",
		func(p *LocationParams) device.Setting { return device.Location{Lat: p.Lat, Lon: p.Lon} })
	SetWiFi = defineSetting("SetWiFi", "Turn Wi-Fi on or off.",
		func(p *SwitchParams) device.Setting { return device.Radio{Radio: device.WiFi, On: p.On} })
	SetMobileData = defineSetting("SetMobileData", "Turn mobile data on or off.",
		func(p *SwitchParams) device.Setting { return device.Radio{Radio: device.MobileData, On: p.On} })
	SetAirplaneMode = defineSetting("SetAirplaneMode", "Turn airplane mode on or off.",
		func(p *SwitchParams) device.Setting { return device.Radio{Radio: device.Airplane, On: p.On} })
	SetAnimations = defineSetting("SetAnimations", "Turn system animations on or off (off makes tests steadier).",
		func(p *SwitchParams) device.Setting { return device.Animations{On: p.On} })
	SetTimeZone = defineSetting("SetTimeZone", "Set the system time zone.",
		func(p *TimeZoneParams) device.Setting { return device.TimeZone{Name: p.TimeZone} })
	SetBattery = defineSetting("SetBattery", "Make the phone report a battery level and whether it charges.",
		func(p *BatteryParams) device.Setting { return device.Battery{Level: p.Level, Charging: p.Charging} })

	settings = []*Action{SetAppearance, SetLocale, SetFontScale, SetRotation, SetLocation, SetWiFi, SetMobileData,
		SetAirplaneMode, SetAnimations, SetTimeZone, SetBattery}
)
