package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/store"
)

// t0 is the synthetic runs' start: fixed so reports are byte-for-byte stable.
var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

var screens sync.Map // seed%16 -> PNG bytes; encoding is the slow part of long runs

// screen draws a small phone screen: a status bar and a button whose color
// depends on seed.
func screen(t testing.TB, seed int) []byte {
	t.Helper()
	seed %= 16
	if b, ok := screens.Load(seed); ok {
		return b.([]byte)
	}
	img := image.NewRGBA(image.Rect(0, 0, 108, 240))
	for y := range 240 {
		for x := range 108 {
			c := color.RGBA{uint8(200 + seed), 230, 240, 255}
			if y < 12 {
				c = color.RGBA{30, 30, 30, 255}
			} else if y >= 110 && y < 130 && x >= 20 && x < 88 {
				c = color.RGBA{uint8(seed * 15), 90, 200, 255}
			}
			i := img.PixOffset(x, y)
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	screens.Store(seed, buf.Bytes())
	return buf.Bytes()
}

func sceneJSON(t testing.TB, i int) json.RawMessage {
	t.Helper()
	sc := scene.Scene{Width: 1080, Height: 2400, Package: "com.apex.shop", Elements: []scene.Element{
		{ID: "e1", Type: "text", Text: "Shop <home> & \"deals\"", Bounds: scene.Rect{X0: 0, Y0: 120, X1: 1080, Y1: 260}, Source: "tree", Confidence: 1},
		{ID: "e2", Type: "button", Text: fmt.Sprintf("Add to cart %d", i), ResourceID: "com.apex.shop:id/add",
			Bounds: scene.Rect{X0: 200, Y0: 1100, X1: 880, Y1: 1300}, Flags: scene.Flags{Clickable: true}, Source: "tree", Confidence: 1},
		{ID: "e3", Type: "input", Desc: "Search", Bounds: scene.Rect{X0: 40, Y0: 300, X1: 1040, Y1: 420}, Flags: scene.Flags{Clickable: true, Editable: true, Focused: true}, Source: "tree", Confidence: 1},
	}}
	data, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func heavyScene(t testing.TB, i int) json.RawMessage {
	t.Helper()
	sc := scene.Scene{Width: 1080, Height: 2400, Package: "com.apex.shop"}
	for e := range 30 {
		sc.Elements = append(sc.Elements, scene.Element{
			ID: fmt.Sprintf("e%d", e+1), Type: "button", Text: fmt.Sprintf("Product %d-%d \"Deluxe\" <edition>", i, e),
			ResourceID: "com.apex.shop:id/product_title", Bounds: scene.Rect{X0: 0, Y0: e * 80, X1: 1080, Y1: e*80 + 80},
			Flags: scene.Flags{Clickable: true}, Source: "tree", Confidence: 1,
		})
	}
	data, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

type synth struct {
	steps  int
	failAt int  // 1-based step that fails (0: none)
	finish bool // record the end of the run
	tasks  []string
	// heavy makes every step as large as real ones get: a full Scene
	// (~5 KB), long names, large params and results.
	heavy bool
}

// makeRun records a synthetic run with deterministic IDs and timestamps in
// a new store under dir, and returns the store and the run ID.
func makeRun(t testing.TB, dir string, sy synth) (*store.Store, string) {
	t.Helper()
	ctx := context.Background()
	clock := t0
	s, err := store.OpenWith(dir, &store.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	run, err := s.StartRun(ctx, store.Run{ID: "run-0001", Name: "shop checkout", Script: "examples/shop-checkout.yaml", Device: "sim/127.0.0.1:5555", Platform: "android", Started: t0})
	if err != nil {
		t.Fatal(err)
	}
	if len(sy.tasks) == 0 {
		sy.tasks = []string{"search", "checkout"}
	}
	var last store.Step
	at := t0.Add(50 * time.Millisecond)
	for i := 1; i <= sy.steps; i++ {
		st := store.Step{
			RunID: run.ID, Index: i, Task: sy.tasks[(i-1)*len(sy.tasks)/sy.steps],
			Name: fmt.Sprintf(`tap "Add to cart %d" <b>`, i), Action: "tap",
			Params: json.RawMessage(fmt.Sprintf(`{"locator":{"text":"Add to cart %d"}}`, i)), Status: store.StepPassed,
			Started: at, Duration: time.Duration(100+i) * time.Millisecond, DeviceTime: 95 * time.Millisecond,
			Point: &device.Point{X: 540, Y: 1200}, Before: screen(t, i), After: screen(t, i+1), Scene: sceneJSON(t, i),
		}
		switch {
		case i%5 == 0:
			st.Action, st.Name, st.Point = "assert", "assert total > 0", nil
			st.Params = json.RawMessage(`{"numberGreater":{"id":"total","value":0}}`)
			st.Result = json.RawMessage(`{"value":42}`)
		case i%7 == 0:
			st.Action, st.Name, st.Point, st.Before, st.After = "sleep", "sleep 100ms", nil, nil, nil
		}
		if sy.heavy {
			st.Name = strings.Repeat(`aiAct "find the cheapest <item> & add it" `, 5)
			st.Scene = heavyScene(t, i)
			st.Params = json.RawMessage(fmt.Sprintf(`{"prompt":%q}`, strings.Repeat(`say "hi" & <go> `, 200)))
			st.Result = json.RawMessage(fmt.Sprintf(`{"items":[%s0]}`, strings.Repeat(`"a \"quoted\" <value>",`, 500)))
		}
		if i == sy.failAt {
			st.Status, st.Error = store.StepFailed, `element "Checkout" not found; candidates: e2 button "Add to cart" [200,1100][880,1300]`
		} else if sy.failAt > 0 && i > sy.failAt {
			st.Status, st.Before, st.After, st.Point, st.Scene = store.StepSkipped, nil, nil, nil, nil
		}
		if last, err = s.AddStep(ctx, st); err != nil {
			t.Fatal(err)
		}
		at = at.Add(st.Duration + 5*time.Millisecond)
	}
	_ = last
	if sy.finish {
		clock = at
		status, reason := store.StatusPassed, ""
		if sy.failAt > 0 {
			status, reason = store.StatusFailed, fmt.Sprintf("step %d: element \"Checkout\" not found", sy.failAt)
		}
		if err := s.FinishRun(ctx, run.ID, status, reason); err != nil {
			t.Fatal(err)
		}
	}
	return s, run.ID
}
