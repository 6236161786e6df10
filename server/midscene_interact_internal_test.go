package server

import (
	"encoding/json"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/google/go-cmp/cmp"
)

// Midscene's preview sends a pinch as {actionType: "Pinch", x, y,
// direction, distance?, duration?}: it becomes the Pinch action there.
func TestMidsceneInteractPinch(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	name, raw, err := MidsceneInteract{ActionType: "Pinch", X: f(540), Y: f(1200), Direction: "out", Distance: f(200), Duration: f(300)}.action()
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(raw, &got)
	want := map[string]any{"locate": map[string]any{"x": 540.0, "y": 1200.0}, "direction": "out", "distance": 200.0, "duration": 300.0}
	if diff := cmp.Diff(want, got); name != "Pinch" || diff != "" {
		t.Errorf("action %q (-want +got):\n%s", name, diff)
	}
	a, ok := action.ForPlatform(device.Android).Lookup(name)
	if !ok {
		t.Fatalf("no %s action", name)
	}
	if _, err := a.Decode(raw); err != nil {
		t.Errorf("the Pinch action refuses Midscene's params: %v", err)
	}
	for _, m := range []MidsceneInteract{{ActionType: "Pinch", Direction: "in"}, {ActionType: "Tap"}, {ActionType: "Swipe", X: f(1), Y: f(2)}, {ActionType: "KeyboardPress"}} {
		if _, _, err := m.action(); err == nil {
			t.Errorf("%s without its point or key was accepted", m.ActionType)
		}
	}
}
