package action_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/action/actiontest"
	"github.com/apexagent/apex/device"
)

// BenchmarkDecode measures what validating a model's params costs per call.
func BenchmarkDecode(b *testing.B) {
	for _, bc := range []struct {
		name string
		a    *action.Action
		raw  string
	}{
		{"Tap/string", action.Tap, `{"locate":"the Login button"}`},
		{"Tap/object", action.Tap, `{"locate":{"text":"Login","type":"button","index":1}}`},
		{"Input", action.Input, `{"value":"running shoes","locate":"search box","mode":"replace"}`},
		{"Scroll", action.Scroll, `{"direction":"down","distance":"half","untilVisible":{"text":"Settings"}}`},
		{"Swipe/points", action.Swipe, `{"start":{"x":100,"y":2000},"end":{"x":100,"y":400},"duration":300}`},
		{"Back/empty", action.Back, `{}`},
		{"Tap/invalid", action.Tap, `{"locate":5,"speed":3}`},
	} {
		raw := json.RawMessage(bc.raw)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				_, _ = bc.a.Decode(raw)
			}
		})
	}
}

// BenchmarkRunTap is a whole Tap (decode, resolve, call) against the
// recording driver: the action layer's own overhead per step.
func BenchmarkRunTap(b *testing.B) {
	env := &action.Env{Driver: actiontest.NewDriver(), Resolver: action.ResolverFunc(func(context.Context, action.Locator) (action.Target, error) {
		return action.Target{Point: device.Point{X: 1, Y: 2}}, nil
	})}
	raw := json.RawMessage(`{"locate":"OK"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := action.Tap.Run(ctx, env, raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDescribe is the cost of building the model's action list.
func BenchmarkDescribe(b *testing.B) {
	s := action.ForPlatform(device.Android)
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Describe()
	}
}
