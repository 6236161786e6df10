package action_test

import (
	"context"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
)

// Every action of every space says whether running it again is safe: a
// new action without the declaration fails here.
func TestEveryActionDeclaresItsEffect(t *testing.T) {
	for _, p := range []device.Platform{"", device.Android, device.IOS} {
		for _, a := range action.ForPlatform(p).Actions() {
			if e := a.Effect(nil); e == action.Undeclared {
				t.Errorf("%s (%q space) does not declare its Effect: add .WithEffect(action.Idempotent or action.Cumulative) to its declaration", a.Name(), p)
			}
		}
	}
}

func TestEffects(t *testing.T) {
	loc := action.Locator{Text: "x"}
	tests := []struct {
		call action.Call
		want action.Effect
	}{
		{action.Tap.MustCall(&action.TapParams{Locate: loc}), action.Cumulative},
		{action.LongPress.MustCall(&action.LongPressParams{Locate: loc}), action.Cumulative},
		{action.KeyboardPress.MustCall(&action.KeyboardPressParams{KeyName: "enter"}), action.Cumulative},
		{action.Input.MustCall(&action.InputParams{Value: "a", Mode: "append"}), action.Cumulative},
		{action.Input.MustCall(&action.InputParams{Value: "a"}), action.Idempotent},
		{action.Input.MustCall(&action.InputParams{Mode: "clear"}), action.Idempotent},
		{action.ClearInput.MustCall(nil), action.Idempotent},
		{action.Launch.MustCall(&action.AppParams{App: "com.apex.shop"}), action.Idempotent},
		{action.Scroll.MustCall(&action.ScrollParams{UntilVisible: &loc}), action.Idempotent},
		{action.Scroll.MustCall(&action.ScrollParams{Direction: "down"}), action.Cumulative},
		{action.Back.MustCall(nil), action.Cumulative},
		{action.Home.MustCall(nil), action.Idempotent},
		{action.Call{}, action.Undeclared},
	}
	for _, tt := range tests {
		if got := tt.call.Effect(); got != tt.want {
			t.Errorf("%s: effect %s, want %s", tt.call, got, tt.want)
		}
	}
	// A space that replaces an action keeps the declaration it is given:
	// an undeclared one says so.
	bare := action.Define("Tap", "Tap.", func(_ context.Context, _ *action.Env, _ *action.TapParams) error { return nil })
	if a, _ := action.Common().With(bare).Lookup("Tap"); a.Effect(nil) != action.Undeclared {
		t.Fatalf("an undeclared Tap reads %s", a.Effect(nil))
	}
}

func TestWithEffectByRefusesAnotherParamsType(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("WithEffectBy with the wrong params type did not panic")
		}
	}()
	action.WithEffectBy(action.Tap, func(*action.AppParams) action.Effect { return action.Idempotent })
}
