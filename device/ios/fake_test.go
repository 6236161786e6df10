package ios_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/devicetest"
	"github.com/apexagent/apex/device/ios"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/wda/wdatest"
	"github.com/google/go-cmp/cmp"
)

// The optional extensions the action package uses.
var (
	_ action.DoubleTapper = (*ios.Driver)(nil)
	_ action.Dragger      = (*ios.Driver)(nil)
)

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func openFake(t *testing.T, opts wdatest.Options, dopts *ios.Options) (*wdatest.Server, *ios.Driver) {
	t.Helper()
	s := wdatest.New(opts)
	t.Cleanup(s.Close)
	d, err := ios.Open(ctx(t), s.URL, dopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return s, d
}

// TestPixels: callers work in pixels; WebDriverAgent gets points.
func TestPixels(t *testing.T) {
	s, d := openFake(t, wdatest.Options{}, nil)
	ctx := ctx(t)
	info, err := d.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Width != 1170 || info.Height != 2532 || info.Platform != device.IOS {
		t.Fatalf("Info = %+v; want 1170x2532 ios", info)
	}
	src, err := d.Source(ctx)
	if err != nil || src.Format != device.FormatXCUITest {
		t.Fatalf("Source = %v, %v", src.Format, err)
	}
	tr, err := scene.Parse(src.Data)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Width != 1170 || tr.Height != 2532 {
		t.Errorf("source is %dx%d; want the screen in pixels 1170x2532", tr.Width, tr.Height)
	}
	must(t, d.Tap(ctx, device.Point{X: 300, Y: 600}))
	must(t, d.Swipe(ctx, device.Point{X: 600, Y: 1800}, device.Point{X: 600, Y: 600}, 300*time.Millisecond))
	must(t, d.LongPress(ctx, device.Point{X: 3, Y: 4}, 700*time.Millisecond))
	want := map[string]string{
		"POST /session/{sid}/wda/tap": `{"x":100,"y":200}`,
		"POST /session/{sid}/actions": `{"actions":[{"actions":[{"type":"pointerMove","duration":0,"x":1,"y":1.3333333333333333},{"type":"pointerDown","button":0},{"type":"pause","duration":700},{"type":"pointerUp","button":0}],"id":"finger1","parameters":{"pointerType":"touch"},"type":"pointer"}]}`,
	}
	must(t, d.DoubleTap(ctx, device.Point{X: 30, Y: 60}))
	if body := s.LastBody("POST /session/{sid}/actions"); strings.Count(body, "pointerDown") != 2 || !strings.Contains(body, `"x":10,"y":20`) {
		t.Errorf("double tap = %s; want two presses at (10, 20) points", body)
	}
	must(t, d.Drag(ctx, device.Point{X: 30, Y: 60}, device.Point{X: 300, Y: 600}, 0))
	if body := s.LastBody("POST /session/{sid}/actions"); !strings.Contains(body, `"duration":600`) || !strings.Contains(body, `"x":100,"y":200`) {
		t.Errorf("drag = %s; want a 600 ms hold then a move to (100, 200) points", body)
	}
	must(t, d.LongPress(ctx, device.Point{X: 3, Y: 4}, 700*time.Millisecond))
	for call, body := range want {
		if diff := cmp.Diff(body, s.LastBody(call)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", call, diff)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestKeysAndApps(t *testing.T) {
	s, d := openFake(t, wdatest.Options{Apps: []string{"com.example.shop"}}, nil)
	ctx := ctx(t)
	must(t, d.InputText(ctx, "héllo 你好 👋"))
	must(t, d.PressKey(ctx, device.KeyEnter))
	must(t, d.PressKey(ctx, device.KeyDelete))
	if got := s.Typed(); got != "héllo 你好 👋\n\b" {
		t.Errorf("typed %q", got)
	}
	must(t, d.LaunchApp(ctx, "com.example.shop"))
	if fg, err := d.ForegroundApp(ctx); err != nil || fg != "com.example.shop" {
		t.Fatalf("ForegroundApp = %q, %v", fg, err)
	}
	must(t, d.PressKey(ctx, device.KeyHome))
	if fg, _ := d.ForegroundApp(ctx); fg != "com.apple.springboard" {
		t.Fatalf("after home: %q", fg)
	}
	if err := d.LaunchApp(ctx, "com.example.missing"); !errors.Is(err, device.ErrNotFound) {
		t.Fatalf("LaunchApp(missing) = %v; want ErrNotFound", err)
	}
	must(t, d.TerminateApp(ctx, "com.example.shop"))
	must(t, d.PressKey(ctx, device.KeyBack)) // the fake's navigation bar has a Back button
	if !strings.Contains(strings.Join(s.Calls(), " "), "/click") {
		t.Error("back did not click the navigation bar's button")
	}
	must(t, d.PressKey(ctx, device.KeyAppSwitch))
	if body := s.LastBody("POST /session/{sid}/actions"); !strings.Contains(body, `"y":843`) || !strings.Contains(body, `"duration":800`) {
		t.Errorf("app switcher gesture = %s; want a swipe up from the bottom edge that pauses", body)
	}
	for _, k := range []device.Key{device.KeyMenu, device.KeyUp, device.KeyEscape, device.KeySearch} {
		if err := d.PressKey(ctx, k); !errors.Is(err, device.ErrUnsupported) {
			t.Errorf("PressKey(%s) = %v; want ErrUnsupported", k, err)
		}
	}
	must(t, d.PressKey(ctx, device.KeyPower))
	must(t, d.PressKey(ctx, device.KeyPower))
	must(t, d.Lock(ctx))
	must(t, d.Unlock(ctx))
}

// TestRestartThenGone: a WebDriverAgent that restarts mid-run costs one new
// session; one that dies surfaces device.ErrOffline within a bound.
// TestBackWithoutNavigationBar swipes from the left edge.
func TestBackWithoutNavigationBar(t *testing.T) {
	s, d := openFake(t, wdatest.Options{NoNavigationBar: true}, nil)
	must(t, d.PressKey(ctx(t), device.KeyBack))
	body := s.LastBody("POST /session/{sid}/actions")
	if !strings.Contains(body, `"x":1,"y":422`) || !strings.Contains(body, `"x":260,"y":422`) {
		t.Fatalf("back without a navigation bar = %s; want a swipe from the left edge", body)
	}
	if strings.Contains(strings.Join(s.Calls(), " "), "/click") {
		t.Error("back clicked something on a screen without a back button")
	}
}

func TestRestartThenGone(t *testing.T) {
	s, d := openFake(t, wdatest.Options{}, &ios.Options{Timeout: 3 * time.Second, Retries: 3, Backoff: 50 * time.Millisecond})
	ctx := ctx(t)
	if _, err := d.Source(ctx); err != nil {
		t.Fatal(err)
	}
	before := s.Sessions()
	s.Restart()
	if _, err := d.Source(ctx); err != nil {
		t.Fatalf("Source after a restart = %v; want a new session", err)
	}
	must(t, d.Tap(ctx, device.Point{X: 3, Y: 3}))
	if got := s.Sessions() - before; got != 1 {
		t.Fatalf("%d sessions made after the restart; want 1", got)
	}
	devicetest.Offline(t, d, s.Kill, 4*time.Second)
}

func TestCancelled(t *testing.T) {
	_, d := openFake(t, wdatest.Options{}, nil)
	c, cancel := context.WithCancel(context.Background())
	cancel()
	for name, call := range map[string]func() error{
		"Source": func() error { _, err := d.Source(c); return err },
		"Tap":    func() error { return d.Tap(c, device.Point{}) },
	} {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s = %v; want context.Canceled", name, err)
		}
	}
}

func TestOpenUnreachable(t *testing.T) {
	s := wdatest.New(wdatest.Options{})
	url := s.URL
	s.Close()
	start := time.Now()
	_, err := ios.Open(ctx(t), url, &ios.Options{Timeout: 2 * time.Second, Backoff: 20 * time.Millisecond})
	if !errors.Is(err, device.ErrOffline) {
		t.Fatalf("Open of a dead URL = %v; want ErrOffline", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("Open took %v", el)
	}
}
