package server_test

import (
	"bytes"
	"encoding/json"
	"image/png"
	"strings"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/internal/labtest"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/runner"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/script"
	"github.com/apexagent/apex/store"
)

// TestRecorderExportReplays records manual actions, exports them as a
// script, and replays it with the runner on the same phone.
func TestRecorderExportReplays(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	if code, _ := p.do("POST", "/recorder/stop", nil); code != 409 {
		t.Errorf("stop before start: %d, want 409", code)
	}
	if code, _ := p.raw("GET", "/recorder/export", nil, nil); code != 409 {
		t.Errorf("export of nothing: %d, want 409", code)
	}
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Home"}) // not recorded
	p.mustDo(200, "POST", "/recorder/start", nil)
	if code, _ := p.do("POST", "/recorder/start", nil); code != 409 {
		t.Errorf("second start: %d, want 409", code)
	}
	// A click on the preview taps a point; the recording keeps the element
	// it touched, so the script replays on other screens.
	at := p.pointOf("Settings")
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Tap", "params": map[string]any{"locate": map[string]int{"x": at.X, "y": at.Y}}})
	p.mustDo(422, "POST", "/interact", map[string]any{"action": "Tap", "params": map[string]any{"locate": "No Such Thing"}}) // failed: not recorded
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "tap", "params": map[string]any{"locate": map[string]any{"text": "Network & internet"}}})
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "AndroidBackButton"})
	if m := p.mustDo(200, "POST", "/recorder/stop", nil); m["events"] != 3.0 {
		t.Errorf("stop = %v, want 3 events", m)
	}
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Home"}) // after stop: not recorded

	evs := p.mustDo(200, "GET", "/recorder/events", nil)["events"].([]any)
	var names []string
	for _, e := range evs {
		names = append(names, e.(map[string]any)["action"].(string))
	}
	if strings.Join(names, " ") != "Tap Tap Back" {
		t.Fatalf("recorded %v, want Tap Tap Back", names)
	}
	first := evs[0].(map[string]any)
	if el, _ := first["element"].(map[string]any); el == nil || !strings.Contains(el["text"].(string), "Settings") {
		t.Errorf("first action touched %v, want the Settings icon", first["element"])
	}
	if got, _ := json.Marshal(first["params"]); string(got) != `{"locate":{"text":"Settings"}}` {
		t.Errorf("the point tap was recorded as %s, want the element it touched by its text", got)
	}
	for _, which := range []string{"before", "after"} {
		code, img := p.raw("GET", first[which].(string), nil, nil)
		if _, err := png.Decode(bytes.NewReader(img)); code != 200 || err != nil {
			t.Errorf("%s screenshot: %d %v", which, code, err)
		}
	}
	if code, _ := p.raw("GET", "/recorder/screenshot/9/before", nil, nil); code != 404 {
		t.Errorf("screenshot of action 9: %d, want 404", code)
	}

	// The export replays from another screen: the launch of the app it
	// began in, and the three actions.
	if res, yml := p.replayExport(func() {}); res.Steps != 4 {
		t.Fatalf("replay: %+v; want 4 steps\n%s", res, yml)
	}
}

// pointOf is the centre of the element text names on the phone's screen.
func (p *phone) pointOf(text string) device.Point {
	p.t.Helper()
	d, err := android.OpenDirect(testCtx(p.t), p.dev.Addr, labtest.Driver())
	if err != nil {
		p.t.Fatal(err)
	}
	defer d.Close()
	src, err := d.Source(testCtx(p.t))
	if err != nil {
		p.t.Fatal(err)
	}
	sc, err := scene.FromSource(src.Data, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	e, err := locate.Find(sc, action.Locator{Text: text})
	if err != nil {
		p.t.Fatal(err)
	}
	x, y := e.Bounds.Center()
	return device.Point{X: x, Y: y}
}

// TestRecorderExportStartsWithItsApp: a recording begun inside an app
// exports a script that opens that app first, so it replays from a fresh
// start (another app in front), not from wherever the phone happens to be.
func TestRecorderExportStartsWithItsApp(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Tap", "params": map[string]any{"locate": "Settings"}}) // before: not recorded
	p.mustDo(200, "POST", "/recorder/start", nil)
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Tap", "params": map[string]any{"locate": "Network & internet"}})
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "AndroidBackButton"})
	p.mustDo(200, "POST", "/recorder/stop", nil)
	_, yml := p.replayExport(func() {
		if err := p.dev.Phone.Launch("com.apex.shop"); err != nil {
			t.Fatal(err)
		}
	})
	if !strings.Contains(string(yml), "android:\n  launch: com.android.settings\n") {
		t.Errorf("export: want it to launch Settings first:\n%s", yml)
	}
}

// replayExport exports the recording, which ends in Settings, and replays
// it with the runner on the phone once Settings is stopped and prepare has
// put the phone where the replay starts; the replay must pass and bring
// Settings back to the front.
func (p *phone) replayExport(prepare func()) (*runner.Result, []byte) {
	p.t.Helper()
	code, yml := p.raw("GET", "/recorder/export", nil, nil)
	if code != 200 {
		p.t.Fatalf("export: %d %s", code, yml)
	}
	s := loadExport(p.t, yml)
	p.dev.Phone.ForceStop("com.android.settings")
	prepare()
	if fg, _ := p.dev.Phone.Foreground(); fg == "com.android.settings" {
		p.t.Fatal("settings still in front before the replay")
	}
	d, err := android.OpenDirect(testCtx(p.t), p.dev.Addr, labtest.Driver())
	if err != nil {
		p.t.Fatal(err)
	}
	defer d.Close()
	st, err := store.Open(p.t.TempDir())
	if err != nil {
		p.t.Fatal(err)
	}
	defer st.Close()
	res, err := runner.Run(testCtx(p.t), d, s, &runner.Options{Store: st, Perception: perceive.Options{Mode: perceive.Off}})
	if err != nil || res.Status != "passed" {
		p.t.Fatalf("replay: %v, %+v\n%s", err, res, yml)
	}
	if fg, _ := p.dev.Phone.Foreground(); fg != "com.android.settings" {
		p.t.Errorf("after the replay the foreground is %q, want com.android.settings", fg)
	}
	return res, yml
}

// loadExport loads an exported recording as apex run does on Android.
func loadExport(t testing.TB, yml []byte) *script.Script {
	t.Helper()
	s, err := script.Load(yml, "recorded.yaml", &script.Options{Action: func(name string, params json.RawMessage) (bool, error) {
		a, ok := action.ForPlatform(device.Android).Lookup(name)
		if !ok || params == nil {
			return ok, nil
		}
		_, err := a.Decode(params)
		return true, err
	}})
	if err != nil {
		t.Fatalf("the export does not load: %v\n%s", err, yml)
	}
	return s
}
