package engine_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/internal/labtest"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/sim/lab"
)

// recorder keeps the records a session hands it.
type recorder struct {
	mu   sync.Mutex
	recs []*engine.Record
}

func (r *recorder) Step(ctx context.Context, rec *engine.Record) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}

// countingDriver counts the UI source reads; between Blind and the next
// input it answers only the first, so a step that looks at the screen
// again before acting fails.
type countingDriver struct {
	device.Driver
	sources atomic.Int64
	looks   atomic.Int64 // reads left while blind; -1: not blind
}

var errBlind = errors.New("the screen was read again before acting")

func (c *countingDriver) Source(ctx context.Context) (device.Source, error) {
	c.sources.Add(1)
	if c.looks.Load() >= 0 && c.looks.Add(-1) < 0 {
		return device.Source{}, errBlind
	}
	return c.Driver.Source(ctx)
}

// Blind allows n more source reads until the next input.
func (c *countingDriver) Blind(n int64) { c.looks.Store(n) }

func (c *countingDriver) Swipe(ctx context.Context, from, to device.Point, d time.Duration) error {
	c.looks.Store(-1)
	return c.Driver.Swipe(ctx, from, to, d)
}

func session(t *testing.T, app string) (*lab.Device, *countingDriver, *engine.Session, *recorder) {
	t.Helper()
	dev, d := labtest.Android(t, lab.Options{})
	if app != "" {
		if err := d.LaunchApp(testCtx(t), app); err != nil {
			t.Fatal(err)
		}
	}
	cd := &countingDriver{Driver: d}
	cd.looks.Store(-1)
	rec := &recorder{}
	s := engine.New(cd, &engine.Options{Recorder: rec, Perception: perceive.Options{Mode: perceive.Off},
		FindTimeout: 2 * time.Second, ExpectTimeout: 500 * time.Millisecond})
	t.Cleanup(s.Close)
	return dev, cd, s, rec
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func tap(text string) action.Call {
	return action.Tap.MustCall(&action.TapParams{Locate: action.Locator{Text: text}})
}

var pngMagic = []byte("\x89PNG")

// TestRunRecordsEveryPart: a step leaves the screen it acted on (Scene and
// a screenshot of that moment), the screen it settled on, the point and
// element it touched, its verdict and its timings.
func TestRunRecordsEveryPart(t *testing.T) {
	_, _, s, rec := session(t, "com.android.settings")
	r := s.Run(testCtx(t), engine.Step{Call: tap("Network & internet"), Name: "tap: Network",
		Expect: &check.Check{Kind: check.Exists, Target: action.Locator{ID: "wifi"}}})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if len(rec.recs) != 1 || rec.recs[0] != r {
		t.Fatalf("recorded %d records, want the one returned", len(rec.recs))
	}
	if r.Status != engine.Passed || r.Action != "Tap" || !strings.Contains(string(r.Params), "Network") {
		t.Errorf("status %s, action %s, params %s", r.Status, r.Action, r.Params)
	}
	if r.Before == nil || !bytes.HasPrefix(r.Before.PNG, pngMagic) || r.After == nil || !bytes.HasPrefix(r.After.PNG, pngMagic) {
		t.Fatal("before or after screenshot missing")
	}
	if r.Element == nil || !strings.HasPrefix(r.Element.Text, "Network & internet") || r.Point == nil || !r.Element.Bounds.Contains(r.Point.X, r.Point.Y) {
		t.Errorf("touched %+v at %v, want the Network & internet row", r.Element, r.Point)
	}
	if _, ok := r.Before.Scene.Element(r.Element.ID); !ok {
		t.Error("the element touched is not in the Scene recorded as acted on")
	}
	if r.Before.FP == r.After.FP {
		t.Error("after is the same screen as before: the step did not settle on the new screen")
	}
	if r.Verdict == nil || !r.Verdict.Pass {
		t.Errorf("verdict = %+v, want a pass", r.Verdict)
	}
	if r.Duration <= 0 || r.DeviceTime <= 0 || r.DeviceTime > r.Duration {
		t.Errorf("duration %v, device time %v", r.Duration, r.DeviceTime)
	}
}

// TestStepNeverActsOnAChangedScreen: when the screen changes between steps
// (a popup, another client), the next step observes it again instead of
// acting on the screen the last step left.
func TestStepNeverActsOnAChangedScreen(t *testing.T) {
	_, cd, s, _ := session(t, "com.android.settings")
	ctx := testCtx(t)
	if r := s.Run(ctx, engine.Step{Call: tap("Network & internet")}); r.Err != nil {
		t.Fatal(r.Err)
	}
	// Back behind the session's back.
	if err := cd.PressKey(ctx, device.KeyBack); err != nil {
		t.Fatal(err)
	}
	r := s.Run(ctx, engine.Step{Call: tap("Network & internet")})
	if r.Err != nil {
		t.Fatalf("the step acted on the screen it last saw: %v", r.Err)
	}
	if !hasText(r.After, "Connected to ApexNet") {
		t.Errorf("after the second tap the screen is not the network page:\n%s", r.After.Scene.Text())
	}
}

func hasText(sc *perceive.Screen, text string) bool {
	for _, e := range sc.Scene.Elements {
		if e.Text == text {
			return true
		}
	}
	return false
}

// TestAllTargetsFoundOnOneScreen: the locators of a call are resolved on
// the screen where the step found them, without looking again.
func TestAllTargetsFoundOnOneScreen(t *testing.T) {
	_, cd, s, _ := session(t, "com.android.settings")
	ctx := testCtx(t)
	if _, err := s.Current(ctx); err != nil {
		t.Fatal(err)
	}
	c := action.DragAndDrop.MustCall(&action.DragAndDropParams{From: action.Locator{Text: "Network & internet"}, To: action.Locator{Text: "Display"}})
	// One look at the start (is the screen still the one left?); none
	// to resolve the two targets before the drag.
	cd.Blind(1)
	r := s.Run(ctx, engine.Step{Call: c})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	refs := r.Call.Locators()
	if len(refs) != 2 || !refs[0].Locator.Resolved() || !refs[1].Locator.Resolved() {
		t.Fatalf("targets not resolved: %+v", refs)
	}
}

// TestExpectation: an expectation that does not come true fails the step
// with its evidence (and the author's message first), after re-checking
// for ExpectTimeout; a check-only step records the screen it judged.
func TestExpectation(t *testing.T) {
	_, _, s, _ := session(t, "com.android.settings")
	ctx := testCtx(t)
	r := s.Run(ctx, engine.Step{Expect: &check.Check{Kind: check.Exists, Target: action.Locator{Text: "No such row"}}, Message: "the row shows"})
	if r.Err == nil || r.Status != engine.Failed || !strings.HasPrefix(r.Err.Error(), "the row shows") {
		t.Fatalf("status %s, err %v", r.Status, r.Err)
	}
	if r.Verdict == nil || r.Verdict.Pass || r.Before != r.After || r.Before.PNG == nil {
		t.Errorf("verdict %+v; a check-only step's before and after are the screen judged", r.Verdict)
	}
	r = s.Run(ctx, engine.Step{Expect: &check.Check{Kind: check.Exists, Target: action.Locator{Text: "Display"}}})
	if r.Err != nil || r.Action != "" {
		t.Errorf("err %v, action %q", r.Err, r.Action)
	}
}

// TestOptionalAndMissing: an optional step whose target is absent is
// skipped at once; a required one waits FindTimeout, then fails with
// ErrNotFound.
func TestOptionalAndMissing(t *testing.T) {
	_, _, s, rec := session(t, "com.android.settings")
	ctx := testCtx(t)
	r := s.Run(ctx, engine.Step{Call: tap("Close popup"), Optional: true})
	if r.Err != nil || r.Status != engine.Skipped || !strings.Contains(r.Skipped, "Close popup") {
		t.Errorf("optional: status %s, err %v, skipped %q", r.Status, r.Err, r.Skipped)
	}
	r = s.Run(ctx, engine.Step{Call: tap("Close popup"), FindTimeout: 50 * time.Millisecond})
	if !errors.Is(r.Err, action.ErrNotFound) || r.Acted {
		t.Errorf("required: err %v, acted %v", r.Err, r.Acted)
	}
	if len(rec.recs) != 2 {
		t.Errorf("%d records, want 2", len(rec.recs))
	}
}

// TestCustomAndCancel: a custom step is recorded like any other; a step
// whose context ends leaves its record, and the session observes afresh.
func TestCustomAndCancel(t *testing.T) {
	_, _, s, rec := session(t, "")
	ctx := testCtx(t)
	r := s.Run(ctx, engine.Step{Name: "read", Custom: func(ctx context.Context, s *engine.Session, r *engine.Record) error {
		r.Action, r.Result = "read", "42"
		return nil
	}})
	if r.Err != nil || r.Action != "read" || r.Result != "42" || r.Before == nil {
		t.Errorf("custom: %+v", r)
	}
	cctx, cancel := context.WithCancel(ctx)
	r = s.Run(cctx, engine.Step{Name: "wait", Custom: func(ctx context.Context, s *engine.Session, r *engine.Record) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}})
	if !engine.Fatal(cctx, r.Err) || len(rec.recs) != 2 {
		t.Errorf("canceled: err %v, %d records (the recorder must get a live context)", r.Err, len(rec.recs))
	}
	if r := s.Run(ctx, engine.Step{Call: tap("Settings")}); r.Err != nil {
		t.Errorf("after a canceled step: %v", r.Err)
	}
}

// TestOnAChangedScreenNothingHappens: a step planned on a screen the
// device no longer shows fails with ErrScreenChanged and does not act.
func TestOnAChangedScreenNothingHappens(t *testing.T) {
	_, cd, s, _ := session(t, "com.android.settings")
	ctx := testCtx(t)
	planned, err := s.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cd.LaunchApp(ctx, "com.apex.shop"); err != nil {
		t.Fatal(err)
	}
	r := s.Run(ctx, engine.Step{Call: tap("Network & internet"), On: planned})
	if !errors.Is(r.Err, engine.ErrScreenChanged) || r.Acted {
		t.Fatalf("err %v, acted %v; want ErrScreenChanged before acting", r.Err, r.Acted)
	}
	if r.Before == nil || r.Before.FP == planned.FP {
		t.Error("the record does not show the screen the device showed")
	}
	if r := s.Run(ctx, engine.Step{Call: tap("Network & internet"), On: planned}); !errors.Is(r.Err, engine.ErrScreenChanged) {
		t.Errorf("a second try on the old screen: %v", r.Err)
	}
}
