package ocr

import (
	"context"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"strings"
	"sync"
	"testing"
	"time"
)

// found reports whether res holds a word equal to want (ignoring case)
// whose box overlaps where it was drawn.
func found(res *Result, want drawn) bool {
	for _, w := range res.Words {
		if strings.EqualFold(strings.Trim(w.Text, ".,:;'\"“”‘’"), want.text) && iou(w.Box, want.box) > 0.5 {
			return true
		}
	}
	return false
}

func TestCanvasWordsRecovered(t *testing.T) {
	e := testEngine(t)
	img, words := canvasScreen(t)
	if len(words) < 40 {
		t.Fatalf("test screen has %d words, want at least 40", len(words))
	}
	res, err := e.Recognize(context.Background(), img, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Width != 1080 || res.Height != 2400 || res.Region != image.Rect(0, 0, 1080, 2400) {
		t.Errorf("result size %dx%d region %v, want 1080x2400 and the whole image", res.Width, res.Height, res.Region)
	}
	var missed []string
	for _, w := range words {
		if !found(res, w) {
			missed = append(missed, w.text)
		}
	}
	got := float64(len(words)-len(missed)) / float64(len(words))
	t.Logf("recovered %d of %d words (%.0f%%); missed %v", len(words)-len(missed), len(words), got*100, missed)
	if got < 0.95 {
		t.Errorf("recovered %.0f%% of rendered words, want at least 95%%; read:\n%s", got*100, res.Text())
	}
	for _, w := range res.Words {
		if w.Confidence <= 0 || w.Confidence > 1 {
			t.Errorf("word %q confidence %v outside (0,1]", w.Text, w.Confidence)
		}
	}
	// Lines come from Tesseract's line numbers: words of one line share it.
	for _, l := range res.Lines {
		for _, w := range l.Words {
			if !w.Box.In(l.Box) {
				t.Errorf("line %q box %v does not hold word %q %v", l.Text, l.Box, w.Text, w.Box)
			}
		}
	}
}

func TestChineseLabels(t *testing.T) {
	e := testEngine(t)
	if !strings.Contains(strings.Join(e.Languages(), "+"), "chi_sim") {
		t.Skip("chi_sim data not installed: apt-get install tesseract-ocr-chi-sim")
	}
	img, labels := chineseScreen(t)
	res, err := e.Recognize(context.Background(), img, nil)
	if err != nil {
		t.Fatal(err)
	}
	var missed []string
	for _, want := range labels {
		ok := false
		for _, l := range res.Lines {
			if strings.ReplaceAll(l.Text, " ", "") == want.text && iou(l.Box, want.box) > 0.5 {
				ok = true
			}
		}
		if !ok {
			missed = append(missed, want.text)
		}
	}
	if len(missed) > 1 {
		t.Errorf("missed Chinese labels %q (of %d); read:\n%s", missed, len(labels), res.Text())
	}
}

func TestRegionMapsBoxesBack(t *testing.T) {
	e := testEngine(t)
	img, words := canvasScreen(t)
	for _, i := range []int{0, 7, len(words) - 1} {
		want := words[i]
		region := want.box.Inset(-24)
		t.Run(want.text, func(t *testing.T) {
			res, err := e.Recognize(context.Background(), img, &Options{Region: region})
			if err != nil {
				t.Fatal(err)
			}
			if res.Region != region {
				t.Errorf("region %v, want %v", res.Region, region)
			}
			if !found(res, want) {
				t.Errorf("region %v: want %q at %v, read %+v", region, want.text, want.box, res.Words)
			}
			for _, w := range res.Words {
				if !w.Box.In(region) {
					t.Errorf("word %q box %v outside region %v", w.Text, w.Box, region)
				}
			}
		})
	}
	t.Run("clipped to the image", func(t *testing.T) {
		res, err := e.Recognize(context.Background(), img, &Options{Region: image.Rect(-100, -100, 600, 200)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Region != image.Rect(0, 0, 600, 200) || !found(res, words[0]) {
			t.Errorf("region %v words %+v, want (0,0)-(600,200) holding %q", res.Region, res.Words, words[0].text)
		}
	})
}

func TestCacheHitSkipsTesseract(t *testing.T) {
	e := testEngine(t)
	c := NewCache(e, 4)
	img, words := canvasScreen(t)
	opts := &Options{Region: words[3].box.Inset(-20)}
	before := e.Runs()
	first, err := c.Recognize(context.Background(), img, opts)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Recognize(context.Background(), img, opts)
	if err != nil {
		t.Fatal(err)
	}
	if runs := e.Runs() - before; runs != 1 {
		t.Errorf("tesseract ran %d times for two identical calls, want 1", runs)
	}
	if first.Text() != second.Text() || !found(second, words[3]) {
		t.Errorf("cached result %q differs from first %q", second.Text(), first.Text())
	}
	other := &Options{Region: words[4].box.Inset(-20)}
	if _, err := c.Recognize(context.Background(), img, other); err != nil {
		t.Fatal(err)
	}
	if runs := e.Runs() - before; runs != 2 {
		t.Errorf("a different region ran tesseract %d times in all, want 2", runs)
	}
	if s := c.Stats(); s.Hits != 1 || s.Misses != 2 || s.Entries != 2 {
		t.Errorf("stats %+v, want 1 hit, 2 misses, 2 entries", s)
	}
}

func TestConcurrentRegions(t *testing.T) {
	e := testEngine(t)
	img, words := canvasScreen(t)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := range 6 {
		wg.Go(func() {
			want := words[10+i]
			res, err := e.Recognize(context.Background(), img, &Options{Region: want.box.Inset(-20)})
			if err != nil {
				errs <- err
			} else if !found(res, want) {
				errs <- errors.New("missed " + want.text + ", read " + res.Text())
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCancelStopsTesseract(t *testing.T) {
	e := testEngine(t)
	img, words := canvasScreen(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Recognize(ctx, img, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: err %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := e.Recognize(ctx, img, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("call past its deadline: err %v, want context.DeadlineExceeded", err)
	}
	// The engine replaces the killed process.
	res, err := e.Recognize(context.Background(), img, &Options{Region: words[2].box.Inset(-20)})
	if err != nil || !found(res, words[2]) {
		t.Errorf("after cancellation: err %v, result %v", err, res)
	}
}

func TestOneShotProcess(t *testing.T) {
	testEngine(t)
	e, err := NewTesseract(context.Background(), &TesseractOptions{Resident: -1, Languages: []string{"eng"}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	img, words := canvasScreen(t)
	res, err := e.Recognize(context.Background(), img, &Options{Region: words[5].box.Inset(-20)})
	if err != nil || !found(res, words[5]) {
		t.Errorf("one-shot: err %v, result %+v, want %q", err, res, words[5].text)
	}
}

func TestTesseractErrors(t *testing.T) {
	ctx := context.Background()
	_, err := NewTesseract(ctx, &TesseractOptions{Path: "/nonexistent/tesseract"})
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "apt-get install tesseract-ocr tesseract-ocr-eng") {
		t.Errorf("missing program: err %v, want ErrNotInstalled telling how to install", err)
	}
	e := testEngine(t)
	_, err = NewTesseract(ctx, &TesseractOptions{Languages: []string{"xyz_abc"}})
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "apt-get install tesseract-ocr-xyz-abc") {
		t.Errorf("missing language: err %v, want ErrNotInstalled naming tesseract-ocr-xyz-abc", err)
	}
	img, _ := canvasScreen(t)
	if _, err := e.Recognize(ctx, img, &Options{Languages: []string{"xyz_abc"}}); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("call with a missing language: err %v, want ErrNotInstalled", err)
	}
	if _, err := e.Recognize(ctx, []byte("not an image"), nil); !errors.Is(err, ErrBadImage) {
		t.Errorf("garbage input: err %v, want ErrBadImage", err)
	}
	if _, err := e.Recognize(ctx, img, &Options{Region: image.Rect(2000, 3000, 2100, 3100)}); err == nil {
		t.Error("region outside the image: no error")
	}
	if _, err := e.Recognize(ctx, img, &Options{Region: image.Rect(0, 0, 100, 100), Scale: 50}); err == nil {
		t.Error("scale 50: no error")
	}
}

// TestButtonsRead checks labels phones draw that Tesseract alone misses:
// white text on a coloured button and text boxed in by an outline.
func TestButtonsRead(t *testing.T) {
	e := testEngine(t)
	_, bold := goFonts(t)
	img := image.NewRGBA(image.Rect(0, 0, 1080, 900))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(img, image.Rect(40, 100, 1040, 220), image.NewUniform(color.RGBA{103, 80, 164, 255}), image.Point{}, draw.Src)
	filled := drawText(img, face(t, bold, 44), 420, 135, "Checkout", color.White)
	outline := image.Rect(40, 400, 1040, 520)
	draw.Draw(img, outline, image.NewUniform(color.RGBA{103, 80, 164, 255}), image.Point{}, draw.Src)
	draw.Draw(img, outline.Inset(3), image.NewUniform(color.White), image.Point{}, draw.Src)
	boxed := drawText(img, face(t, bold, 44), 420, 435, "Continue", color.RGBA{103, 80, 164, 255})
	res, err := e.Recognize(context.Background(), encodePNG(t, img), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []drawn{{"Checkout", filled}, {"Continue", boxed}} {
		if !found(res, want) {
			t.Errorf("missed %q at %v; read %q", want.text, want.box, res.Text())
		}
	}
}
