package ios

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/apexagent/apex/device"
)

var _ device.Configurator = (*Driver)(nil)

// orientations are WebDriverAgent's interface orientations by quarter turn.
var orientations = []string{"PORTRAIT", "LANDSCAPE", "UIA_DEVICE_ORIENTATION_PORTRAIT_UPSIDEDOWN", "UIA_DEVICE_ORIENTATION_LANDSCAPERIGHT"}

// Configure applies the settings WebDriverAgent can change (appearance,
// simulated location, rotation) and reads each back; the others are
// refused with what to do instead.
func (d *Driver) Configure(ctx context.Context, s device.Setting) (device.Setting, error) {
	var set func(ctx context.Context) error
	var read func(ctx context.Context) (device.Setting, error)
	switch s := s.(type) {
	case device.Appearance:
		name := "light"
		if s.Dark {
			name = "dark"
		}
		set = d.post("/wda/device/appearance", map[string]string{"name": name})
		read = func(ctx context.Context) (device.Setting, error) {
			var info struct {
				Style string `json:"userInterfaceStyle"`
			}
			if err := d.getJSON(ctx, "/wda/device/info", &info); err != nil {
				return nil, err
			}
			if info.Style != "dark" && info.Style != "light" {
				return nil, fmt.Errorf("/wda/device/info reports userInterfaceStyle %q", info.Style)
			}
			return device.Appearance{Dark: info.Style == "dark"}, nil
		}
	case device.Location:
		if s.Lat < -90 || s.Lat > 90 || s.Lon < -180 || s.Lon > 180 {
			return nil, fmt.Errorf("ios %s: set location: %g,%g is not on Earth: latitude -90 to 90, longitude -180 to 180", d.id, s.Lat, s.Lon)
		}
		set = d.post("/wda/simulatedLocation", map[string]float64{"latitude": s.Lat, "longitude": s.Lon})
		read = func(ctx context.Context) (device.Setting, error) {
			var loc struct {
				Lat *float64 `json:"latitude"`
				Lon *float64 `json:"longitude"`
			}
			if err := d.getJSON(ctx, "/wda/simulatedLocation", &loc); err != nil {
				return nil, err
			}
			if loc.Lat == nil || loc.Lon == nil {
				return nil, fmt.Errorf("/wda/simulatedLocation reports no location")
			}
			return device.Location{Lat: *loc.Lat, Lon: *loc.Lon}, nil
		}
	case device.Rotation:
		if s.Quarter < 0 || s.Quarter > 3 {
			return nil, fmt.Errorf("ios %s: set rotation: %d: give 0, 1, 2 or 3 quarter turns", d.id, s.Quarter)
		}
		set = d.post("/orientation", map[string]string{"orientation": orientations[s.Quarter]})
		read = func(ctx context.Context) (device.Setting, error) {
			var o string
			if err := d.getJSON(ctx, "/orientation", &o); err != nil {
				return nil, err
			}
			q := slices.Index(orientations, o)
			if q < 0 {
				return nil, fmt.Errorf("/orientation reports %q", o)
			}
			return device.Rotation{Quarter: q}, nil
		}
	default:
		return nil, fmt.Errorf("ios %s: %w", d.id, device.Unsupported("iOS", s, refusal(s)))
	}
	var got device.Setting
	err := d.call(ctx, "set "+s.SettingName(), true, d.opts.Timeout, func(ctx context.Context) error {
		if err := set(ctx); err != nil {
			return err
		}
		var err error
		got, err = read(ctx)
		return err
	})
	return got, err
}

// refusal says why WebDriverAgent cannot change a setting, and where a
// person can.
func refusal(s device.Setting) string {
	switch s.(type) {
	case device.Locale:
		return "WebDriverAgent cannot change the system language; change it in Settings > General > Language & Region, or launch the app with -AppleLanguages"
	case device.TimeZone:
		return "WebDriverAgent cannot change the time zone; change it in Settings > General > Date & Time"
	case device.FontScale:
		return "WebDriverAgent cannot change the text size; change it in Settings > Display & Brightness > Text Size"
	case device.Radio:
		return "iOS lets no app (WebDriverAgent included) switch Wi-Fi, mobile data or airplane mode; use Control Center"
	case device.Animations:
		return "WebDriverAgent cannot turn animations off; turn on Settings > Accessibility > Motion > Reduce Motion"
	case device.Battery:
		return "iOS has no simulated battery; WebDriverAgent only reads the real one (/wda/batteryInfo)"
	}
	return "WebDriverAgent has no command for it"
}

func (d *Driver) post(path string, body any) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		_, err := d.c.Do(ctx, http.MethodPost, path, body)
		return err
	}
}

func (d *Driver) getJSON(ctx context.Context, path string, out any) error {
	r, err := d.c.Do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(r.Value, out); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}
