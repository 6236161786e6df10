package server_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/ios"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/server"
	"github.com/apexagent/apex/sim/lab"
)

// startIPhone serves a playground whose session is a simulated iPhone
// over WebDriverAgent, ready.
func startIPhone(t *testing.T) (*phone, *lab.Device) {
	t.Helper()
	l, err := lab.Start(context.Background(), lab.Options{IOS: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	dev := l.Devices()[0]
	target := device.Target{ID: "wda:" + dev.URL, Host: "wda", Platform: device.IOS, State: "device"}
	srv, err := server.New(server.Options{
		Open: func(ctx context.Context, id string) (device.Driver, device.Target, func(), error) {
			d, err := ios.Open(ctx, dev.URL, nil)
			if err != nil {
				return nil, device.Target{}, nil, err
			}
			return d, target, func() { d.Close() }, nil
		},
		NewAgent: func(_ server.ModelSettings, on func(event.Event)) (agent.AI, error) {
			return agent.New(agent.Config{OnEvent: on})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); hs.Close() })
	p := &phone{t: t, srv: srv, http: hs}
	p.ready()
	return p, dev
}

// TestIOSReadRoutes: on a simulated iPhone over WebDriverAgent the read
// routes answer the app in front and the XCUITest source; the log is
// refused (501), saying where an iPhone's log is read.
func TestIOSReadRoutes(t *testing.T) {
	p, dev := startIPhone(t)
	if err := dev.Phone.Launch("com.android.settings"); err != nil {
		t.Fatal(err)
	}
	if m := p.mustDo(200, "GET", "/foreground-app", nil); m["app"] != "com.android.settings" {
		t.Errorf("GET /foreground-app = %v; want the Settings app", m)
	}
	if m := p.mustDo(200, "GET", "/a11y-tree", nil); !strings.Contains(m["tree"].(string), "XCUIElementType") || m["format"] == "" {
		t.Errorf("GET /a11y-tree = format %v, %.200v; want the XCUITest source", m["format"], m["tree"])
	}
	if code, m := p.do("GET", "/events/log", nil); code != 501 || !strings.Contains(m["error"].(string), "idevicesyslog") {
		t.Errorf("GET /events/log on an iPhone = %d %v; want 501 saying where its log is", code, m)
	}
}

// TestIOSPointTap: a click on the preview of a simulated iPhone (a Tap at
// a point) opens the app under it, and the recording names that app.
func TestIOSPointTap(t *testing.T) {
	p, dev := startIPhone(t)

	d, err := ios.Open(testCtx(t), dev.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	src, err := d.Source(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scene.FromSource(src.Data, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := locate.Find(sc, action.Locator{Text: "Settings"})
	if err != nil {
		t.Fatalf("no Settings on the iPhone's home screen: %v\n%s", err, sc.Text())
	}
	x, y := e.Bounds.Center()

	p.mustDo(200, "POST", "/recorder/start", nil)
	m := p.mustDo(200, "POST", "/interact", map[string]any{"action": "Tap", "params": map[string]any{"locate": map[string]int{"x": x, "y": y}}})
	if pt := m["point"].(map[string]any); pt["x"] != float64(x) || pt["y"] != float64(y) {
		t.Errorf("tapped %v, want %d,%d", pt, x, y)
	}
	if fg, _ := dev.Phone.Foreground(); fg != "com.android.settings" {
		t.Errorf("foreground after the tap = %q, want com.android.settings", fg)
	}
	evs := p.mustDo(200, "GET", "/recorder/events", nil)["events"].([]any)
	if got, _ := json.Marshal(evs[0].(map[string]any)["params"]); len(evs) != 1 || string(got) != `{"locate":{"text":"Settings"}}` {
		t.Errorf("recorded %d events, the first as %s; want the Settings app by its text", len(evs), got)
	}
}
