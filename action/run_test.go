package action_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/action/actiontest"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/scene"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// screen is what the test resolver can find on the fake 1080x2400 phone.
var screen = map[string]action.Target{
	"OK":     {Point: device.Point{X: 540, Y: 1800}, Element: &scene.Element{ID: "e3", Type: "button", Text: "OK", Bounds: scene.Rect{X0: 440, Y0: 1750, X1: 640, Y1: 1850}}},
	"search": {Point: device.Point{X: 500, Y: 200}, Element: &scene.Element{ID: "e1", Type: "input", Text: "old", Bounds: scene.Rect{X0: 100, Y0: 150, X1: 900, Y1: 250}, Flags: scene.Flags{Editable: true}}},
	"pin":    {Point: device.Point{X: 500, Y: 400}, Element: &scene.Element{ID: "e2", Type: "input", Text: "••••", Flags: scene.Flags{Editable: true, Password: true}}},
	"spot":   {Point: device.Point{X: 10, Y: 20}}, // a point only, as a vision model returns
	"list":   {Point: device.Point{X: 540, Y: 1300}, Element: &scene.Element{ID: "e4", Type: "list", Bounds: scene.Rect{X0: 0, Y0: 600, X1: 1080, Y1: 2000}, Flags: scene.Flags{Scrollable: true}}},
	"card":   {Point: device.Point{X: 300, Y: 700}},
	"bin":    {Point: device.Point{X: 900, Y: 2200}},
}

func pt(x, y int) device.Point { return device.Point{X: x, Y: y} }

