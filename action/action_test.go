package action_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var ignoreTarget = cmpopts.IgnoreUnexported(action.Locator{})

func lookup(t *testing.T, s *action.Space, name string) *action.Action {
	t.Helper()
	a, ok := s.Lookup(name)
	if !ok {
		t.Fatalf("Lookup(%q) in %s space: not found; have %v", name, s.Platform(), s.Names())
	}
	return a
}

func TestLocatorFields(t *testing.T) {
	android := action.ForPlatform(device.Android)
	tests := []struct {
		action string
		want   []string
	}{
		{"Tap", []string{"locate"}},
		{"DoubleTap", []string{"locate"}},
		{"LongPress", []string{"locate"}},
		{"Input", []string{"locate"}},
		{"ClearInput", []string{"locate"}},
		{"Scroll", []string{"locate", "untilVisible"}},
		{"Swipe", []string{"from", "to"}},
		{"DragAndDrop", []string{"from", "to"}},
		{"KeyboardPress", []string{"locate"}},
		{"Launch", []string{}},
		{"Sleep", []string{}},
		{"Back", []string{}},
		{"Home", []string{}},
		{"PullGesture", []string{"locate"}},
	}
	for _, tt := range tests {
		t.Run(tt.action, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, lookup(t, android, tt.action).LocatorFields()); diff != "" {
				t.Errorf("LocatorFields() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLocatorsDetail(t *testing.T) {
	want := []action.LocatorField{{Name: "locate", Optional: true}, {Name: "untilVisible", Optional: true, Deferred: true}}
	if diff := cmp.Diff(want, action.Scroll.Locators()); diff != "" {
		t.Errorf("Scroll.Locators() (-want +got):\n%s", diff)
	}
	want = []action.LocatorField{{Name: "from"}, {Name: "to"}}
	if diff := cmp.Diff(want, action.DragAndDrop.Locators()); diff != "" {
		t.Errorf("DragAndDrop.Locators() (-want +got):\n%s", diff)
	}
	want = []action.LocatorField{{Name: "locate", Optional: true, Focused: true}}
	if diff := cmp.Diff(want, action.ClearInput.Locators()); diff != "" {
		t.Errorf("ClearInput.Locators() (-want +got):\n%s", diff)
	}
}

// TestDecodeErrors checks that bad params are refused with every problem
// named by its field, and that the error matches ErrInvalidParams.
func TestDecodeErrors(t *testing.T) {
	android := action.ForPlatform(device.Android)
	tests := []struct {
		name, action, raw string
		want              []*action.FieldError
	}{
		{"wrong type: number for locator", "Tap", `{"locate": 5}`,
			[]*action.FieldError{{Field: "locate", Message: "expected a string or an object {prompt,text,id,desc,type,index,x,y}, got number 5"}}},
		{"wrong type: string for integer", "Sleep", `{"ms": "500"}`,
			[]*action.FieldError{{Field: "ms", Message: `expected integer, got string "500"`}}},
		{"wrong type: fraction for integer", "Sleep", `{"ms": 1.5}`,
			[]*action.FieldError{{Field: "ms", Message: "expected integer, got 1.5"}}},
		{"wrong type: number for string", "Input", `{"value": 42}`,
			[]*action.FieldError{{Field: "value", Message: "expected string, got number 42"}}},
		{"wrong type: nested point field", "Swipe", `{"start": {"x": "1", "y": 2}, "to": "OK"}`,
			[]*action.FieldError{{Field: "start.x", Message: `expected integer, got string "1"`}}},
		{"wrong type: null for required", "Input", `{"value": null}`,
			[]*action.FieldError{{Field: "value", Message: "expected string, got null"}}},
		{"missing required", "Tap", `{}`,
			[]*action.FieldError{{Field: "locate", Message: "is required (locator)"}}},
		{"missing required, empty input", "DragAndDrop", ``,
			[]*action.FieldError{{Field: "from", Message: "is required (locator)"}, {Field: "to", Message: "is required (locator)"}}},
		{"missing required in nested object", "Swipe", `{"start": {"x": 1}, "to": "OK"}`,
			[]*action.FieldError{{Field: "start.y", Message: "is required (integer)"}}},
		{"unknown field", "Tap", `{"locate": "OK", "speed": 3}`,
			[]*action.FieldError{{Field: "speed", Message: "unknown param: known params are locate"}}},
		{"unknown field, case differs", "KeyboardPress", `{"keyname": "enter"}`,
			[]*action.FieldError{{Field: "keyname", Message: "unknown param: known params are keyName, locate"}, {Field: "keyName", Message: "is required (string)"}}},
		{"unknown field in a locator", "Tap", `{"locate": {"txt": "OK"}}`,
			[]*action.FieldError{{Field: "locate.txt", Message: "unknown field: known fields are prompt, text, id, desc, type, index, x, y"}}},
		{"unknown field on an action without params", "Back", `{"times": 2}`,
			[]*action.FieldError{{Field: "times", Message: "unknown param: there are none to give"}}},
		{"enum", "Scroll", `{"direction": "sideways"}`,
			[]*action.FieldError{{Field: "direction", Message: `must be one of "down", "up", "left", "right"; got "sideways"`}}},
		{"enum is case-sensitive, like the schema", "Input", `{"value": "x", "mode": "Append"}`,
			[]*action.FieldError{{Field: "mode", Message: `must be one of "replace", "append", "clear"; got "Append"`}}},
		{"below minimum", "Sleep", `{"ms": -1}`,
			[]*action.FieldError{{Field: "ms", Message: "must be at least 0; got -1"}}},
		{"above maximum", "LongPress", `{"locate": "x", "duration": 99999}`,
			[]*action.FieldError{{Field: "duration", Message: "must be at most 10000; got 99999"}}},
		{"negative locator index", "Tap", `{"locate": {"text": "OK", "index": -1}}`,
			[]*action.FieldError{{Field: "locate.index", Message: "must be at least 0; got -1"}}},
		{"empty locator string", "Tap", `{"locate": "  "}`,
			[]*action.FieldError{{Field: "locate", Message: `is empty: describe the element, e.g. "Login button"`}}},
		{"locator with only an index", "Tap", `{"locate": {"index": 2}}`,
			[]*action.FieldError{{Field: "locate", Message: "says nothing to find: give prompt, text, id, desc, type, or x and y"}}},
		{"point without y", "Tap", `{"locate": {"x": 3}}`,
			[]*action.FieldError{{Field: "locate", Message: "a point needs both x and y (device pixels)"}}},
		{"bad distance", "Scroll", `{"distance": "far"}`,
			[]*action.FieldError{{Field: "distance", Message: `expected pixels (an integer ≥ 1), "screen" or "half", got "far"`}}},
		{"not an object", "Tap", `["OK"]`,
			[]*action.FieldError{{Message: "expected an object, got array"}}},
		{"broken JSON", "Tap", `{"locate": "OK"`,
			[]*action.FieldError{{Message: "params are not valid JSON: unexpected end of JSON input (at byte 15)"}}},
		{"Validate: unknown key", "KeyboardPress", `{"keyName": "warp"}`,
			[]*action.FieldError{{Field: "keyName", Message: `unknown key "warp": use one of app_switch, back, delete, down, enter, escape, home, left, menu, power, recents, right, search, space, tab, up, volume_down, volume_up`}}},
		{"Validate: both ends twice", "Swipe", `{"from": "a", "start": {"x": 1, "y": 1}}`,
			[]*action.FieldError{
				{Field: "from", Message: "give either from (an element) or start (a point), not both or neither"},
				{Field: "to", Message: "give either to (an element) or end (a point), not both or neither"},
			}},
		{"Validate: empty app", "Launch", `{"app": ""}`,
			[]*action.FieldError{{Field: "app", Message: "is empty: give a package name or bundle id, e.g. com.apex.shop"}}},
		{"every problem at once, unknown first", "Input", `{"mode": "wipe", "valu": "x", "locate": []}`,
			[]*action.FieldError{
				{Field: "valu", Message: "unknown param: known params are value, locate, mode"},
				{Field: "value", Message: "is required (string)"},
				{Field: "locate", Message: "expected a string or an object {prompt,text,id,desc,type,index,x,y}, got array"},
				{Field: "mode", Message: `must be one of "replace", "append", "clear"; got "wipe"`},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := lookup(t, android, tt.action)
			p, err := a.Decode(json.RawMessage(tt.raw))
			if err == nil {
				t.Fatalf("Decode(%s) = %+v, nil; want an error", tt.raw, p)
			}
			if !errors.Is(err, action.ErrInvalidParams) {
				t.Errorf("errors.Is(%v, ErrInvalidParams) = false", err)
			}
			var ve *action.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Decode error %T is not a *ValidationError: %v", err, err)
			}
			if ve.Action != a.Name() {
				t.Errorf("ValidationError.Action = %q; want %q", ve.Action, a.Name())
			}
			if diff := cmp.Diff(tt.want, ve.Fields); diff != "" {
				t.Errorf("Decode(%s) field errors (-want +got):\n%s", tt.raw, diff)
			}
			for _, f := range tt.want {
				if f.Field != "" && !strings.Contains(err.Error(), f.Field+": ") {
					t.Errorf("message %q does not name field %q", err, f.Field)
				}
			}
		})
	}
}

func TestDecodeValues(t *testing.T) {
	tests := []struct {
		name string
		a    *action.Action
		raw  string
		want any
	}{
		{"locator as a string", action.Tap, `{"locate": "the Login button"}`,
			&action.TapParams{Locate: action.Locator{Prompt: "the Login button"}}},
		{"locator as an object", action.Tap, `{"locate": {"text": "OK", "type": "button", "index": 1}}`,
			&action.TapParams{Locate: action.Locator{Text: "OK", Type: "button", Index: 1}}},
		{"defaults fill absent fields", action.Input, `{"value": "hi"}`,
			&action.InputParams{Value: "hi", Mode: "replace"}},
		{"null optional is absent", action.Input, `{"value": "hi", "locate": null, "mode": "append"}`,
			&action.InputParams{Value: "hi", Mode: "append"}},
		{"integer written as 2.0", action.Sleep, `{"ms": 2.0}`, &action.SleepParams{Ms: 2}},
		{"integer written as 1e3", action.Sleep, `{"ms": 1e3}`, &action.SleepParams{Ms: 1000}},
		{"distance in pixels", action.Scroll, `{"distance": 300, "direction": "up"}`,
			&action.ScrollParams{Direction: "up", Distance: action.Distance{Pixels: 300}, MaxScrolls: 10}},
		{"distance named", action.Scroll, `{"distance": "half"}`,
			&action.ScrollParams{Direction: "down", Distance: action.Half, MaxScrolls: 10}},
		{"swipe by points", action.Swipe, `{"start": {"x": 1, "y": 2}, "end": {"x": 3, "y": 4}}`,
			&action.SwipeParams{Start: &device.Point{X: 1, Y: 2}, End: &device.Point{X: 3, Y: 4}, Duration: 300}},
		{"no params: empty input", action.Back, ``, &struct{}{}},
		{"no params: null", action.Back, `null`, &struct{}{}},
		{"no params: empty object", action.Home, ` {} `, &struct{}{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.a.Decode(json.RawMessage(tt.raw))
			if err != nil {
				t.Fatalf("Decode(%s): %v", tt.raw, err)
			}
			if diff := cmp.Diff(tt.want, got, ignoreTarget); diff != "" {
				t.Errorf("Decode(%s) (-want +got):\n%s", tt.raw, diff)
			}
		})
	}
}

func TestLocatorJSONRoundTrip(t *testing.T) {
	for _, raw := range []string{`"Login"`, `{"text":"OK","index":2}`, `{"prompt":"cart","id":"e7"}`, `{"prompt":"cart","index":0}`, `{"x":0,"y":12}`, `{"text":"OK","x":5,"y":6}`} {
		var l action.Locator
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("Unmarshal(%s): %v", raw, err)
		}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatalf("Marshal(%+v): %v", l, err)
		}
		if string(b) != raw {
			t.Errorf("round trip of %s gave %s", raw, b)
		}
	}
}

