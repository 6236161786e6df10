package mcp_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/mcp"
)

type waveParams struct {
	Locate action.Locator `json:"locate" jsonschema:"the element to wave at"`
	Times  int            `json:"times,omitempty" jsonschema:"how many waves" default:"2" minimum:"1" maximum:"5"`
}

// TestNewActionIsATool adds an action to a space and finds it as a tool,
// with its description and schema, runnable by element id — with nothing
// in package mcp told about it.
func TestNewActionIsATool(t *testing.T) {
	l, hosts := simHosts(t, 1)
	id := simID(l, 0)
	var waved atomic.Int32
	var at device.Point
	wave := action.Define("WaveHello", "Wave at an element to greet it.",
		func(ctx context.Context, env *action.Env, p *waveParams) error {
			waved.Add(int32(p.Times))
			at = p.Locate.Target().Point
			return nil
		})
	space := action.ForPlatform(device.Android).With(wave)

	before := connect(t, newServer(t, &mcp.Options{Hosts: hosts, Spaces: []*action.Space{action.ForPlatform(device.Android)}}))
	if slices.Contains(before.toolNames(), "wave_hello") {
		t.Fatal("wave_hello exists before the action was added")
	}
	c := connect(t, newServer(t, &mcp.Options{Hosts: hosts, Spaces: []*action.Space{space}}))
	names := c.toolNames()
	if got, want := len(names), len(before.toolNames())+1; got != want {
		t.Errorf("%d tools, want %d: %v", got, want, names)
	}
	tl := c.tool("wave_hello")
	if !strings.HasPrefix(tl.Description, "Wave at an element to greet it.") {
		t.Errorf("description %q", tl.Description)
	}
	props := schemaOf(t, tl)["properties"].(map[string]any)
	if d := props["times"].(map[string]any); d["maximum"] != float64(5) || d["default"] != float64(2) {
		t.Errorf("times schema %v", d)
	}

	c.ok("device_open", map[string]any{"device": id})
	scene := c.ok("observe", map[string]any{"device": id})
	if !strings.Contains(scene, `e4 item "Shop" [405,488]`) {
		t.Fatalf("launcher scene changed; update the test:\n%s", scene)
	}
	c.ok("wave_hello", map[string]any{"device": id, "locate": "e4"})
	if waved.Load() != 2 || at != (device.Point{X: 405, Y: 488}) {
		t.Errorf("waved %d times at %v, want 2 at (405, 488)", waved.Load(), at)
	}
	if msg := c.fails("wave_hello", map[string]any{"device": id, "locate": "e4", "times": 9}); !strings.Contains(msg, "times") {
		t.Errorf("times 9: %s", msg)
	}
}

func TestActionNameClash(t *testing.T) {
	obs := action.Define("Observe", "Clashes with the observe tool.",
		func(ctx context.Context, env *action.Env, p *struct{}) error { return nil })
	_, err := mcp.New(&mcp.Options{Spaces: []*action.Space{action.Common().With(obs)}})
	if err == nil || !strings.Contains(err.Error(), "built-in tool") {
		t.Errorf("an action named Observe: %v", err)
	}
	if _, err := mcp.New(&mcp.Options{Policy: mcp.ReadOnly, Spaces: []*action.Space{action.Common().With(obs)}}); err != nil {
		t.Errorf("readonly has no action tools, so no clash: %v", err)
	}
}

func TestActionMissingOnPlatform(t *testing.T) {
	_, id, c := openSim(t, mcp.Options{})
	if msg := c.fails("app_switcher", map[string]any{"device": id}); !strings.Contains(msg, "not an action of android devices") {
		t.Errorf("app_switcher on android: %s", msg)
	}
}

func TestToolName(t *testing.T) {
	for in, want := range map[string]string{"Tap": "tap", "DoubleTap": "double_tap", "KeyboardPress": "keyboard_press",
		"RecentApps": "recent_apps", "AppSwitcher": "app_switcher", "WaveHello": "wave_hello", "OCRRead": "ocr_read"} {
		if got := mcp.ToolName(in); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", in, got, want)
		}
	}
}
