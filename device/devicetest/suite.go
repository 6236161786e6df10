// Package devicetest is the Driver conformance suite: one table of
// behaviours every device.Driver must show, run by each implementation's
// tests against a device that runs the conformance app
// (testdata/conformance.yaml: a text field, a counter button, a 40-row
// list and a detail screen).
package devicetest

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
)

// App is the package of the conformance app.
const App = "com.apex.conformance"

// AppFile is the path of the conformance app's spec, for simulators.
func AppFile() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "conformance.yaml")
}

// Behaviour is one thing a Driver must do.
type Behaviour struct {
	Name string
	Run  func(t *testing.T, d device.Driver)
}

// Behaviours is the suite, in the order Run runs it.
var Behaviours = []Behaviour{
	{"info agrees with screenshot and source", infoAgrees},
	{"launch, foreground and terminate", launchTerminate},
	{"tap changes the source", tapChanges},
	{"input text appears in the focused field", inputText},
	{"back and home keys", keys},
	{"swipe scrolls a list", swipeScrolls},
	{"lock and unlock", lockUnlock},
	{"cancellation returns promptly", cancellation},
}

// Run runs every behaviour as a subtest on the driver open returns; open
// is called once per behaviour and may return the same driver.
func Run(t *testing.T, open func(t *testing.T) device.Driver) {
	for _, b := range Behaviours {
		t.Run(b.Name, func(t *testing.T) { b.Run(t, open(t)) })
	}
}

// wait bounds how long a behaviour waits for the screen to show an effect.
const wait = 10 * time.Second

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// tree reads the driver's current source.
func tree(t *testing.T, d device.Driver) *sourceTree {
	t.Helper()
	src, err := d.Source(ctxFor(t))
	if err != nil {
		t.Fatalf("Source: %v", err)
	}
	tr, err := parseSource(src)
	if err != nil {
		t.Fatalf("Source: %v", err)
	}
	return tr
}

// find returns the first node (depth first) that matches.
func find(n *node, match func(*node) bool) *node {
	if n == nil {
		return nil
	}
	if match(n) {
		return n
	}
	for _, c := range n.Children {
		if f := find(c, match); f != nil {
			return f
		}
	}
	return nil
}

// byID matches a resource id without its package ("note" matches
// "com.apex.conformance:id/note").
func byID(id string) func(*node) bool {
	return func(n *node) bool { return n.ID == id || strings.HasSuffix(n.ID, "/"+id) }
}

// waitFor polls the source until cond holds and returns that tree.
func waitFor(t *testing.T, d device.Driver, what string, cond func(*sourceTree) bool) *sourceTree {
	t.Helper()
	deadline := time.Now().Add(wait)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		tr := tree(t, d)
		if cond(tr) {
			return tr
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", wait, what)
		}
		<-tick.C
	}
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// fresh force-stops and launches the app so its session (field text,
// screen stack) starts clean, and returns the first screen.
func fresh(t *testing.T, d device.Driver) *sourceTree {
	t.Helper()
	ctx := ctxFor(t)
	must(t, "Unlock", d.Unlock(ctx))
	must(t, "TerminateApp", d.TerminateApp(ctx, App))
	must(t, "LaunchApp", d.LaunchApp(ctx, App))
	return waitFor(t, d, "the conformance app's first screen", func(tr *sourceTree) bool {
		return find(tr.Root, byID("counter")) != nil && find(tr.Root, byID("rows")) != nil
	})
}

func center(n *node) device.Point { return n.Bounds.center() }

func infoAgrees(t *testing.T, d device.Driver) {
	ctx := ctxFor(t)
	fresh(t, d)
	info, err := d.Info(ctx)
	must(t, "Info", err)
	if info.Width <= 0 || info.Height <= 0 || info.Platform == "" {
		t.Fatalf("Info = %+v; want a platform and a size", info)
	}
	shot, err := d.Screenshot(ctx)
	must(t, "Screenshot", err)
	cfg, err := png.DecodeConfig(bytes.NewReader(shot))
	must(t, "decoding the screenshot", err)
	if cfg.Width != info.Width || cfg.Height != info.Height {
		t.Errorf("screenshot is %dx%d; Info says %dx%d", cfg.Width, cfg.Height, info.Width, info.Height)
	}
	tr := tree(t, d)
	if tr.Format == device.FormatUIAutomator && (tr.Width != info.Width || tr.Height != info.Height) {
		t.Errorf("source root is %dx%d; Info says %dx%d", tr.Width, tr.Height, info.Width, info.Height)
	}
}

