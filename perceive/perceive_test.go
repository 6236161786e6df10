package perceive_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/internal/labtest"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/ocr"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/sim/lab"
)

type counting struct {
	e     ocr.Engine
	calls atomic.Int64
}

func (c *counting) Recognize(ctx context.Context, img []byte, o *ocr.Options) (*ocr.Result, error) {
	c.calls.Add(1)
	return c.e.Recognize(ctx, img, o)
}

// TestPerceive: a screen whose tree holds its text costs no screenshot and
// no OCR; the Arcade's canvas board is read, and its pixel-only button
// becomes an OCR element; with OCR off nothing is read.
func TestPerceive(t *testing.T) {
	tess, err := ocr.NewTesseract(context.Background(), nil)
	if err != nil {
		t.Skipf("tesseract unavailable: %v", err)
	}
	defer tess.Close()
	dev, d := labtest.Android(t, lab.Options{Android: 1, AppFiles: []string{"../examples/apps/arcade.yaml"}})
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(60*time.Second))
	defer cancel()
	if err := d.LaunchApp(ctx, "com.apex.arcade"); err != nil {
		t.Fatal(err)
	}
	e := &counting{e: tess}
	p := perceive.New(d, &perceive.Options{Engine: e})
	defer p.Close()

	home := observe(t, p)
	if home.PNG != nil || e.calls.Load() != 0 || home.Scene != home.Tree {
		t.Errorf("a sound tree: screenshot taken %v, %d recognitions", home.PNG != nil, e.calls.Load())
	}
	dev.Phone.Tap(centre(t, home.Scene, "Play"))
	board := observe(t, p)
	if e.calls.Load() == 0 {
		t.Fatal("the canvas board was not read")
	}
	var button *scene.Element
	for i, el := range board.Scene.Elements {
		if el.Text == "Start game" && el.Source == scene.SourceOCR {
			button = &board.Scene.Elements[i]
		}
	}
	if button == nil {
		t.Fatalf("no OCR element for the pixel-only button:\n%s", board.Scene.Text())
	}
	for _, el := range board.Tree.Elements {
		if el.Text == "Start game" {
			t.Errorf("the tree's own Scene has the OCR element %v", el)
		}
	}

	off := perceive.New(d, &perceive.Options{Mode: perceive.Off, Engine: e})
	before := e.calls.Load()
	if s := observe(t, off); s.Scene != s.Tree || e.calls.Load() != before {
		t.Errorf("OCR off read the screen (%d recognitions)", e.calls.Load()-before)
	}
}

func observe(t *testing.T, p *perceive.Perceiver) *perceive.Screen {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(30*time.Second))
	defer cancel()
	s, err := p.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Perceive(ctx, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func centre(t *testing.T, sc *scene.Scene, text string) (int, int) {
	t.Helper()
	for _, el := range sc.Elements {
		if el.Text == text {
			return el.Bounds.Center()
		}
	}
	t.Fatalf("no %q on screen:\n%s", text, sc.Text())
	return 0, 0
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]perceive.Mode{"": perceive.Auto, "auto": perceive.Auto, "always": perceive.Always, "off": perceive.Off} {
		if got, err := perceive.ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := perceive.ParseMode("sometimes"); err == nil {
		t.Error("ParseMode(sometimes): no error")
	}
}

// onApp starts a simulated phone with app in front and a Perceiver over
// it that reads no text with OCR and gives the screen as long to settle as
// patience allows (one observation alone can pass the 3 s default on a
// busy machine); ctx bounds the test.
func onApp(t *testing.T, app string) (*lab.Device, *android.Driver, *perceive.Perceiver, context.Context) {
	t.Helper()
	dev, d := labtest.App(t, app)
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(60*time.Second))
	t.Cleanup(cancel)
	p := perceive.New(d, &perceive.Options{Mode: perceive.Off, Timing: perceive.Timing{SettleTimeout: patience.Of(3 * time.Second)}})
	t.Cleanup(p.Close)
	return dev, d, p, ctx
}

// settled settles the screen, and fails t when it cannot be observed or
// does not settle; what names the moment.
func settled(t *testing.T, ctx context.Context, p *perceive.Perceiver, what string) *perceive.Screen {
	t.Helper()
	s, err := p.Settle(ctx)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !s.Settled {
		t.Fatalf("%s: the screen did not settle", what)
	}
	return s
}
