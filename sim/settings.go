package sim

import (
	"strconv"
	"strings"
	"time"

	"github.com/apexagent/apex/sim/adbd"
)

// The simulated hardware the device settings change, as the phone's own
// commands do on a real one: cmd uimode (night mode, kept where Android
// keeps it: secure ui_night_mode), cmd battery, cmd location, setprop
// persist.sys.locale and persist.sys.timezone.
type hardware struct {
	level    int
	charging bool
	lat, lon float64
	located  bool
	zoneName string
	zone     *time.Location
}

var _ adbd.Hardware = (*Phone)(nil)

// Night mode values of Settings.Secure ui_night_mode (UiModeManager).
const (
	nightNo  = "1"
	nightYes = "2"
)

// NightMode reports whether the system is in dark mode.
func (p *Phone) NightMode() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nightMode()
}

func (p *Phone) nightMode() bool { return p.settings["secure"]["ui_night_mode"] == nightYes }

// SetNightMode switches dark mode, as `cmd uimode night yes|no` does: every
// app is drawn with the dark palette.
func (p *Phone) SetNightMode(on bool) {
	v := nightNo
	if on {
		v = nightYes
	}
	p.PutSetting("secure", "ui_night_mode", v)
}

// Battery returns the level the phone reports (0–100) and whether it
// charges.
func (p *Phone) Battery() (level int, charging bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hw.level, p.hw.charging
}

// SetBattery makes the phone report a battery level and charging state
// (`cmd battery set level N`, `cmd battery set ac 1`); the status bar shows it.
func (p *Phone) SetBattery(level int, charging bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hw.level, p.hw.charging = min(max(level, 0), 100), charging
	p.changed()
}

// Location returns the mock location; ok is false until one is set.
func (p *Phone) Location() (lat, lon float64, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hw.lat, p.hw.lon, p.hw.located
}

// SetLocation sets the mock location apps see (a test provider's, or
// WDA's simulated location).
func (p *Phone) SetLocation(lat, lon float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hw.lat, p.hw.lon, p.hw.located = lat, lon, true
	p.logcat.add(1000, "I", "LocationManagerService", "test provider gps location set")
}

// ClearLocation removes the mock location.
func (p *Phone) ClearLocation() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hw.located = false
}

// SetProp sets a system property, as setprop does. persist.sys.locale
// switches the built-in apps' strings where their spec has them;
// persist.sys.timezone the clock's zone.
func (p *Phone) SetProp(name, value string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.props[name] = value
	p.changed()
}

// language is the system locale's language: "de" for de-DE.
func (p *Phone) language() string {
	tag := p.props["persist.sys.locale"]
	lang, _, _ := strings.Cut(strings.ReplaceAll(tag, "_", "-"), "-")
	return strings.ToLower(lang)
}

// local is t in the system time zone (UTC when the zone is unknown).
func (p *Phone) local(t time.Time) time.Time {
	name := p.props["persist.sys.timezone"]
	if name != p.hw.zoneName {
		p.hw.zoneName = name
		p.hw.zone = time.UTC
		if z, err := time.LoadLocation(name); err == nil {
			p.hw.zone = z
		}
	}
	if p.hw.zone == nil {
		return t.UTC()
	}
	return t.In(p.hw.zone)
}

// translate puts the texts of an app's window into the system language
// where the app's spec translates them (AppSpec.Strings).
func (p *Phone) translate(v *view, spec *AppSpec) {
	if v == nil || spec == nil {
		return
	}
	tr := spec.Strings[p.language()]
	if len(tr) == 0 {
		return
	}
	var walk func(v *view)
	walk = func(v *view) {
		if t, ok := tr[v.text]; ok {
			v.text = t
		}
		for i, l := range v.lines {
			if t, ok := tr[l]; ok {
				v.lines[i] = t
			}
		}
		for _, c := range v.children {
			walk(c)
		}
	}
	walk(v)
}

// batteryText is the status bar's battery label.
func (p *Phone) batteryText() (label, desc string) {
	n := strconv.Itoa(p.hw.level)
	desc = "Battery " + n + " percent."
	if p.hw.charging {
		desc = "Battery charging, " + n + " percent."
	}
	return n + "%", desc
}