func launchTerminate(t *testing.T, d device.Driver) {
	ctx := ctxFor(t)
	fresh(t, d)
	fg, err := d.ForegroundApp(ctx)
	if err != nil || fg != App {
		t.Fatalf("ForegroundApp after launch = %q, %v; want %s", fg, err, App)
	}
	must(t, "TerminateApp", d.TerminateApp(ctx, App))
	if fg, err := d.ForegroundApp(ctx); err != nil || fg == App {
		t.Fatalf("ForegroundApp after terminate = %q, %v; want another app", fg, err)
	}
	err = d.LaunchApp(ctx, "com.apex.does.not.exist")
	if !errors.Is(err, device.ErrNotFound) {
		t.Fatalf("LaunchApp(missing) = %v; want ErrNotFound", err)
	}
}

func counterText(tr *sourceTree) string {
	if n := find(tr.Root, byID("counter")); n != nil {
		return n.Text
	}
	return ""
}

func tapChanges(t *testing.T, d device.Driver) {
	tr := fresh(t, d)
	before := counterText(tr)
	must(t, "Tap", d.Tap(ctxFor(t), center(find(tr.Root, byID("counter")))))
	waitFor(t, d, "the counter to change from "+before, func(tr *sourceTree) bool {
		return counterText(tr) != before && counterText(tr) != ""
	})
}

func fieldText(tr *sourceTree) string {
	if n := find(tr.Root, byID("note")); n != nil {
		return n.Text
	}
	return ""
}

func inputText(t *testing.T, d device.Driver) {
	ctx := ctxFor(t)
	tr := fresh(t, d)
	field := find(tr.Root, byID("note"))
	must(t, "Tap the field", d.Tap(ctx, center(field)))
	waitFor(t, d, "the field to take focus", func(tr *sourceTree) bool {
		n := find(tr.Root, byID("note"))
		return n != nil && n.Focused
	})
	ascii := `it's 100%sure & "quoted" $HOME`
	must(t, "InputText ASCII", d.InputText(ctx, ascii))
	waitFor(t, d, "the field to read "+ascii, func(tr *sourceTree) bool { return fieldText(tr) == ascii })
	must(t, "InputText non-ASCII", d.InputText(ctx, " 你好"))
	waitFor(t, d, "the field to end in 你好", func(tr *sourceTree) bool { return fieldText(tr) == ascii+" 你好" })
}

func keys(t *testing.T, d device.Driver) {
	ctx := ctxFor(t)
	tr := fresh(t, d)
	row := find(tr.Root, byID("row"))
	if row == nil {
		t.Fatal("no row in the list")
	}
	must(t, "Tap a row", d.Tap(ctx, center(row)))
	waitFor(t, d, "the detail screen", func(tr *sourceTree) bool { return find(tr.Root, byID("picked")) != nil })
	must(t, "PressKey back", d.PressKey(ctx, device.KeyBack))
	waitFor(t, d, "the list after back", func(tr *sourceTree) bool {
		return find(tr.Root, byID("rows")) != nil && find(tr.Root, byID("picked")) == nil
	})
	must(t, "PressKey home", d.PressKey(ctx, device.KeyHome))
	if fg, err := d.ForegroundApp(ctx); err != nil || fg == App {
		t.Fatalf("ForegroundApp after home = %q, %v; want the launcher", fg, err)
	}
}

// firstRow is the text of the topmost row on screen.
func firstRow(tr *sourceTree) string {
	if n := find(tr.Root, byID("row")); n != nil {
		if n.Text != "" {
			return n.Text
		}
		if c := find(n, func(c *node) bool { return c.Text != "" }); c != nil {
			return c.Text
		}
	}
	return ""
}

