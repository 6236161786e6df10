package android

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/internal/lazy"
)

var _ device.Configurator = (*Driver)(nil)

// Configure applies a typed setting with the device's own commands, built
// here from the typed value (numbers formatted, names checked and quoted:
// nothing of the caller reaches the shell unchecked), and reads it back.
func (d *Driver) Configure(ctx context.Context, s device.Setting) (device.Setting, error) {
	plan, err := settingPlan(s)
	if err != nil {
		return nil, fmt.Errorf("android %s: %w", d.serial, err)
	}
	var got device.Setting
	err = d.call(ctx, "set "+s.SettingName(), true, d.opts.Timeout, func(ctx context.Context) error {
		for _, cmd := range plan.set {
			if _, err := d.shell(ctx, cmd); err != nil {
				return fmt.Errorf("%s: %w", cmd, err)
			}
		}
		out, err := d.shell(ctx, plan.read)
		if err != nil {
			return fmt.Errorf("read back with %s: %w", plan.read, err)
		}
		got, err = plan.parse(strings.TrimSpace(out))
		if err != nil {
			return fmt.Errorf("read back with %s: %w", plan.read, err)
		}
		return nil
	})
	return got, err
}

// settingCommands are the commands that set one setting, the one that
// reads it back and how its output reads.
type settingCommands struct {
	set   []string
	read  string
	parse func(out string) (device.Setting, error)
}