func tap(x, y int) actiontest.Call { return actiontest.Call{Op: "Tap", Point: pt(x, y)} }
func key(k device.Key) actiontest.Call {
	return actiontest.Call{Op: "PressKey", Key: k}
}
func swipe(x0, y0, x1, y1 int, ms int) actiontest.Call {
	return actiontest.Call{Op: "Swipe", Point: pt(x0, y0), To: pt(x1, y1), Duration: time.Duration(ms) * time.Millisecond}
}
func repeat(c actiontest.Call, n int) []actiontest.Call {
	out := make([]actiontest.Call, n)
	for i := range out {
		out[i] = c
	}
	return out
}
func calls(cs ...any) []actiontest.Call {
	var out []actiontest.Call
	for _, c := range cs {
		switch c := c.(type) {
		case actiontest.Call:
			out = append(out, c)
		case []actiontest.Call:
			out = append(out, c...)
		}
	}
	return out
}

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		action   string
		raw      string
		clearing bool // the driver implements action.TextClearer
		want     []actiontest.Call
	}{
		{name: "Tap taps the resolved point", action: "Tap", raw: `{"locate":"OK"}`, want: calls(tap(540, 1800))},
		{name: "Tap at a point", action: "Tap", raw: `{"locate":{"x":7,"y":9}}`, want: calls(tap(7, 9))},
		{name: "LongPress at a point", action: "LongPress", raw: `{"locate":{"x":70,"y":90},"duration":800}`,
			want: calls(actiontest.Call{Op: "LongPress", Point: pt(70, 90), Duration: 800 * time.Millisecond})},
		{name: "Tap by locator object", action: "tap", raw: `{"locate":{"text":"bin"}}`, want: calls(tap(900, 2200))},
		{name: "DoubleTap taps twice", action: "DoubleTap", raw: `{"locate":"OK"}`, want: calls(tap(540, 1800), tap(540, 1800))},
		{name: "LongPress holds the default second", action: "LongPress", raw: `{"locate":"OK"}`,
			want: calls(actiontest.Call{Op: "LongPress", Point: pt(540, 1800), Duration: time.Second})},
		{name: "Input replace clears then types", action: "Input", raw: `{"locate":"search","value":"shoes"}`,
			want: calls(tap(500, 200), repeat(key(device.KeyDelete), 3), actiontest.Call{Op: "InputText", Text: "shoes"})},
		{name: "Input replace uses the driver's ClearText", action: "Input", raw: `{"locate":"search","value":"shoes"}`, clearing: true,
			want: calls(tap(500, 200), actiontest.Call{Op: "ClearText"}, actiontest.Call{Op: "InputText", Text: "shoes"})},
		{name: "Input append only types", action: "Input", raw: `{"locate":"search","value":" red","mode":"append"}`,
			want: calls(tap(500, 200), actiontest.Call{Op: "InputText", Text: " red"})},
		{name: "Input clear does not type", action: "Input", raw: `{"locate":"search","value":"x","mode":"clear"}`,
			want: calls(tap(500, 200), repeat(key(device.KeyDelete), 3))},
		{name: "Input into the focused field, text unknown", action: "Input", raw: `{"value":"你好"}`,
			want: calls(repeat(key(device.KeyDelete), 40), actiontest.Call{Op: "InputText", Text: "你好"})},
		{name: "ClearInput of a password field ignores its dots", action: "ClearInput", raw: `{"locate":"pin"}`,
			want: calls(tap(500, 400), repeat(key(device.KeyDelete), 40))},
		{name: "KeyboardPress maps the key name", action: "KeyboardPress", raw: `{"keyName":"Return"}`, want: calls(key(device.KeyEnter))},
		{name: "KeyboardPress focuses first", action: "KeyboardPress", raw: `{"keyName":"Backspace","locate":"search"}`,
			want: calls(tap(500, 200), key(device.KeyDelete))},
		{name: "Launch", action: "Launch", raw: `{"app":"com.apex.shop"}`, want: calls(actiontest.Call{Op: "LaunchApp", App: "com.apex.shop"})},
		{name: "Terminate", action: "Terminate", raw: `{"app":"com.apex.shop"}`, want: calls(actiontest.Call{Op: "TerminateApp", App: "com.apex.shop"})},
		{name: "Back", action: "Back", raw: `{}`, want: calls(key(device.KeyBack))},
		{name: "Home", action: "Home", raw: ``, want: calls(key(device.KeyHome))},
		{name: "RecentApps", action: "RecentApps", raw: `{}`, want: calls(key(device.KeyRecents))},
		{name: "Scroll down a screen swipes up inside the margins", action: "Scroll", raw: `{}`, want: calls(swipe(540, 2160, 540, 240, 500))},
		{name: "Scroll up half", action: "Scroll", raw: `{"direction":"up","distance":"half"}`, want: calls(swipe(540, 600, 540, 1800, 500))},
		{name: "Scroll right in pixels", action: "Scroll", raw: `{"direction":"right","distance":300}`, want: calls(swipe(690, 1200, 390, 1200, 500))},
		{name: "Scroll a long way splits the swipe", action: "Scroll", raw: `{"distance":3000}`,
			want: calls(swipe(540, 1950, 540, 450, 500), swipe(540, 1950, 540, 450, 500))},
		{name: "Scroll inside a located list", action: "Scroll", raw: `{"locate":"list"}`, want: calls(swipe(540, 1860, 540, 740, 500))},
		{name: "Swipe between elements", action: "Swipe", raw: `{"from":"card","to":"bin","duration":400}`, want: calls(swipe(300, 700, 900, 2200, 400))},
		{name: "Swipe from a point to an element", action: "Swipe", raw: `{"start":{"x":5,"y":6},"to":"OK"}`, want: calls(swipe(5, 6, 540, 1800, 300))},
		{name: "DragAndDrop", action: "DragAndDrop", raw: `{"from":"card","to":"bin"}`, want: calls(swipe(300, 700, 900, 2200, 1500))},
		{name: "PullGesture down from the top edge", action: "PullGesture", raw: `{"direction":"down"}`, want: calls(swipe(540, 1, 540, 1201, 600))},
		{name: "PullGesture down on a list refreshes it", action: "PullGesture", raw: `{"direction":"down","locate":"list","distance":500}`,
			want: calls(swipe(540, 1300, 540, 1800, 600))},
		{name: "PullGesture up", action: "PullGesture", raw: `{"direction":"up","distance":"screen"}`, want: calls(swipe(540, 1920, 540, 0, 600))},
	}
	android := action.ForPlatform(device.Android)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := actiontest.NewDriver()
			env := &action.Env{Driver: d, Resolver: &actiontest.Resolver{Targets: screen}}
			if tt.clearing {
				env.Driver = actiontest.ClearingDriver{Driver: d}
			}
			if err := lookup(t, android, tt.action).Run(context.Background(), env, json.RawMessage(tt.raw)); err != nil {
				t.Fatalf("Run(%s): %v", tt.raw, err)
			}
			if diff := cmp.Diff(tt.want, d.Calls()); diff != "" {
				t.Errorf("driver calls (-want +got):\n%s\ngot:\n%s", diff, d.Trace())
			}
		})
	}
}