func TestLocatorEqual(t *testing.T) {
	decode := func(raw string) action.Locator {
		var l action.Locator
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("Unmarshal(%s): %v", raw, err)
		}
		return l
	}
	tests := []struct {
		name string
		a, b action.Locator
		want bool
	}{
		{"decoded and built", decode(`{"text":"OK","index":0}`), action.Locator{Text: "OK"}.WithIndex(0), true},
		{"index 0 given or not", decode(`{"text":"OK","index":0}`), action.Locator{Text: "OK"}, false},
		{"same point", decode(`{"x":1,"y":2}`), action.Locator{Point: &device.Point{X: 1, Y: 2}}, true},
		{"other point", decode(`{"x":1,"y":2}`), action.Locator{Point: &device.Point{X: 2, Y: 1}}, false},
		{"other field", action.Locator{Prompt: "OK"}, action.Locator{Text: "OK"}, false},
	}
	for _, tt := range tests {
		if got := tt.a.Equal(tt.b); got != tt.want {
			t.Errorf("%s: Equal = %v, want %v", tt.name, got, tt.want)
		}
		if got := cmp.Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: cmp.Equal = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestLookupIgnoresCaseAndSeparators(t *testing.T) {
	android := action.ForPlatform(device.Android)
	for in, want := range map[string]string{
		"tap": "Tap", "TAP": "Tap", "double_tap": "DoubleTap", "Keyboard Press": "KeyboardPress",
		"drag-and-drop": "DragAndDrop", "back": "Back", "recentapps": "RecentApps", " sleep ": "Sleep",
		"AndroidBackButton": "Back", "androidhomebutton": "Home", "AndroidRecentAppsButton": "RecentApps",
		"AndroidPull": "PullGesture", "AndroidLongPress": "LongPress",
	} {
		if a, ok := android.Lookup(in); !ok || a.Name() != want {
			t.Errorf("Lookup(%q) = %v, %v; want %s", in, a, ok, want)
		}
	}
	for _, tt := range []struct {
		space *action.Space
		name  string
	}{
		{action.Common(), "Back"},
		{action.ForPlatform(device.IOS), "RecentApps"},
		{action.ForPlatform(device.IOS), "PullGesture"},
		{action.ForPlatform(device.Android), "AppSwitcher"},
		{action.ForPlatform(device.Android), "Fly"},
		{action.ForPlatform(device.Android), "IOSAppSwitcher"},
		{action.Common(), "AndroidPull"},
	} {
		if _, ok := tt.space.Lookup(tt.name); ok {
			t.Errorf("%s space has %s; want it absent", tt.space.Platform(), tt.name)
		}
	}
}

func TestSpaces(t *testing.T) {
	common := []string{"Tap", "DoubleTap", "LongPress", "Input", "ClearInput", "Scroll", "Swipe", "DragAndDrop", "Pinch", "KeyboardPress", "Launch", "Terminate", "Sleep"}
	settings := []string{"SetAppearance", "SetLocale", "SetFontScale", "SetRotation", "SetLocation", "SetWiFi", "SetMobileData",
		"SetAirplaneMode", "SetAnimations", "SetTimeZone", "SetBattery"}
	tests := []struct {
		p    device.Platform
		want []string
	}{
		{"", common},
		{device.Android, append(append(append([]string{}, common...), "Back", "Home", "RecentApps", "PullGesture"), settings...)},
		{device.IOS, append(append(append([]string{}, common...), "Back", "Home", "AppSwitcher"), settings...)},
	}
	for _, tt := range tests {
		t.Run(string(tt.p), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, action.ForPlatform(tt.p).Names()); diff != "" {
				t.Errorf("ForPlatform(%q).Names() (-want +got):\n%s", tt.p, diff)
			}
		})
	}
}

