package action_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/action/actiontest"
	"github.com/apexagent/apex/device"
	"github.com/google/go-cmp/cmp"
)

func TestCallLocatorsByDeclaration(t *testing.T) {
	sp := action.ForPlatform(device.Android)
	tests := []struct {
		name, action, params string
		want                 []string // locator field names, as declared
		set                  bool     // which are set
	}{
		{"tap", "Tap", `{"locate": "Search"}`, []string{"locate"}, true},
		{"drag", "DragAndDrop", `{"from": "A", "to": "B"}`, []string{"from", "to"}, true},
		{"scroll without locators", "Scroll", `{}`, []string{"locate", "untilVisible"}, false},
		{"back has none", "Back", `{}`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := sp.DecodeCall(tt.action, json.RawMessage(tt.params))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range c.Locators() {
				got = append(got, r.Name)
				if (r.Locator != nil) != tt.set {
					t.Errorf("%s set = %v, want %v", r.Name, r.Locator != nil, tt.set)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("locators (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCallSetLocatorAndJSON(t *testing.T) {
	sp := action.ForPlatform(device.Android)
	c, err := sp.DecodeCall("ClearInput", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetLocator("locate", action.Locator{Text: "Email"}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetLocator("nope", action.Locator{Text: "x"}); err == nil {
		t.Error("SetLocator of an unknown field: no error")
	}
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"action":"ClearInput","params":{"locate":{"text":"Email"}}}`; string(raw) != want {
		t.Errorf("JSON = %s, want %s", raw, want)
	}
	if got, want := c.String(), `ClearInput(locate: {"text":"Email"})`; got != want {
		t.Errorf("String = %s, want %s", got, want)
	}
}

// String leaves out the params a call leaves at their defaults, decoded
// (defaults filled) or built in Go (left zero) alike.
func TestCallStringLeavesDefaultsOut(t *testing.T) {
	decoded, err := action.ForPlatform(device.Android).DecodeCall("Input", json.RawMessage(`{"value": "demo", "locate": "Username"}`))
	if err != nil {
		t.Fatal(err)
	}
	field := action.Locator{Prompt: "Username"}
	built := action.Input.MustCall(&action.InputParams{Value: "demo", Locate: &field})
	appended := action.Input.MustCall(&action.InputParams{Value: "demo", Locate: &field, Mode: "append"})
	for _, tt := range []struct {
		c    action.Call
		want string
	}{
		{decoded, `Input(value: "demo", locate: "Username")`},
		{built, `Input(value: "demo", locate: "Username")`},
		{appended, `Input(value: "demo", locate: "Username", mode: "append")`},
	} {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("String = %s, want %s", got, tt.want)
		}
	}
}

func TestCallRunRecordsTarget(t *testing.T) {
	c := action.Tap.MustCall(&action.TapParams{Locate: action.Locator{Prompt: "OK"}})
	retry := c.Clone()
	drv := actiontest.NewDriver()
	res := action.ResolverFunc(func(ctx context.Context, l action.Locator) (action.Target, error) {
		return action.Target{Point: device.Point{X: 7, Y: 9}}, nil
	})
	if err := c.Run(context.Background(), &action.Env{Driver: drv, Resolver: res}); err != nil {
		t.Fatal(err)
	}
	tg, ok := c.Target()
	if !ok || tg.Point != (device.Point{X: 7, Y: 9}) {
		t.Errorf("target = %+v %v", tg, ok)
	}
	if got := drv.Calls(); len(got) != 1 || got[0].Point != tg.Point {
		t.Errorf("driver calls = %v, want one tap at the target", got)
	}
	if _, ok := retry.Target(); ok {
		t.Error("a clone taken before Run shares the resolved target")
	}
}

// Calls compare by action and params, as go-cmp does through Equal: the
// same params built in Go and decoded from JSON are equal.
func TestCallEqual(t *testing.T) {
	sp := action.ForPlatform(device.Android)
	decoded, err := sp.DecodeCall("tap", json.RawMessage(`{"locate": "Search"}`))
	if err != nil {
		t.Fatal(err)
	}
	built := action.Tap.MustCall(&action.TapParams{Locate: action.Locator{Prompt: "Search"}})
	other := action.DoubleTap.MustCall(&action.TapParams{Locate: action.Locator{Prompt: "Search"}})
	elsewhere := action.Tap.MustCall(&action.TapParams{Locate: action.Locator{Text: "Search"}})
	for _, tt := range []struct {
		name string
		a, b action.Call
		want bool
	}{
		{"built and decoded", built, decoded, true},
		{"another action", built, other, false},
		{"other params", built, elsewhere, false},
		{"zero and zero", action.Call{}, action.Call{}, true},
		{"zero and a call", action.Call{}, built, false},
	} {
		if got := tt.a.Equal(tt.b); got != tt.want {
			t.Errorf("%s: Equal = %v, want %v", tt.name, got, tt.want)
		}
		if got := cmp.Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: cmp.Equal = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCallStringReadsAsWritten(t *testing.T) {
	c := action.Input.MustCall(&action.InputParams{Value: "a < b & c > d"})
	if got, want := c.String(), `Input(value: "a < b & c > d")`; got != want {
		t.Errorf("String = %s, want %s", got, want)
	}
}

func TestCallStringKeepsLocatorText(t *testing.T) {
	c := action.Tap.MustCall(&action.TapParams{Locate: action.Locator{Prompt: "Network & internet"}})
	if got, want := c.String(), `Tap(locate: "Network & internet")`; got != want {
		t.Errorf("String = %s, want %s", got, want)
	}
	if raw := string(c.ParamsJSON()); raw != `{"locate":"Network \u0026 internet"}` {
		t.Errorf("ParamsJSON = %s: json.Marshal escapes as it always did", raw)
	}
}
