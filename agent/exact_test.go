package agent

import (
	"errors"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/scene"
)

// A screen where every target is named twice: by an element whose label
// it is, and by one whose text merely contains it (listed first, so
// position would pick it).
var mentionScene = &scene.Scene{Width: 1080, Height: 2400, Package: "com.example", Elements: []scene.Element{
	{ID: "e1", Type: "item", Text: "Network & internet · Wi-Fi, airplane mode", Bounds: scene.Rect{X0: 0, Y0: 200, X1: 1080, Y1: 300}, Flags: scene.Flags{Clickable: true}},
	{ID: "e2", Type: "switch", Text: "Wi-Fi", Bounds: scene.Rect{X0: 0, Y0: 300, X1: 1080, Y1: 400}, Flags: scene.Flags{Clickable: true, Checkable: true, Checked: true}},
	{ID: "e3", Type: "item", Text: "Saved photos of Notes", Bounds: scene.Rect{X0: 0, Y0: 400, X1: 1080, Y1: 500}, Flags: scene.Flags{Clickable: true, LongClickable: true}},
	{ID: "e4", Type: "item", Text: "Notes", Bounds: scene.Rect{X0: 0, Y0: 500, X1: 1080, Y1: 600}, Flags: scene.Flags{Clickable: true, LongClickable: true}},
	{ID: "e5", Type: "input", Text: "", Desc: "Name of the new Title", Bounds: scene.Rect{X0: 0, Y0: 600, X1: 1080, Y1: 700}, Flags: scene.Flags{Clickable: true, Editable: true}},
	{ID: "e6", Type: "input", Text: "", Desc: "Title", Bounds: scene.Rect{X0: 0, Y0: 700, X1: 1080, Y1: 800}, Flags: scene.Flags{Clickable: true, Editable: true}},
}}

// For every verb, an element whose own label is the target wins over one
// that only contains it; on and off verbs take nothing but the switch.
func TestExactLabelBeatsContainedText(t *testing.T) {
	at := func(s string) action.Locator { return action.Locator{Prompt: s} }
	ptr := func(l action.Locator) *action.Locator { return &l }
	tests := []struct {
		verb string
		step Step
		want string
	}{
		{"tap", Step{Call: action.Tap.MustCall(&action.TapParams{Locate: at("Wi-Fi")})}, "e2"},
		{"double tap", Step{Call: action.DoubleTap.MustCall(&action.TapParams{Locate: at("Notes")})}, "e4"},
		{"long press", Step{Call: action.LongPress.MustCall(&action.LongPressParams{Locate: at("Notes")})}, "e4"},
		{"type into", Step{Call: action.Input.MustCall(&action.InputParams{Value: "x", Locate: ptr(at("Title"))})}, "e6"},
		{"press a key on", Step{Call: action.KeyboardPress.MustCall(&action.KeyboardPressParams{KeyName: "enter", Locate: ptr(at("Title"))})}, "e6"},
		{"turn off", Step{Call: action.Tap.MustCall(&action.TapParams{Locate: at("Wi-Fi")}), Expected: &check.Check{Kind: check.NotChecked, Target: at("Wi-Fi")}}, "e2"},
	}
	for _, tc := range tests {
		t.Run(tc.verb, func(t *testing.T) {
			var got string
			if setsState(tc.step) {
				l, _ := stepLocator(tc.step)
				e, err := switchTarget(mentionScene, l)
				if err != nil {
					t.Fatal(err)
				}
				got = e.ID
			} else {
				found, err := ruleTargets(tc.step.Call, mentionScene)
				if err != nil {
					t.Fatal(err)
				}
				got = found[0].el.ID
			}
			if got != tc.want {
				t.Fatalf("%s %s found %s, want %s", tc.verb, tc.step.Call, got, tc.want)
			}
		})
	}
	for _, c := range []check.Kind{check.Exists, check.Checked} {
		v := judge(&check.Check{Kind: c, Target: at("Wi-Fi")}, nil, mentionScene)
		if !v.Pass || v.Confidence < 1 {
			t.Errorf("check %s of Wi-Fi: %+v, want an exact pass on the switch", c, v)
		}
	}
	// Only mentioned: the switch verbs refuse, naming what mentions it.
	s := *mentionScene
	s.Elements = []scene.Element{mentionScene.Elements[0]}
	if _, err := switchTarget(&s, at("Wi-Fi")); err == nil || !errors.Is(err, errMentionedOnly) {
		t.Fatalf("switch only mentioned: %v", err)
	}
}
