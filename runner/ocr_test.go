package runner

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/internal/labtest"
	"github.com/apexagent/apex/ocr"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/sim/lab"
	"github.com/apexagent/apex/store"
)

// These tests drive the simulated phone through adbd and the Android
// driver (as `apex run --sim` does) with the Arcade app, whose board holds
// buttons that exist only in pixels.

const arcadeApp = "../examples/apps/arcade.yaml"

// countingOCR counts the recognitions a run asks for.
type countingOCR struct {
	e     ocr.Engine
	calls atomic.Int64
}

func (c *countingOCR) Recognize(ctx context.Context, img []byte, o *ocr.Options) (*ocr.Result, error) {
	c.calls.Add(1)
	return c.e.Recognize(ctx, img, o)
}

var (
	tessOnce sync.Once
	tess     *ocr.Tesseract
	tessErr  error
)

// sharedOCR is one Tesseract engine for the package's tests, counted per
// test; tests skip when tesseract is not installed.
func sharedOCR(t *testing.T) *countingOCR {
	t.Helper()
	tessOnce.Do(func() { tess, tessErr = ocr.NewTesseract(context.Background(), nil) })
	if tessErr != nil {
		t.Skipf("tesseract unavailable: %v", tessErr)
	}
	return &countingOCR{e: tess}
}

func arcadePhone(t *testing.T) (*lab.Device, *android.Driver) {
	t.Helper()
	return startPhone(t, lab.Options{Android: 1, AppFiles: []string{arcadeApp}})
}

// startPhone starts one simulated phone and drives it through adbd and the
// Android driver, the way `apex run --sim` does.
func startPhone(t *testing.T, opts lab.Options) (*lab.Device, *android.Driver) {
	t.Helper()
	return labtest.Android(t, opts)
}

func ocrOptions(st *store.Store, e ocr.Engine) *Options {
	o := fastOptions(st)
	o.Perception.Engine = e
	o.FindTimeout, o.AssertTimeout = 2*time.Second, time.Second
	return o
}

// mustPass runs src and fails the test unless the run passed.
func mustPass(t *testing.T, d *android.Driver, src string, opts *Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), d, load(t, src), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != store.StatusPassed {
		t.Fatalf("run %s: %s", res.Status, res.Reason)
	}
	return res
}

// stepScenes returns the recorded Scene of every step of the run.
func stepScenes(t *testing.T, st *store.Store, runID string) map[string]*scene.Scene {
	t.Helper()
	steps, err := st.Steps(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*scene.Scene{}
	for _, s := range steps {
		var sc scene.Scene
		if len(s.Scene) > 0 && json.Unmarshal(s.Scene, &sc) == nil {
			out[s.Name] = &sc
		}
	}
	return out
}

const pixelButtonScript = `
android:
  launch: com.apex.arcade
tasks:
  - name: play through the canvas
    flow:
      - tap: Play
      - tap: Start game
      - assert: {exists: Level one}
      - assert:
          textContains: Score 0
          element: {id: field}
`

func TestPixelOnlyButtonTapped(t *testing.T) {
	e := sharedOCR(t)
	dev, d := arcadePhone(t)
	st := openStore(t)
	res := mustPass(t, d, pixelButtonScript, ocrOptions(st, e))
	state, err := dev.Phone.State("com.apex.arcade")
	if err != nil || state["games"] != 1.0 && state["games"] != 1 {
		t.Errorf("games = %v (%v): the tap on the pixel-only button did not start a game", state["games"], err)
	}
	sc := stepScenes(t, st, res.Run.ID)["tap: Start game"]
	if sc == nil {
		t.Fatal("no Scene recorded for the tap on Start game")
	}
	var found bool
	for _, el := range sc.Elements {
		if el.Text == "Start game" && el.Source == scene.SourceOCR && el.Confidence > 0 && el.Confidence < 1 {
			found = true
		}
	}
	if !found {
		t.Errorf("the recorded Scene has no OCR element for Start game:\n%s", sc.Text())
	}
	if e.calls.Load() == 0 {
		t.Error("no OCR ran")
	}
}

const staleScript = `
android:
  launch: com.apex.arcade
tasks:
  - name: the tree lags behind the screen
    flow:
      - runAdbShell: setprop debug.apex.stale_tree 1
      - tap: Play
      - tap: Start game
      - assert: {exists: Level one}
      - assert: {notExists: Word wall}
      - runAdbShell: setprop debug.apex.stale_tree 0
      - assert: {exists: {id: field}}
`

func TestStaleTreeRecovered(t *testing.T) {
	e := sharedOCR(t)
	dev, d := arcadePhone(t)
	st := openStore(t)
	res := mustPass(t, d, staleScript, ocrOptions(st, e))
	if state, _ := dev.Phone.State("com.apex.arcade"); state["games"] != 1.0 && state["games"] != 1 {
		t.Errorf("games = %v, want 1", state["games"])
	}
	sc := stepScenes(t, st, res.Run.ID)["tap: Start game"]
	if sc == nil || !strings.Contains(sc.Dropped, "stale tree elements hidden") {
		t.Errorf("the Scene the stale step saw does not say stale tree elements were hidden:\n%v", sc)
	}
}

// TestLocatorFallsBackToPixels taps a label drawn inside an image whose
// node has no text: the tree looks sound, so only the locator's miss
// makes the runner read the screen.
func TestLocatorFallsBackToPixels(t *testing.T) {
	e := sharedOCR(t)
	_, d := arcadePhone(t)
	st := openStore(t)
	src := `
android:
  launch: com.apex.arcade
tasks:
  - name: bonus
    flow:
      - tap: Bonus
      - assert: {exists: Tap Start game to play}
`
	mustPass(t, d, src, ocrOptions(st, e))
	if n := e.calls.Load(); n != 1 {
		t.Errorf("%d recognitions, want 1 (the miss)", n)
	}
}

func TestSoundTreeCostsNoOCR(t *testing.T) {
	e := sharedOCR(t)
	_, d := arcadePhone(t)
	st := openStore(t)
	src := `
android:
  launch: com.apex.arcade
tasks:
  - name: tree only
    flow:
      - assert: {exists: Welcome to the arcade}
      - tap: 中文
      - back
      - tap: Play
      - back
      - assert: {exists: Word wall}
`
	opts := ocrOptions(st, e)
	opts.Perception.Mode = perceive.Off
	mustPass(t, d, src, opts)
	if n := e.calls.Load(); n != 0 {
		t.Errorf("OCR off: %d recognitions", n)
	}
	// The same screens in auto mode: only the canvas screens are read.
	src = strings.ReplaceAll(src, "      - tap: 中文\n      - back\n      - tap: Play\n      - back\n", "")
	opts.Perception.Mode = perceive.Auto
	mustPass(t, d, src, opts)
	if n := e.calls.Load(); n != 0 {
		t.Errorf("a screen whose tree holds all its text cost %d recognitions, want 0", n)
	}
	// Asked for, OCR reads every settled screen and confirms the tree.
	opts.Perception.Mode = perceive.Always
	res := mustPass(t, d, src, opts)
	if n := e.calls.Load(); n == 0 {
		t.Error("OCRAlways ran no recognition")
	}
	sc := stepScenes(t, st, res.Run.ID)["assert: exists Word wall"]
	if sc == nil {
		t.Fatal("no Scene recorded for the last assert")
	}
	for _, el := range sc.Elements {
		if el.Text == "Word wall" && el.Source != scene.SourceBoth {
			t.Errorf("Word wall source %q, want both", el.Source)
		}
	}
}