func TestRunIOS(t *testing.T) {
	d := actiontest.NewDriver()
	env := &action.Env{Driver: d}
	ios := action.ForPlatform(device.IOS)
	for _, name := range []string{"Home", "AppSwitcher", "IOSHomeButton", "IOSAppSwitcher"} {
		if err := lookup(t, ios, name).Run(context.Background(), env, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if diff := cmp.Diff(calls(key(device.KeyHome), key(device.KeyAppSwitch), key(device.KeyHome), key(device.KeyAppSwitch)), d.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestRunFillsTargets(t *testing.T) {
	p, err := action.DragAndDrop.Decode(json.RawMessage(`{"from":"card","to":"bin"}`))
	if err != nil {
		t.Fatal(err)
	}
	env := &action.Env{Driver: actiontest.NewDriver(), Resolver: &actiontest.Resolver{Targets: screen}}
	if err := action.DragAndDrop.RunDecoded(context.Background(), env, p); err != nil {
		t.Fatal(err)
	}
	dp := p.(*action.DragAndDropParams)
	if !dp.From.Resolved() || dp.From.Target().Point != pt(300, 700) || dp.To.Target().Point != pt(900, 2200) {
		t.Errorf("targets after Run: from %+v, to %+v", dp.From.Target(), dp.To.Target())
	}
}

// stepResolver finds "Settings" from its nth lookup on (never when n is 0),
// and counts lookups.
type stepResolver struct {
	n, lookups int
	err        error // returned instead of not-found, when set
}

func (r *stepResolver) Resolve(_ context.Context, l action.Locator) (action.Target, error) {
	r.lookups++
	switch {
	case r.err != nil:
		return action.Target{}, r.err
	case r.n > 0 && r.lookups >= r.n:
		return action.Target{Point: pt(540, 900)}, nil
	}
	return action.Target{}, fmt.Errorf("%s: %w", l, action.ErrNotFound)
}

func TestScrollUntilVisible(t *testing.T) {
	half := swipe(540, 1800, 540, 600, 500)
	tests := []struct {
		name        string
		r           *stepResolver
		wantSwipes  int
		wantLookups int
		wantErr     error
		wantMsg     string
	}{
		{name: "already visible: no swipe", r: &stepResolver{n: 1}, wantSwipes: 0, wantLookups: 1},
		{name: "found after three swipes", r: &stepResolver{n: 4}, wantSwipes: 3, wantLookups: 4},
		{name: "found on the last look", r: &stepResolver{n: action.MaxScrolls + 1}, wantSwipes: action.MaxScrolls, wantLookups: action.MaxScrolls + 1},
		{name: "never found: stops after the bound", r: &stepResolver{}, wantSwipes: action.MaxScrolls, wantLookups: action.MaxScrolls + 1,
			wantErr: action.ErrNotFound, wantMsg: `Scroll: "Settings" still not visible after 10 scrolls down`},
		{name: "screen unreadable: no blind scrolling", r: &stepResolver{err: device.ErrOffline}, wantSwipes: 0, wantLookups: 1,
			wantErr: device.ErrOffline, wantMsg: `Scroll: look for "Settings"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := actiontest.NewDriver()
			p, err := action.Scroll.Decode(json.RawMessage(`{"untilVisible":"Settings"}`))
			if err != nil {
				t.Fatal(err)
			}
			err = action.Scroll.RunDecoded(context.Background(), &action.Env{Driver: d, Resolver: tt.r}, p)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("Run: %v", err)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("Run error = %v; want one wrapping %v", err, tt.wantErr)
			case tt.wantErr != nil && !strings.HasPrefix(err.Error(), tt.wantMsg):
				t.Errorf("Run error = %q; want it to start %q", err, tt.wantMsg)
			}
			if diff := cmp.Diff(repeat(half, tt.wantSwipes), d.Calls(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("swipes (-want +got):\n%s", diff)
			}
			if tt.r.lookups != tt.wantLookups {
				t.Errorf("lookups = %d; want %d", tt.r.lookups, tt.wantLookups)
			}
			target := p.(*action.ScrollParams).UntilVisible
			if found := tt.wantErr == nil; target.Resolved() != found || (found && target.Target().Point != pt(540, 900)) {
				t.Errorf("untilVisible resolved = %v (%+v); want %v", target.Resolved(), target.Target(), found)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	boom := errors.New("usb reset")
	tests := []struct {
		name    string
		a       *action.Action
		raw     string
		env     func(d *actiontest.Driver) *action.Env
		wantIs  error
		wantMsg string
	}{
		{name: "bad params never reach the device", a: action.Tap, raw: `{"locate":1}`,
			wantIs: action.ErrInvalidParams, wantMsg: "Tap: invalid params: locate: expected"},
		{name: "locator not on screen", a: action.Tap, raw: `{"locate":"Buy now"}`,
			wantIs: action.ErrNotFound, wantMsg: `Tap: cannot find locate "Buy now" on screen`},
		{name: "no resolver", a: action.Tap, raw: `{"locate":"OK"}`,
			env:     func(d *actiontest.Driver) *action.Env { return &action.Env{Driver: d} },
			wantMsg: `Tap: cannot find locate "OK": no resolver`},
		{name: "no driver", a: action.Back, raw: `{}`,
			env:     func(*actiontest.Driver) *action.Env { return &action.Env{} },
			wantMsg: "Back: no device to act on"},
		{name: "driver failure is wrapped with the action", a: action.Launch, raw: `{"app":"com.x"}`,
			env: func(d *actiontest.Driver) *action.Env {
				d.Fail = map[string]error{"LaunchApp": boom}
				return &action.Env{Driver: d}
			},
			wantIs: boom, wantMsg: "Launch: usb reset"},
		{name: "swipe point off screen", a: action.Swipe, raw: `{"start":{"x":5000,"y":1},"end":{"x":1,"y":1}}`,
			wantMsg: "Swipe: start (5000, 1) is outside the 1080x2400 screen"},
		{name: "clear failure says how far it got", a: action.ClearInput, raw: `{}`,
			env: func(d *actiontest.Driver) *action.Env {
				d.Fail = map[string]error{"PressKey": device.ErrOffline}
				return &action.Env{Driver: d}
			},
			wantIs: device.ErrOffline, wantMsg: "ClearInput: clear field (delete 1 of 40)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := actiontest.NewDriver()
			env := &action.Env{Driver: d, Resolver: &actiontest.Resolver{Targets: screen}}
			if tt.env != nil {
				env = tt.env(d)
			}
			err := tt.a.Run(context.Background(), env, json.RawMessage(tt.raw))
			if err == nil {
				t.Fatalf("Run(%s) succeeded; want an error", tt.raw)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Run error %v does not wrap %v", err, tt.wantIs)
			}
			if !strings.HasPrefix(err.Error(), tt.wantMsg) {
				t.Errorf("Run error = %q; want it to start %q", err, tt.wantMsg)
			}
			if n := len(d.Calls()); n != 0 {
				t.Errorf("driver got %d calls; want none:\n%s", n, d.Trace())
			}
		})
	}
}

func TestSleep(t *testing.T) {
	t.Run("waits exactly", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			if err := action.Sleep.Run(t.Context(), &action.Env{Driver: actiontest.NewDriver()}, json.RawMessage(`{"ms":1500}`)); err != nil {
				t.Fatal(err)
			}
			if got := time.Since(start); got != 1500*time.Millisecond {
				t.Errorf("slept %v; want 1.5s", got)
			}
		})
	})
	t.Run("honours cancellation", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := action.Sleep.Run(ctx, &action.Env{Driver: actiontest.NewDriver()}, json.RawMessage(`{"ms":600000}`))
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Run = %v; want DeadlineExceeded", err)
			}
			if got := time.Since(start); got != 200*time.Millisecond {
				t.Errorf("returned after %v; want 200ms, when the context ended", got)
			}
		})
	})
}

// TestRunDecodedChecksGoParams: params built in Go get the defaults and
// checks that JSON params get from Decode.
func TestRunDecodedChecksGoParams(t *testing.T) {
	ctx := context.Background()
	d := actiontest.NewDriver()
	env := &action.Env{Driver: d, Resolver: &actiontest.Resolver{Targets: screen}}
	if err := action.Scroll.RunDecoded(ctx, env, &action.ScrollParams{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(calls(swipe(540, 2160, 540, 240, 500)), d.Calls()); diff != "" {
		t.Errorf("Scroll{} calls (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		a       *action.Action
		p       any
		wantMsg string
	}{
		{action.Scroll, &action.ScrollParams{Direction: "sideways"}, `Scroll: invalid params: direction: must be one of "down", "up", "left", "right"; got "sideways"`},
		{action.Sleep, &action.SleepParams{Ms: -5}, "Sleep: invalid params: ms: must be at least 0; got -5"},
		{action.KeyboardPress, &action.KeyboardPressParams{KeyName: "warp"}, `KeyboardPress: invalid params: keyName: unknown key "warp"`},
		{action.Tap, &action.TapParams{}, "Tap: locate is empty: say which element to find"},
		{action.Tap, &action.SleepParams{}, "Tap: params are *action.SleepParams; want *action.TapParams"},
		{action.Tap, nil, "Tap: params are <nil>; want *action.TapParams"},
	} {
		err := tt.a.RunDecoded(ctx, env, tt.p)
		if err == nil || !strings.HasPrefix(err.Error(), tt.wantMsg) {
			t.Errorf("RunDecoded(%+v) = %v; want %s", tt.p, err, tt.wantMsg)
		}
	}
}

// dragDriver is a recording driver with a real drag gesture.
type dragDriver struct{ *actiontest.Driver }

func (d dragDriver) Drag(ctx context.Context, from, to device.Point, dur time.Duration) error {
	return d.Swipe(ctx, from, to, dur+time.Hour) // recorded as a swipe an hour longer, to tell it apart
}

func TestDragAndDropPrefersDragger(t *testing.T) {
	d := actiontest.NewDriver()
	env := &action.Env{Driver: dragDriver{d}, Resolver: &actiontest.Resolver{Targets: screen}}
	if err := action.DragAndDrop.Run(context.Background(), env, json.RawMessage(`{"from":"card","to":"bin","duration":100}`)); err != nil {
		t.Fatal(err)
	}
	want := calls(actiontest.Call{Op: "Swipe", Point: pt(300, 700), To: pt(900, 2200), Duration: time.Hour + 100*time.Millisecond})
	if diff := cmp.Diff(want, d.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