func TestDefineRefusesBrokenDeclarations(t *testing.T) {
	tests := []struct {
		name string
		def  func()
	}{
		{"name a tool API would refuse", func() {
			action.Define("X Y", "", func(context.Context, *action.Env, *struct{}) error { return nil })
		}},
		{"params not a struct", func() {
			action.Define("X", "", func(context.Context, *action.Env, *int) error { return nil })
		}},
		{"locator nested below the top", func() {
			type inner struct {
				L action.Locator `json:"l"`
			}
			action.Define("X", "", func(context.Context, *action.Env, *struct {
				In inner `json:"in"`
			}) error {
				return nil
			})
		}},
		{"locators in a slice", func() {
			action.Define("X", "", func(context.Context, *action.Env, *struct {
				Ls []action.Locator `json:"ls"`
			}) error {
				return nil
			})
		}},
		{"enum on an integer", func() {
			action.Define("X", "", func(context.Context, *action.Env, *struct {
				N int `json:"n" enum:"1,2"`
			}) error {
				return nil
			})
		}},
		{"default outside its enum", func() {
			action.Define("X", "", func(context.Context, *action.Env, *struct {
				S string `json:"s,omitempty" enum:"a,b" default:"c"`
			}) error {
				return nil
			})
		}},
		{"default on a required field", func() {
			action.Define("X", "", func(context.Context, *action.Env, *struct {
				S string `json:"s" default:"c"`
			}) error {
				return nil
			})
		}},
		{"focused on a required locator", func() {
			action.Define("X", "", func(context.Context, *action.Env, *struct {
				L action.Locator `json:"l" locator:"focused"`
			}) error {
				return nil
			})
		}},
		{"deferred on a non-locator", func() {
			action.Define("X", "", func(context.Context, *action.Env, *struct {
				S string `json:"s" locator:"deferred"`
			}) error {
				return nil
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil {
					t.Error("Define did not panic")
				} else if !strings.Contains(r.(string), `action.Define("X`) {
					t.Errorf("panic %q does not name the action", r)
				}
			}()
			tt.def()
		})
	}
}

func TestLocatorHasIndex(t *testing.T) {
	for raw, want := range map[string]bool{
		`"OK"`: false, `{"text":"OK"}`: false, `{"text":"OK","index":0}`: true, `{"text":"OK","index":3}`: true,
	} {
		var l action.Locator
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("Unmarshal(%s): %v", raw, err)
		}
		if l.HasIndex() != want {
			t.Errorf("%s: HasIndex() = %v; want %v", raw, l.HasIndex(), want)
		}
	}
	if !(action.Locator{Text: "OK"}).WithIndex(0).HasIndex() {
		t.Error("WithIndex(0) does not count as an index")
	}
	if !(action.Locator{Text: "OK", Index: 1}).HasIndex() || (action.Locator{Text: "OK"}).HasIndex() {
		t.Error("HasIndex of Go-built locators should follow Index > 0")
	}
	if got := (action.Locator{Prompt: "cart", Index: 2}).String(); got != `{prompt="cart" index=2}` {
		t.Errorf("String() = %s", got)
	}
}
