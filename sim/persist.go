package sim

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/apexagent/apex/sim/adbd"
)

// Saved is what a phone keeps across a restart of its process (apex sim
// --state-file): the packages installed beyond its specs and the built-in
// ones uninstalled, the settings provider (dark mode, rotation,
// animations, …), the persisted system properties (locale, time zone),
// the battery, the mock location and the app in front. Apps' own state
// (a cart's contents) starts afresh from their specs.
type Saved struct {
	Installed   []adbd.Package               `json:"installed,omitempty"`
	Uninstalled []string                     `json:"uninstalled,omitempty"`
	Settings    map[string]map[string]string `json:"settings,omitempty"`
	Props       map[string]string            `json:"props,omitempty"`
	Battery     *SavedBattery                `json:"battery,omitempty"`
	Location    *SavedLocation               `json:"location,omitempty"`
	Foreground  string                       `json:"foreground,omitempty"`
}

// SavedBattery is the battery a phone reports.
type SavedBattery struct {
	Level    int  `json:"level"`
	Charging bool `json:"charging"`
}

// SavedLocation is a phone's mock location.
type SavedLocation struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

// Save returns what Restore needs to bring the phone back as it is now.
func (p *Phone) Save() Saved {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Saved{Settings: map[string]map[string]string{}, Props: map[string]string{}, Foreground: p.fg,
		Battery: &SavedBattery{Level: p.hw.level, Charging: p.hw.charging}}
	for _, name := range p.order {
		if a := p.apps[name]; a != nil && a.spec.File == "installed" {
			s.Installed = append(s.Installed, p.pkgs[name])
		}
	}
	s.Uninstalled = slices.Sorted(maps.Keys(p.removed))
	for ns, kv := range p.settings {
		s.Settings[ns] = maps.Clone(kv)
	}
	for k, v := range p.props {
		if strings.HasPrefix(k, "persist.") {
			s.Props[k] = v
		}
	}
	if p.hw.located {
		s.Location = &SavedLocation{Lat: p.hw.lat, Lon: p.hw.lon}
	}
	return s
}

// Restore brings the phone to what Save returned (of a phone started from
// the same specs): packages, settings, properties, battery, location, and
// the app in front, launched afresh.
func (p *Phone) Restore(s Saved) error {
	for _, pkg := range s.Installed {
		if err := p.Install(pkg); err != nil {
			return err
		}
	}
	for _, pkg := range s.Uninstalled {
		if err := p.Uninstall(pkg); err != nil && !errors.Is(err, adbd.ErrUnknownPackage) {
			return err
		}
	}
	for ns, kv := range s.Settings {
		for k, v := range kv {
			p.PutSetting(ns, k, v)
		}
	}
	for k, v := range s.Props {
		p.SetProp(k, v)
	}
	if b := s.Battery; b != nil {
		p.SetBattery(b.Level, b.Charging)
	}
	if l := s.Location; l != nil {
		p.SetLocation(l.Lat, l.Lon)
	}
	if s.Foreground != "" && s.Foreground != Launcher {
		return p.Launch(s.Foreground)
	}
	return nil
}
