package action_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/action/actiontest"
	"github.com/apexagent/apex/device"
)

// Declaring an action is one Define: the params struct's tags are its whole
// contract.
func ExampleDefine() {
	type SetSwitchParams struct {
		Locate action.Locator `json:"locate" jsonschema:"the switch"`
		State  string         `json:"state" jsonschema:"the state it should end in" enum:"on,off"`
	}
	setSwitch := action.Define("SetSwitch", "Turn a switch on or off; a switch already there is left alone.",
		func(ctx context.Context, env *action.Env, p *SetSwitchParams) error {
			t := p.Locate.Target()
			if t.Element != nil && t.Element.Flags.Checked == (p.State == "on") {
				return nil
			}
			return env.Driver.Tap(ctx, t.Point)
		})

	fmt.Println(setSwitch.ModelText())
	fmt.Println(setSwitch.LocatorFields())
	_, err := setSwitch.Decode(json.RawMessage(`{"locate": "Wi-Fi", "state": "maybe", "force": true}`))
	fmt.Println(err)
	// Output:
	// SetSwitch(locate: locator, state: "on"|"off") — Turn a switch on or off; a switch already there is left alone.
	// [locate]
	// SetSwitch: invalid params: force: unknown param: known params are locate, state; state: must be one of "on", "off"; got "maybe"
}

// Running an action decodes its params, resolves its locators and drives
// the device.
func ExampleAction_Run() {
	d := actiontest.NewDriver()
	env := &action.Env{Driver: d, Resolver: &actiontest.Resolver{Targets: map[string]action.Target{
		"search box": {Point: device.Point{X: 540, Y: 180}},
	}}}
	input, _ := action.ForPlatform(device.Android).Lookup("input")
	err := input.Run(context.Background(), env, json.RawMessage(`{"locate": "search box", "value": "shoes", "mode": "append"}`))
	fmt.Print(d.Trace(), err)
	// Output:
	// Tap(540,180)
	// InputText("shoes")
	// <nil>
}
