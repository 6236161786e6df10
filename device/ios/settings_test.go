package ios_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/google/go-cmp/cmp"
)

// TestSettings sets each typed setting through its action on a simulated
// iPhone over WebDriverAgent: the ones WDA can change answer with the value
// read back through WDA and change the phone; the others are refused with
// the reason and leave the phone as it was.
func TestSettings(t *testing.T) {
	dev := startLab(t)
	d := openLab(t, dev, nil)
	tests := []struct {
		action, params string
		want           device.Setting
		refused        string // part of the refusal; "" when it is set
		shows          func(t *testing.T)
	}{
		{action: "SetAppearance", params: `{"appearance":"dark"}`, want: device.Appearance{Dark: true}, shows: func(t *testing.T) {
			if !dev.Phone.NightMode() {
				t.Error("the phone is not in dark mode")
			}
		}},
		{action: "SetAppearance", params: `{"appearance":"light"}`, want: device.Appearance{}},
		{action: "SetLocation", params: `{"lat":48.8566,"lon":2.3522}`, want: device.Location{Lat: 48.8566, Lon: 2.3522}},
		{action: "SetRotation", params: `{"rotation":"landscape"}`, want: device.Rotation{Quarter: 1}, shows: func(t *testing.T) {
			if dev.Phone.Rotation() != 1 {
				t.Errorf("phone rotation %d; want 1", dev.Phone.Rotation())
			}
		}},
		{action: "SetRotation", params: `{"rotation":"portrait"}`, want: device.Rotation{}},
		{action: "SetLocale", params: `{"locale":"de-DE"}`, refused: "Language & Region"},
		{action: "SetTimeZone", params: `{"timeZone":"Asia/Tokyo"}`, refused: "Date & Time"},
		{action: "SetFontScale", params: `{"scale":1.3}`, refused: "Text Size"},
		{action: "SetWiFi", params: `{"on":false}`, refused: "Control Center"},
		{action: "SetMobileData", params: `{"on":false}`, refused: "Control Center"},
		{action: "SetAirplaneMode", params: `{"on":true}`, refused: "Control Center"},
		{action: "SetAnimations", params: `{"on":false}`, refused: "Reduce Motion"},
		{action: "SetBattery", params: `{"level":15}`, refused: "no simulated battery"},
	}
	space := action.ForPlatform(device.IOS)
	for _, tt := range tests {
		t.Run(tt.action+tt.params, func(t *testing.T) {
			env := &action.Env{Driver: d}
			err := space.Run(ctx(t), env, tt.action, json.RawMessage(tt.params))
			if tt.refused != "" {
				if !errors.Is(err, device.ErrUnsupported) || !strings.Contains(err.Error(), tt.refused) {
					t.Errorf("%s = %v; want it refused, saying %q", tt.action, err, tt.refused)
				}
				return
			}
			if err != nil {
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
	if level, _ := dev.Phone.Battery(); level != 100 {
		t.Errorf("a refused SetBattery changed the battery to %d", level)
	}
}
