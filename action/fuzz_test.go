package action_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// FuzzDecode feeds arbitrary JSON to every action's Decode. It must never
// panic; what it accepts the action's own JSON Schema must accept too (so
// the schema a model sees never promises less than validation demands), and
// what it accepts must survive a JSON round trip unchanged. What it refuses
// comes back as a ValidationError naming at least one problem.
func FuzzDecode(f *testing.F) {
	space := action.ForPlatform(device.Android).With(action.ForPlatform(device.IOS).Actions()...)
	actions := space.Actions()
	schemas := make([]*jsonschema.Resolved, len(actions))
	for i, a := range actions {
		var s jsonschema.Schema
		if err := json.Unmarshal(a.SchemaJSON(), &s); err != nil {
			f.Fatal(err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			f.Fatalf("%s: %v", a.Name(), err)
		}
		schemas[i] = rs
	}
	index := func(name string) uint8 {
		for i, a := range actions {
			if a.Name() == name {
				return uint8(i)
			}
		}
		f.Fatalf("no action %s", name)
		return 0
	}
	for _, seed := range []struct{ action, raw string }{
		{"Tap", `{"locate":"OK"}`},
		{"Tap", `{"locate":{"text":"OK","type":"button","index":2}}`},
		{"Tap", `{"locate":{"index":1}}`},
		{"Tap", `{"locate":5,"x":null}`},
		{"Input", `{"value":"héllo 你好","mode":"append","locate":null}`},
		{"Input", `{"value":1e400}`},
		{"Scroll", `{"direction":"up","distance":"half","untilVisible":{"desc":"More"}}`},
		{"Scroll", `{"distance":1.0e2}`},
		{"Scroll", `{"distance":-0}`},
		{"Swipe", `{"start":{"x":1,"y":2},"end":{"x":3,"y":4},"duration":10}`},
		{"Swipe", `{"start":{"x":1,"y":2,"z":3},"to":[]}`},
		{"Sleep", `{"ms":9223372036854775808}`},
		{"Sleep", `{"ms":600000}`},
		{"LongPress", `{"locate":"a","duration":100.0}`},
		{"KeyboardPress", `{"keyName":"volume-up"}`},
		{"Launch", `{"app":"com.apex.shop"}`},
		{"Back", ``},
		{"Back", `null`},
		{"Back", " \n"},
		{"Scroll", "{}\v"},
		{"PullGesture", `{"direction":"down","distance":"screen"}`},
		{"DragAndDrop", `{"from":"a","to":{"id":"e2"},"from":"b"}`},
		{"Tap", `{"locate":"\ud800"}`},
		{"Tap", "{\"locate\":\"\xff\"}"},
		{"Tap", `[`},
	} {
		f.Add(index(seed.action), []byte(seed.raw))
	}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		i := int(which) % len(actions)
		a := actions[i]
		p, err := a.Decode(raw)
		if err != nil {
			var ve *action.ValidationError
			if !errors.As(err, &ve) || len(ve.Fields) == 0 || !errors.Is(err, action.ErrInvalidParams) {
				t.Fatalf("%s.Decode(%q) error %v is not a ValidationError with fields", a.Name(), raw, err)
			}
			return
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil && len(bytes.Trim(raw, " \t\r\n")) > 0 {
			t.Fatalf("%s.Decode accepted %q, which is not JSON: %v", a.Name(), raw, err)
		}
		if v == nil {
			v = map[string]any{}
		}
		if err := schemas[i].Validate(v); err != nil {
			t.Fatalf("%s.Decode accepted %q but its schema rejects it: %v", a.Name(), raw, err)
		}
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("%s: marshal %+v: %v", a.Name(), p, err)
		}
		p2, err := a.Decode(again)
		if err != nil {
			t.Fatalf("%s: decoded %q, encoded %s, which does not decode: %v", a.Name(), raw, again, err)
		}
		if diff := cmp.Diff(p, p2, ignoreTarget); diff != "" {
			t.Fatalf("%s: round trip of %q via %s changed it (-first +second):\n%s", a.Name(), raw, again, diff)
		}
	})
}