var (
	localeRe   = lazy.Regexp(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$`)
	timeZoneRe = lazy.Regexp(`^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$`)
	// dumpsys location's last location: "Location[gps 52.520008,13.404954 …".
	locationRe = lazy.Regexp(`Location\[gps (-?[0-9.]+),(-?[0-9.]+)`)
)

func onOff(on bool, yes, no string) string {
	if on {
		return yes
	}
	return no
}

func settingPlan(s device.Setting) (settingCommands, error) {
	switch s := s.(type) {
	case device.Appearance:
		return settingCommands{
			set:  []string{"cmd uimode night " + onOff(s.Dark, "yes", "no")},
			read: "cmd uimode night",
			parse: func(out string) (device.Setting, error) {
				// "Night mode: yes"
				v, ok := strings.CutPrefix(out, "Night mode: ")
				if !ok {
					return nil, fmt.Errorf("unexpected answer %q", out)
				}
				return device.Appearance{Dark: v == "yes"}, nil
			},
		}, nil
	case device.Locale:
		if !localeRe().MatchString(s.Tag) {
			return settingCommands{}, fmt.Errorf("set locale: %q is not a language tag: give one like de-DE or fr", s.Tag)
		}
		return propPlan("persist.sys.locale", s.Tag, func(v string) device.Setting { return device.Locale{Tag: v} }), nil
	case device.TimeZone:
		if !timeZoneRe().MatchString(s.Name) {
			return settingCommands{}, fmt.Errorf("set time zone: %q is not a time zone name: give one like Europe/Berlin", s.Name)
		}
		p := propPlan("persist.sys.timezone", s.Name, func(v string) device.Setting { return device.TimeZone{Name: v} })
		p.set = []string{"cmd alarm set-timezone " + quote(s.Name)}
		return p, nil
	case device.FontScale:
		if s.Scale < 0.5 || s.Scale > 2 {
			return settingCommands{}, fmt.Errorf("set font scale: %g is out of range: give 0.5 to 2 (1 is the default)", s.Scale)
		}
		return settingsPlan("system", "font_scale", []string{num(s.Scale)}, func(v string) (device.Setting, error) {
			f, err := strconv.ParseFloat(v, 64)
			return device.FontScale{Scale: f}, err
		}), nil
	case device.Rotation:
		if s.Quarter < 0 || s.Quarter > 3 {
			return settingCommands{}, fmt.Errorf("set rotation: %d: give 0, 1, 2 or 3 quarter turns", s.Quarter)
		}
		p := settingsPlan("system", "user_rotation", []string{strconv.Itoa(s.Quarter)}, func(v string) (device.Setting, error) {
			n, err := strconv.Atoi(v)
			return device.Rotation{Quarter: n}, err
		})
		p.set = append([]string{"settings put system accelerometer_rotation 0"}, p.set...)
		return p, nil
	case device.Animations:
		scale := onOff(s.On, "1", "0")
		p := settingsPlan("global", "animator_duration_scale", []string{scale}, func(v string) (device.Setting, error) {
			f, err := strconv.ParseFloat(v, 64)
			return device.Animations{On: f > 0}, err
		})
		p.set = append([]string{"settings put global window_animation_scale " + scale, "settings put global transition_animation_scale " + scale}, p.set...)
		return p, nil
	case device.Radio:
		return radioPlan(s)
	case device.Location:
		if s.Lat < -90 || s.Lat > 90 || s.Lon < -180 || s.Lon > 180 {
			return settingCommands{}, fmt.Errorf("set location: %g,%g is not on Earth: latitude -90 to 90, longitude -180 to 180", s.Lat, s.Lon)
		}
		return settingCommands{
			set: []string{
				"cmd location set-location-enabled true",
				"cmd location providers add-test-provider gps",
				"cmd location providers set-test-provider-enabled gps true",
				"cmd location providers set-test-provider-location gps --location " + num(s.Lat) + "," + num(s.Lon),
			},
			read: "dumpsys location",
			parse: func(out string) (device.Setting, error) {
				m := locationRe().FindStringSubmatch(out)
				if m == nil {
					return nil, fmt.Errorf("dumpsys location shows no gps location")
				}
				lat, err1 := strconv.ParseFloat(m[1], 64)
				lon, err2 := strconv.ParseFloat(m[2], 64)
				if err1 != nil || err2 != nil {
					return nil, fmt.Errorf("dumpsys location: bad location %q", m[0])
				}
				return device.Location{Lat: lat, Lon: lon}, nil
			},
		}, nil
	case device.Battery:
		if s.Level < 0 || s.Level > 100 {
			return settingCommands{}, fmt.Errorf("set battery: level %d: give 0 to 100", s.Level)
		}
		return settingCommands{
			set: []string{
				"cmd battery set level " + strconv.Itoa(s.Level),
				"cmd battery set ac " + onOff(s.Charging, "1", "0"),
				// BatteryManager.BATTERY_STATUS_CHARGING is 2, DISCHARGING 3.
				"cmd battery set status " + onOff(s.Charging, "2", "3"),
			},
			read:  "dumpsys battery",
			parse: parseBattery,
		}, nil
	}
	return settingCommands{}, device.Unsupported("android", s, "Apex knows no command for it")
}

// num formats a number the way the device's parsers read it.
func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func propPlan(prop, value string, mk func(string) device.Setting) settingCommands {
	return settingCommands{
		set:   []string{"setprop " + prop + " " + quote(value)},
		read:  "getprop " + prop,
		parse: func(out string) (device.Setting, error) { return mk(out), nil },
	}
}

func settingsPlan(ns, key string, value []string, parse func(string) (device.Setting, error)) settingCommands {
	return settingCommands{
		set:  []string{"settings put " + ns + " " + key + " " + strings.Join(value, " ")},
		read: "settings get " + ns + " " + key,
		parse: func(out string) (device.Setting, error) {
			s, err := parse(out)
			if err != nil {
				return nil, fmt.Errorf("settings %s %s is %q", ns, key, out)
			}
			return s, nil
		},
	}
}

func radioPlan(r device.Radio) (settingCommands, error) {
	back := func(v string) (device.Setting, error) {
		if v != "0" && v != "1" {
			return nil, fmt.Errorf("not 0 or 1: %q", v)
		}
		return device.Radio{Radio: r.Radio, On: v == "1"}, nil
	}
	switch r.Radio {
	case device.WiFi:
		p := settingsPlan("global", "wifi_on", nil, back)
		p.set = []string{"svc wifi " + onOff(r.On, "enable", "disable")}
		return p, nil
	case device.MobileData:
		p := settingsPlan("global", "mobile_data", nil, back)
		p.set = []string{"svc data " + onOff(r.On, "enable", "disable")}
		return p, nil
	case device.Airplane:
		p := settingsPlan("global", "airplane_mode_on", []string{onOff(r.On, "1", "0")}, back)
		p.set = append(p.set, "am broadcast -a android.intent.action.AIRPLANE_MODE --ez state "+onOff(r.On, "true", "false"))
		return p, nil
	}
	return settingCommands{}, fmt.Errorf("set radio: unknown radio %q: give wifi, data or airplane", r.Radio)
}

// parseBattery reads `dumpsys battery`: "level: 50", "AC powered: true".
func parseBattery(out string) (device.Setting, error) {
	var b device.Battery
	level := false
	for line := range strings.Lines(out) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok {
			continue
		}
		switch k {
		case "level":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("dumpsys battery: level %q", v)
			}
			b.Level, level = n, true
		case "AC powered", "USB powered", "Wireless powered":
			b.Charging = b.Charging || v == "true"
		}
	}
	if !level {
		return nil, fmt.Errorf("dumpsys battery shows no level")
	}
	return b, nil
}
