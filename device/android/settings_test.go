package android_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/sim/lab"
	"github.com/google/go-cmp/cmp"
)

// TestSettings sets each typed setting through its action on a simulated
// phone driven by Debian's adb server, and checks the answer (read back
// through adb by the driver), the phone itself, and the screen where the
// setting shows.
func TestSettings(t *testing.T) {
	dev := startLab(t)
	d := openServer(t, dev, nil)
	tests := []struct {
		action string
		params string
		want   device.Setting
		// shows checks the phone (and its screen) after the setting.
		shows func(t *testing.T)
	}{
		{"SetAppearance", `{"appearance":"dark"}`, device.Appearance{Dark: true}, func(t *testing.T) {
			if !dev.Phone.NightMode() {
				t.Error("the phone is not in night mode")
			}
		}},
		{"SetLocale", `{"locale":"de-DE"}`, device.Locale{Tag: "de-DE"}, nil},
		{"SetFontScale", `{"scale":1.3}`, device.FontScale{Scale: 1.3}, nil},
		{"SetRotation", `{"rotation":"landscape"}`, device.Rotation{Quarter: 1}, func(t *testing.T) {
			if r := screenshot(t, d).Bounds(); r.Dx() <= r.Dy() {
				t.Errorf("the screenshot after landscape is %v; want it wider than high", r.Size())
			}
		}},
		{"SetRotation", `{"rotation":"portrait"}`, device.Rotation{Quarter: 0}, nil},
		{"SetLocation", `{"lat":52.52,"lon":13.405}`, device.Location{Lat: 52.52, Lon: 13.405}, func(t *testing.T) {
			if lat, lon, ok := dev.Phone.Location(); !ok || lat != 52.52 || lon != 13.405 {
				t.Errorf("phone location = %v,%v (%v)", lat, lon, ok)
			}
		}},
		{"SetWiFi", `{"on":false}`, device.Radio{Radio: device.WiFi}, func(t *testing.T) {
			if src := phoneDump(t, dev); strings.Contains(src, "wifi_signal") {
				t.Error("the status bar still shows Wi-Fi")
			}
		}},
		{"SetWiFi", `{"on":true}`, device.Radio{Radio: device.WiFi, On: true}, nil},
		{"SetMobileData", `{"on":false}`, device.Radio{Radio: device.MobileData}, nil},
		{"SetAirplaneMode", `{"on":true}`, device.Radio{Radio: device.Airplane, On: true}, nil},
		{"SetAirplaneMode", `{"on":false}`, device.Radio{Radio: device.Airplane}, nil},
		{"SetAnimations", `{"on":false}`, device.Animations{}, nil},
		{"SetTimeZone", `{"timeZone":"Asia/Tokyo"}`, device.TimeZone{Name: "Asia/Tokyo"}, nil},
		{"SetBattery", `{"level":15}`, device.Battery{Level: 15}, func(t *testing.T) {
			if src := phoneDump(t, dev); !strings.Contains(src, "Battery 15 percent.") {
				t.Error("the status bar does not show 15 percent")
			}
		}},
		{"SetBattery", `{"level":80,"charging":true}`, device.Battery{Level: 80, Charging: true}, nil},
	}
	space := action.ForPlatform(device.Android)
	for _, tt := range tests {
		t.Run(tt.action+tt.params, func(t *testing.T) {
			env := &action.Env{Driver: d}
			if err := space.Run(ctx(t), env, tt.action, json.RawMessage(tt.params)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, env.Answer); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
			if tt.shows != nil {
				tt.shows(t)
			}
		})
	}
}

// TestDarkModeDarkensTheScreen: the screenshot's mean luminance drops in
// dark mode, and the Settings app speaks German in de-DE.
func TestDarkModeAndLocaleShow(t *testing.T) {
	dev := startLab(t)
	d := openServer(t, dev, nil)
	if err := d.LaunchApp(ctx(t), "com.android.settings"); err != nil {
		t.Fatal(err)
	}
	light := luminance(t, d)
	if _, err := d.Configure(ctx(t), device.Appearance{Dark: true}); err != nil {
		t.Fatal(err)
	}
	if dark := luminance(t, d); dark > light/2 {
		t.Errorf("mean luminance %.0f in dark mode, %.0f in light; want less than half", dark, light)
	}
	if src := source(t, d); !strings.Contains(src, `text="Settings"`) {
		t.Fatalf("no Settings title before the locale changes:\n%s", src)
	}
	for _, tt := range []struct{ tag, title string }{{"de-DE", "Einstellungen"}, {"fr-FR", "Paramètres"}, {"en-US", "Settings"}} {
		if _, err := d.Configure(ctx(t), device.Locale{Tag: tt.tag}); err != nil {
			t.Fatal(err)
		}
		if src := source(t, d); !strings.Contains(src, `text="`+tt.title+`"`) {
			t.Errorf("locale %s: the title is not %q", tt.tag, tt.title)
		}
	}
}

// TestSettingsRefuseBadValues: values the device commands would not take
// are refused before anything reaches the shell.
func TestSettingsRefuseBadValues(t *testing.T) {
	d := openDirect(t, startLab(t), nil)
	for _, s := range []device.Setting{
		device.Locale{Tag: "de; reboot"}, device.TimeZone{Name: "../../etc/passwd"}, device.FontScale{Scale: 9},
		device.Location{Lat: 100}, device.Battery{Level: -1}, device.Rotation{Quarter: 4}, device.Radio{Radio: "nfc"},
	} {
		if got, err := d.Configure(ctx(t), s); err == nil {
			t.Errorf("Configure(%#v) = %#v; want an error", s, got)
		}
	}
}

func source(t *testing.T, d device.Driver) string {
	t.Helper()
	src, err := d.Source(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	return string(src.Data)
}

// phoneDump is the whole screen's UI dump, system bars included.
func phoneDump(t *testing.T, dev *lab.Device) string {
	t.Helper()
	b, err := dev.Phone.DumpUI()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func screenshot(t *testing.T, d device.Driver) image.Image {
	t.Helper()
	b, err := d.Screenshot(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// luminance is the screenshot's mean luminance, 0–255.
func luminance(t *testing.T, d device.Driver) float64 {
	t.Helper()
	img := screenshot(t, d)
	r := img.Bounds()
	var sum float64
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y += 8 {
		for x := r.Min.X; x < r.Max.X; x += 8 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			sum += (0.299*float64(cr) + 0.587*float64(cg) + 0.114*float64(cb)) / 257
			n++
		}
	}
	return sum / float64(n)
}
