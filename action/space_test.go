package action_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/action/actiontest"
	"github.com/apexagent/apex/device"
	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// ShakeParams and Shake exist only in this file: the one-place rule says
// declaring them is all it takes to reach the schema list, the model text and
// the locator scan.
type ShakeParams struct {
	Times  int             `json:"times" jsonschema:"how many shakes" minimum:"1" maximum:"5"`
	Axis   string          `json:"axis,omitempty" jsonschema:"which way to shake" enum:"x,y" default:"x"`
	Near   *action.Locator `json:"near,omitempty" jsonschema:"an element to shake the phone towards"`
	Secret string          `json:"-"`
}

var Shake = action.Define("Shake", "Shake the phone, e.g. to undo or report a bug.",
	func(ctx context.Context, env *action.Env, p *ShakeParams) error {
		for range p.Times {
			if err := env.Driver.PressKey(ctx, device.KeyMenu); err != nil {
				return err
			}
		}
		return nil
	}).WithEffect(action.Cumulative)

func TestOnePlaceRule(t *testing.T) {
	base := action.ForPlatform(device.Android)
	space := base.With(Shake)

	t.Run("tool and schema list", func(t *testing.T) {
		var tool *action.Tool
		for _, tl := range space.Tools() {
			if tl.Name == "Shake" {
				tool = &tl
			}
		}
		if tool == nil {
			t.Fatalf("Tools() has no Shake: %v", space.Names())
		}
		var got map[string]any
		if err := json.Unmarshal(tool.InputSchema, &got); err != nil {
			t.Fatalf("Shake schema is not JSON: %v\n%s", err, tool.InputSchema)
		}
		want := map[string]any{
			"type": "object",
			"properties": map[string]any{
				"times": map[string]any{"type": "integer", "description": "how many shakes", "minimum": 1.0, "maximum": 5.0},
				"axis":  map[string]any{"type": "string", "description": "which way to shake", "enum": []any{"x", "y"}, "default": "x"},
				"near":  got["properties"].(map[string]any)["near"], // the shared locator schema, checked below
			},
			"required":             []any{"times"},
			"additionalProperties": false,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Shake schema (-want +got):\n%s", diff)
		}
		near := got["properties"].(map[string]any)["near"].(map[string]any)
		if diff := cmp.Diff([]any{"null", "string", "object"}, near["type"]); diff != "" {
			t.Errorf("near's type (-want +got):\n%s", diff)
		}
		if !strings.HasPrefix(near["description"].(string), "an element to shake the phone towards. An element on screen") {
			t.Errorf("near's description = %q", near["description"])
		}
		if tool.Description != Shake.Description() {
			t.Errorf("tool description %q; want %q", tool.Description, Shake.Description())
		}
	})

	t.Run("model description", func(t *testing.T) {
		d := space.Describe()
		for _, line := range []string{
			`Shake(times: integer 1..5, axis?: "x"|"y" = "x", near?: locator) — Shake the phone, e.g. to undo or report a bug.`,
			"    times: how many shakes",
		} {
			if !strings.Contains(d, line+"\n") {
				t.Errorf("Describe() lacks %q:\n%s", line, d)
			}
		}
		if strings.Contains(base.Describe(), "Shake") {
			t.Error("the base space mentions Shake: With must not change it")
		}
	})

	t.Run("locator scan", func(t *testing.T) {
		a, ok := space.Lookup("shake")
		if !ok {
			t.Fatal("Lookup(shake) failed")
		}
		if diff := cmp.Diff([]string{"near"}, a.LocatorFields()); diff != "" {
			t.Errorf("LocatorFields (-want +got):\n%s", diff)
		}
	})

	t.Run("validation and run", func(t *testing.T) {
		_, err := Shake.Decode(json.RawMessage(`{"times": 9, "Secret": "x"}`))
		want := `Shake: invalid params: Secret: unknown param: known params are times, axis, near; times: must be at most 5; got 9`
		if err == nil || err.Error() != want {
			t.Errorf("Decode error = %v; want %s", err, want)
		}
		d := actiontest.NewDriver()
		r := &actiontest.Resolver{Targets: map[string]action.Target{"logo": {Point: device.Point{X: 1, Y: 2}}}}
		if err := Shake.Run(context.Background(), &action.Env{Driver: d, Resolver: r}, json.RawMessage(`{"times": 2, "near": "logo"}`)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff("PressKey(menu)\nPressKey(menu)\n", d.Trace()); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
		if r.Lookups() != 1 {
			t.Errorf("resolver called %d times; want 1 (for near)", r.Lookups())
		}
	})

	t.Run("replacing a built-in keeps its place", func(t *testing.T) {
		tap2 := action.Define("tap", "My tap.", func(context.Context, *action.Env, *action.TapParams) error { return nil })
		s := base.With(tap2)
		if diff := cmp.Diff(base.Names()[1:], s.Names()[1:]); diff != "" || s.Names()[0] != "tap" {
			t.Errorf("Names after replacing Tap = %v", s.Names())
		}
	})
}

// TestSchemasAcceptTheirExamples checks every built-in schema is a valid
// JSON Schema that accepts params the decoder accepts, and rejects some it
// refuses, using an independent validator.
func TestSchemasAcceptTheirExamples(t *testing.T) {
	examples := map[string][]string{
		"Tap":             {`{"locate":"OK"}`, `{"locate":{"text":"OK","index":1}}`},
		"DoubleTap":       {`{"locate":"photo"}`},
		"LongPress":       {`{"locate":"photo","duration":1500}`},
		"Input":           {`{"value":"hello","locate":"search box","mode":"append"}`, `{"value":""}`},
		"ClearInput":      {`{}`, `{"locate":null}`},
		"Scroll":          {`{"direction":"up","distance":"half"}`, `{"distance":400,"untilVisible":{"text":"Settings"}}`},
		"Swipe":           {`{"start":{"x":1,"y":2},"to":"trash"}`},
		"DragAndDrop":     {`{"from":"a","to":"b"}`},
		"KeyboardPress":   {`{"keyName":"enter"}`},
		"Launch":          {`{"app":"com.apex.shop"}`},
		"Terminate":       {`{"app":"com.apex.shop"}`},
		"Sleep":           {`{"ms":0}`},
		"Back":            {`{}`},
		"Home":            {`{}`},
		"RecentApps":      {`{}`},
		"PullGesture":     {`{"direction":"down"}`},
		"AppSwitcher":     {`{}`},
		"SetAppearance":   {`{"appearance":"dark"}`},
		"SetLocale":       {`{"locale":"de-DE"}`},
		"SetFontScale":    {`{"scale":1.3}`},
		"SetRotation":     {`{"rotation":"landscape"}`},
		"SetLocation":     {`{"lat":52.52,"lon":13.405}`},
		"SetWiFi":         {`{"on":false}`},
		"SetMobileData":   {`{"on":true}`},
		"SetAirplaneMode": {`{"on":true}`},
		"SetAnimations":   {`{"on":false}`},
		"SetTimeZone":     {`{"timeZone":"Europe/Berlin"}`},
		"SetBattery":      {`{"level":15,"charging":true}`},
		"Pinch":           {`{"direction":"out"}`, `{"locate":"the map","direction":"in","distance":200,"duration":800}`},
	}
	rejects := []struct{ action, raw string }{
		{"Tap", `{}`}, {"Tap", `{"locate":5}`}, {"Tap", `{"locate":{"txt":"a"}}`}, {"Tap", `{"locate":""}`},
		{"Sleep", `{"ms":-1}`}, {"Sleep", `{"ms":1.5}`}, {"Scroll", `{"distance":"far"}`}, {"Scroll", `{"distance":0}`},
		{"Input", `{"value":"x","mode":"wipe"}`}, {"Back", `{"x":1}`},
		{"SetAppearance", `{"appearance":"dim"}`}, {"SetFontScale", `{"scale":3}`}, {"SetLocation", `{"lat":91,"lon":0}`},
		{"SetBattery", `{"level":101}`}, {"SetWiFi", `{}`},
		{"Pinch", `{"direction":"wide"}`}, {"Pinch", `{}`},
	}
	spaces := action.ForPlatform(device.Android).With(action.ForPlatform(device.IOS).Actions()...)
	resolved := map[string]*jsonschema.Resolved{}
	for _, a := range spaces.Actions() {
		var s jsonschema.Schema
		if err := json.Unmarshal(a.SchemaJSON(), &s); err != nil {
			t.Fatalf("%s: schema JSON: %v", a.Name(), err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: schema does not resolve: %v\n%s", a.Name(), err, a.SchemaJSON())
		}
		resolved[a.Name()] = rs
		if len(examples[a.Name()]) == 0 {
			t.Errorf("%s has no example here", a.Name())
		}
	}
	for name, raws := range examples {
		a := lookup(t, spaces, name)
		for _, raw := range raws {
			if _, err := a.Decode(json.RawMessage(raw)); err != nil {
				t.Errorf("%s.Decode(%s): %v", name, raw, err)
			}
			var v any
			_ = json.Unmarshal([]byte(raw), &v)
			if err := resolved[name].Validate(v); err != nil {
				t.Errorf("%s schema rejects %s: %v", name, raw, err)
			}
		}
	}
	for _, r := range rejects {
		var v any
		_ = json.Unmarshal([]byte(r.raw), &v)
		if err := resolved[r.action].Validate(v); err == nil {
			t.Errorf("%s schema accepts %s; want it rejected", r.action, r.raw)
		}
		if _, err := lookup(t, spaces, r.action).Decode(json.RawMessage(r.raw)); err == nil {
			t.Errorf("%s.Decode accepts %s; want it rejected", r.action, r.raw)
		}
	}
}

func TestDescribe(t *testing.T) {
	d := action.ForPlatform(device.IOS).Describe()
	for _, want := range []string{
		"Actions on this ios device.",
		"Tap(locate: locator) — Tap an element once.\n    locate: the element to tap\n",
		`Input(value: string, locate?: locator, mode?: "replace"|"append"|"clear" = "replace")`,
		"Swipe(from?: locator, to?: locator, start?: {x: integer, y: integer}, end?: {x: integer, y: integer}, duration?: integer 10..10000 = 300)",
		"AppSwitcher() — Open the iOS app switcher.",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("Describe() lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "PullGesture") || strings.Contains(d, "RecentApps") {
		t.Errorf("iOS description mentions Android actions:\n%s", d)
	}
}

// Brief lists every action in one line, without the lines per param; the
// device settings share one line of signatures.
func TestBrief(t *testing.T) {
	s := action.ForPlatform(device.Android)
	b := s.Brief()
	for _, a := range s.Actions() {
		if a.IsSetting() {
			if !strings.Contains(b, a.Signature()) || strings.Contains(b, a.ModelText()) {
				t.Errorf("Brief() lacks the setting %q, or spends its description", a.Signature())
			}
			continue
		}
		if !strings.Contains(b, "\n"+a.ModelText()+"\n") {
			t.Errorf("Brief() lacks %q", a.ModelText())
		}
	}
	if strings.Contains(b, "    locate: ") || len(b) >= len(s.Describe()) {
		t.Errorf("Brief() carries the params' lines:\n%s", b)
	}
}

func TestSpaceFindAndRun(t *testing.T) {
	ios := action.ForPlatform(device.IOS)
	_, err := ios.Find("RecentApps")
	want := `unknown action "RecentApps" on this ios device: use one of Tap, DoubleTap, LongPress, Input, ClearInput, Scroll, Swipe, DragAndDrop, Pinch, KeyboardPress, Launch, Terminate, Sleep, Back, Home, AppSwitcher, SetAppearance, SetLocale, SetFontScale, SetRotation, SetLocation, SetWiFi, SetMobileData, SetAirplaneMode, SetAnimations, SetTimeZone, SetBattery`
	if !errors.Is(err, action.ErrUnknownAction) || err.Error() != want {
		t.Errorf("Find(RecentApps) on iOS = %v; want %s", err, want)
	}
	d := actiontest.NewDriver()
	if err := ios.Run(context.Background(), &action.Env{Driver: d}, "launch", json.RawMessage(`{"app":"com.apple.Preferences"}`)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("LaunchApp(com.apple.Preferences)\n", d.Trace()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if err := ios.Run(context.Background(), &action.Env{Driver: d}, "Fly", nil); !errors.Is(err, action.ErrUnknownAction) {
		t.Errorf("Run(Fly) = %v; want ErrUnknownAction", err)
	}
}
