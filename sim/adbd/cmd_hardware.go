package adbd

import (
	"context"
	"strconv"
	"strings"
)

// Hardware is a phone whose simulated hardware the device's own commands
// change: the battery (cmd battery), the mock location (cmd location) and
// system properties others read (setprop persist.sys.locale). Night mode,
// Wi-Fi and the like live in the settings provider.
type Hardware interface {
	Battery() (level int, charging bool)
	SetBattery(level int, charging bool)
	Location() (lat, lon float64, ok bool)
	SetLocation(lat, lon float64)
	SetProp(name, value string)
}

// services are the binder services `cmd NAME` reaches beyond cmdCmd's own.
var services = map[string]func(ctx context.Context, c *Cmd) int{
	"uimode":   cmdUimode,
	"battery":  cmdBattery,
	"location": cmdLocation,
	"alarm":    cmdAlarm,
}

func (c *Cmd) hardware() (Hardware, bool) {
	h, ok := c.phone().(Hardware)
	return h, ok
}

// cmdUimode is `cmd uimode night [yes|no|auto]`, kept in the secure
// setting ui_night_mode as UiModeManager keeps it (1 no, 2 yes, 0 auto).
func cmdUimode(_ context.Context, c *Cmd) int {
	a := c.Args[1:]
	if len(a) == 0 || a[0] != "night" {
		c.printf("UiModeManager service (uimode) commands:\n  night [yes|no|auto]\n")
		return 255
	}
	if len(a) == 1 {
		v, _ := c.phone().Setting("secure", "ui_night_mode")
		mode, ok := map[string]string{"2": "yes", "0": "auto"}[v]
		if !ok {
			mode = "no"
		}
		c.printf("Night mode: %s\n", mode)
		return 0
	}
	v, ok := map[string]string{"yes": "2", "no": "1", "auto": "0"}[a[1]]
	if !ok {
		return c.fail(255, "Error: mode must be 'yes', 'no', or 'auto'")
	}
	c.phone().PutSetting("secure", "ui_night_mode", v)
	return 0
}

// cmdBattery is `cmd battery set level N|ac 0|1|usb 0|1|status N`, `cmd
// battery unplug` and `cmd battery reset`.
func cmdBattery(_ context.Context, c *Cmd) int {
	h, ok := c.hardware()
	if !ok {
		return c.fail(255, "cmd: Can't find service: battery")
	}
	level, charging := h.Battery()
	a := c.Args[1:]
	switch {
	case len(a) == 1 && a[0] == "unplug":
		charging = false
	case len(a) == 1 && a[0] == "reset":
		level, charging = 100, true
	case len(a) == 3 && a[0] == "set":
		n, err := strconv.Atoi(a[2])
		if err != nil {
			return c.fail(255, "Bad value: %s", a[2])
		}
		switch a[1] {
		case "level":
			if n < 0 || n > 100 {
				return c.fail(255, "Bad value: %s", a[2])
			}
			level = n
		case "ac", "usb", "wireless":
			charging = n != 0
		case "status":
			charging = n == 2 || n == 5 // BATTERY_STATUS_CHARGING, _FULL
		default:
			return c.fail(255, "Unknown set option: %s", a[1])
		}
	default:
		c.printf("Battery service (battery) commands:\n  set [-f] [ac|usb|wireless|status|level|temp|present|invalid] <value>\n  unplug [-f]\n  reset [-f] [ac|usb|wireless|status|level|temp|present|invalid]\n")
		return 255
	}
	h.SetBattery(level, charging)
	return 0
}

// dumpBattery is `dumpsys battery`.
func dumpBattery(c *Cmd) {
	level, charging := 100, true
	if h, ok := c.hardware(); ok {
		level, charging = h.Battery()
	}
	status := 3 // discharging
	if charging {
		status = 2
	}
	c.printf("Current Battery Service state:\n  AC powered: %v\n  USB powered: false\n  Wireless powered: false\n  status: %d\n  health: 2\n  present: true\n  level: %d\n  scale: 100\n  voltage: 5000\n  temperature: 250\n  technology: Li-ion\n", charging, status, level)
}

// cmdLocation is the part of `cmd location` that mocks a location:
// set-location-enabled, is-location-enabled, providers add-test-provider,
// set-test-provider-enabled, set-test-provider-location and
// remove-test-provider.
func cmdLocation(_ context.Context, c *Cmd) int {
	h, ok := c.hardware()
	if !ok {
		return c.fail(255, "cmd: Can't find service: location")
	}
	a := c.Args[1:]
	switch {
	case len(a) >= 2 && a[0] == "set-location-enabled":
		v := "0"
		if a[1] == "true" {
			v = "3" // LOCATION_MODE_ON
		}
		c.phone().PutSetting("secure", "location_mode", v)
		return 0
	case len(a) == 1 && a[0] == "is-location-enabled":
		v, _ := c.phone().Setting("secure", "location_mode")
		c.printf("%v\n", v != "0" && v != "")
		return 0
	case len(a) >= 3 && a[0] == "providers":
		if a[2] != "gps" {
			return c.fail(255, "Error: the simulated phone has the gps provider only")
		}
		switch a[1] {
		case "add-test-provider", "set-test-provider-enabled":
			return 0
		case "remove-test-provider":
			if r, ok := c.phone().(interface{ ClearLocation() }); ok {
				r.ClearLocation()
			}
			return 0
		case "set-test-provider-location":
			if len(a) != 5 || a[3] != "--location" {
				return c.fail(255, "Error: usage: providers set-test-provider-location gps --location LAT,LON")
			}
			lat, lon, ok := strings.Cut(a[4], ",")
			la, err1 := strconv.ParseFloat(lat, 64)
			lo, err2 := strconv.ParseFloat(lon, 64)
			if !ok || err1 != nil || err2 != nil || la < -90 || la > 90 || lo < -180 || lo > 180 {
				return c.fail(255, "Error: bad location %q: want LAT,LON in degrees", a[4])
			}
			h.SetLocation(la, lo)
			return 0
		}
	}
	c.printf("Location service commands:\n  is-location-enabled\n  set-location-enabled true|false\n  providers add-test-provider|set-test-provider-enabled|set-test-provider-location|remove-test-provider gps …\n")
	return 255
}

// dumpLocation is `dumpsys location`: the gps provider's last location.
func dumpLocation(c *Cmd) {
	c.printf("Location Manager State:\n  gps provider:\n")
	if h, ok := c.hardware(); ok {
		if lat, lon, ok := h.Location(); ok {
			c.printf("    last location=Location[gps %s,%s hAcc=5.0 et=+1s mock]\n", strconv.FormatFloat(lat, 'f', -1, 64), strconv.FormatFloat(lon, 'f', -1, 64))
			return
		}
	}
	c.printf("    last location=null\n")
}

// cmdAlarm is `cmd alarm set-timezone NAME`, which sets
// persist.sys.timezone.
func cmdAlarm(_ context.Context, c *Cmd) int {
	a := c.Args[1:]
	if len(a) != 2 || a[0] != "set-timezone" {
		c.printf("Alarm manager service (alarm) commands:\n  set-timezone TZ\n")
		return 255
	}
	if !validZone(a[1]) {
		return c.fail(255, "Error: %q is not a time zone id", a[1])
	}
	c.s.mu.Lock()
	c.s.setProps["persist.sys.timezone"] = a[1]
	c.s.mu.Unlock()
	if h, ok := c.hardware(); ok {
		h.SetProp("persist.sys.timezone", a[1])
	}
	return 0
}

func validZone(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/_+-", r)) {
			return false
		}
	}
	return true
}