func swipeScrolls(t *testing.T, d device.Driver) {
	tr := fresh(t, d)
	list := find(tr.Root, byID("rows"))
	before := firstRow(tr)
	if before == "" {
		t.Fatal("no row text before scrolling")
	}
	b := list.Bounds
	x := (b.X0 + b.X1) / 2
	h := b.Y1 - b.Y0
	must(t, "Swipe", d.Swipe(ctxFor(t), device.Point{X: x, Y: b.Y1 - h/10}, device.Point{X: x, Y: b.Y0 + h/10}, 300*time.Millisecond))
	waitFor(t, d, "the list to scroll past "+before, func(tr *sourceTree) bool {
		f := firstRow(tr)
		return f != "" && f != before
	})
}

func lockUnlock(t *testing.T, d device.Driver) {
	ctx := ctxFor(t)
	tr := fresh(t, d)
	before := counterText(tr)
	counter := center(find(tr.Root, byID("counter")))
	must(t, "Lock", d.Lock(ctx))
	t.Cleanup(func() { d.Unlock(context.Background()) })
	must(t, "Tap while locked", d.Tap(ctx, counter))
	must(t, "Unlock", d.Unlock(ctx))
	if fg, err := d.ForegroundApp(ctx); err != nil || fg != App {
		t.Fatalf("ForegroundApp after unlock = %q, %v; want %s", fg, err, App)
	}
	if got := counterText(tree(t, d)); got != before {
		t.Fatalf("a tap on the locked screen reached the app: counter %q, was %q", got, before)
	}
	must(t, "Tap after unlock", d.Tap(ctx, counter))
	waitFor(t, d, "the counter to change after unlock", func(tr *sourceTree) bool { return counterText(tr) != before })
}

// promptly bounds how long a call may run on a cancelled context.
const promptly = 2 * time.Second

func cancellation(t *testing.T, d device.Driver) {
	calls := map[string]func(ctx context.Context) error{
		"Info":       func(ctx context.Context) error { _, err := d.Info(ctx); return err },
		"Screenshot": func(ctx context.Context) error { _, err := d.Screenshot(ctx); return err },
		"Source":     func(ctx context.Context) error { _, err := d.Source(ctx); return err },
		"Tap":        func(ctx context.Context) error { return d.Tap(ctx, device.Point{X: 1, Y: 1}) },
		"InputText":  func(ctx context.Context) error { return d.InputText(ctx, "x") },
		"LaunchApp":  func(ctx context.Context) error { return d.LaunchApp(ctx, App) },
	}
	for name, call := range calls {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		start := time.Now()
		err := call(ctx)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s on a cancelled context = %v; want context.Canceled", name, err)
		}
		if el := time.Since(start); el > promptly {
			t.Errorf("%s on a cancelled context took %v", name, el)
		}
	}
}

// Offline checks that a device which vanishes in the middle of calls
// (kill) makes the driver fail with device.ErrOffline within bound.
func Offline(t *testing.T, d device.Driver, kill func(), bound time.Duration) {
	ctx := ctxFor(t)
	if _, err := d.Screenshot(ctx); err != nil {
		t.Fatalf("Screenshot before the kill: %v", err)
	}
	errs := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		for {
			if _, err := d.Screenshot(ctx); err != nil {
				errs <- err
				return
			}
		}
	}()
	<-started
	kill()
	killed := time.Now()
	select {
	case err := <-errs:
		if !errors.Is(err, device.ErrOffline) {
			t.Fatalf("after the kill: %v; want device.ErrOffline", err)
		}
		if el := time.Since(killed); el > bound {
			t.Fatalf("ErrOffline came %v after the kill; want within %v", el, bound)
		}
		t.Logf("ErrOffline %v after the kill: %v", time.Since(killed).Round(time.Millisecond), err)
	case <-time.After(bound + 5*time.Second):
		t.Fatalf("no error %v after the device was killed: the driver hangs", bound+5*time.Second)
	}
}
