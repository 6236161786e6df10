package scene_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apexagent/apex/ocr"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/sim"
)

// These tests read screens the simulated phone renders with the Arcade
// app (examples/apps/arcade.yaml), whose canvas text exists only in pixels.

const arcadeFile = "../examples/apps/arcade.yaml"

var (
	engineOnce sync.Once
	engine     *ocr.Tesseract
	engineErr  error
)

func ocrEngine(t testing.TB) *ocr.Tesseract {
	t.Helper()
	engineOnce.Do(func() { engine, engineErr = ocr.NewTesseract(context.Background(), nil) })
	if engineErr != nil {
		t.Skipf("tesseract unavailable: %v", engineErr)
	}
	return engine
}

func TestMain(m *testing.M) {
	code := m.Run()
	if engine != nil {
		engine.Close()
	}
	os.Exit(code)
}

// arcade starts a phone with the Arcade app open on its home screen.
func arcade(t testing.TB) *sim.Phone {
	t.Helper()
	data, err := os.ReadFile(arcadeFile)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := sim.ParseApp(data, arcadeFile)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sim.NewPhone(sim.Options{Apps: []*sim.AppSpec{spec}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Launch("com.apex.arcade"); err != nil {
		t.Fatal(err)
	}
	return p
}

// shot is one observation of the phone: its Scene (from the dump), the
// screenshot and the decoded image.
type shot struct {
	scene *scene.Scene
	tree  *scene.Tree
	png   []byte
	img   image.Image
}

func observe(t testing.TB, p *sim.Phone) shot {
	t.Helper()
	dump, err := p.DumpUI()
	if err != nil {
		t.Fatal(err)
	}
	tree, err := scene.Parse(dump)
	if err != nil {
		t.Fatal(err)
	}
	s := scene.Build(tree, nil)
	data, err := p.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return shot{scene: s, tree: tree, png: data, img: img}
}

// tapText taps the tree element showing text.
func tapText(t testing.TB, p *sim.Phone, s *scene.Scene, text string) {
	t.Helper()
	for _, e := range s.Elements {
		if e.Text == text {
			x, y := e.Bounds.Center()
			p.Tap(x, y)
			return
		}
	}
	t.Fatalf("no element %q in\n%s", text, s.Text())
}

// navigate opens an Arcade screen from its home screen.
func navigate(t testing.TB, p *sim.Phone, button string) shot {
	t.Helper()
	tapText(t, p, observe(t, p).scene, button)
	return observe(t, p)
}

func fuseAll(t testing.TB, sh shot) *scene.Scene {
	t.Helper()
	res, err := ocrEngine(t).Recognize(context.Background(), sh.png, nil)
	if err != nil {
		t.Fatal(err)
	}
	return scene.Fuse(sh.scene, res, nil)
}

func TestFusedCanvasWords(t *testing.T) {
	ocrEngine(t)
	p := arcade(t)
	wall := navigate(t, p, "Word wall")
	if strings.Contains(wall.scene.Text(), "bluetooth") {
		t.Fatal("canvas words are in the tree; the test needs them only in pixels")
	}
	data, _ := os.ReadFile(arcadeFile)
	var words []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "- \"") && strings.Count(l, " ") == 4 { // the wall's lines
			words = append(words, strings.Fields(strings.Trim(l, "-\" "))...)
		}
	}
	if len(words) < 40 {
		t.Fatalf("found %d words on the wall, want at least 40", len(words))
	}
	f := fuseAll(t, wall)
	var got []string
	for _, e := range f.Elements {
		if e.Source == scene.SourceOCR {
			got = append(got, strings.Fields(strings.ToLower(e.Text))...)
		}
	}
	var missed []string
	for _, w := range words {
		if !slices.Contains(got, w) {
			missed = append(missed, w)
		}
	}
	share := float64(len(words)-len(missed)) / float64(len(words))
	t.Logf("recovered %d of %d canvas words (%.0f%%), missed %v", len(words)-len(missed), len(words), share*100, missed)
	if share < 0.95 {
		t.Errorf("recovered %.0f%% of the words drawn on the canvas, want at least 95%%:\n%s", share*100, f.Text())
	}
}

func TestFusedChineseLabels(t *testing.T) {
	if e := ocrEngine(t); !slices.Contains(e.Languages(), "chi_sim") || !sim.CJKAvailable() {
		t.Skip("needs tesseract-ocr-chi-sim and fonts-noto-cjk")
	}
	p := arcade(t)
	zh := navigate(t, p, "中文")
	f := fuseAll(t, zh)
	var missed []string
	for _, want := range []string{"设置", "网络和互联网", "蓝牙", "显示", "电池", "存储空间", "立即购买"} {
		ok := false
		for _, e := range f.Elements {
			if e.Source == scene.SourceOCR && strings.ReplaceAll(e.Text, " ", "") == want {
				ok = true
			}
		}
		if !ok {
			missed = append(missed, want)
		}
	}
	// Tesseract's sparse-text mode can skip a short label; one miss of
	// seven is tolerated, as in package ocr.
	if len(missed) > 1 {
		t.Errorf("Chinese labels not recognised: %q\n%s", missed, f.Text())
	} else if len(missed) == 1 {
		t.Logf("missed %q", missed)
	}
}

func TestFuseConfirmsTree(t *testing.T) {
	ocrEngine(t)
	p := arcade(t)
	home := observe(t, p)
	f := fuseAll(t, home)
	bonus := false
	for _, e := range f.Elements {
		switch {
		case e.Text == "Play" || e.Text == "Word wall" || e.Text == "Welcome to the arcade":
			if e.Source != scene.SourceBoth {
				t.Errorf("%q source %q, want both (OCR read it where the tree has it)", e.Text, e.Source)
			}
		case e.Text == "Bonus":
			// drawn inside an image the tree gives no text: OCR adds it
			if e.Source != scene.SourceOCR {
				t.Errorf("Bonus source %q, want ocr", e.Source)
			}
			bonus = true
		case e.Source == scene.SourceOCR:
			t.Errorf("OCR element %q duplicates or invents text the tree has", e.Text)
		}
	}
	if !bonus {
		t.Errorf("the label drawn in the Bonus image was not read:\n%s", f.Text())
	}
}

func TestAssessArcade(t *testing.T) {
	p := arcade(t)
	home := observe(t, p)
	if b := scene.Blind(home.tree); len(b) != 0 {
		t.Errorf("home screen has blind nodes %v", b)
	}
	// Without the tree the Scene's blank space is a (coarser) suspect.
	if d := scene.Assess(nil, scene.Screen{Scene: home.scene, Image: home.img}); d.Any() {
		t.Errorf("home screen judged by its Scene alone distrusted (%v)", d)
	}
	if d := scene.Assess(nil, scene.Screen{Scene: home.scene, Tree: home.tree, Image: home.img}); d.Any() {
		t.Errorf("home screen distrusted (%v): its tree has all its text", d)
	}
	board := navigate(t, p, "Play")
	if b := scene.Blind(board.tree); len(b) != 1 || b[0].Y1-b[0].Y0 < 1500 {
		t.Errorf("board's blind nodes %v, want its canvas", b)
	}
	d := scene.Assess(&scene.Screen{Scene: home.scene, Tree: home.tree, Image: home.img}, scene.Screen{Scene: board.scene, Tree: board.tree, Image: board.img})
	if !slices.Equal(d.Reasons, []string{scene.ReasonTextInPixels}) || len(d.Regions) == 0 {
		t.Errorf("board: %v regions %v, want text in pixels", d, d.Regions)
	}
	p.KeyEvent(sim.KeycodeBack)
	home = observe(t, p)
	p.SetStaleTree(true)
	tapText(t, p, home.scene, "Play")
	stale := observe(t, p)
	d = scene.Assess(&scene.Screen{Scene: home.scene, Tree: home.tree, Image: home.img}, scene.Screen{Scene: stale.scene, Tree: stale.tree, Image: stale.img})
	if !d.Stale() || !d.WholeScreen() {
		t.Errorf("stale tree after navigation assessed as %v", d)
	}
	// Fused, the stale Scene shows the board's buttons and not the home's.
	res, err := ocrEngine(t).Recognize(context.Background(), stale.png, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := scene.Fuse(stale.scene, res, &scene.FuseOptions{DropUnconfirmed: true})
	txt := f.Text()
	if !strings.Contains(txt, `"Start game"`) || strings.Contains(txt, `"Word wall"`) {
		t.Errorf("fused stale Scene:\n%s", txt)
	}
}

// BenchmarkAssessSoundTree is what deciding costs on a screen whose tree
// holds all its text (the Arcade home): tree checks only, no pixels, no OCR.
func BenchmarkAssessSoundTree(b *testing.B) {
	home := observe(b, arcade(b))
	for b.Loop() {
		if d := scene.Assess(nil, scene.Screen{Scene: home.scene, Tree: home.tree, Image: home.img}); d.Any() {
			b.Fatalf("distrusted: %v", d)
		}
	}
}

// BenchmarkAssessCanvas decides on the Arcade board: a large region
// without text nodes whose pixels are scanned for text.
func BenchmarkAssessCanvas(b *testing.B) {
	p := arcade(b)
	board := navigate(b, p, "Play")
	for b.Loop() {
		if d := scene.Assess(nil, scene.Screen{Scene: board.scene, Tree: board.tree, Image: board.img}); !d.Any() {
			b.Fatal("board trusted")
		}
	}
}

// BenchmarkAssessStale compares two screenshots after an action whose tree
// did not change.
func BenchmarkAssessStale(b *testing.B) {
	p := arcade(b)
	home := observe(b, p)
	p.SetStaleTree(true)
	tapText(b, p, home.scene, "Play")
	stale := observe(b, p)
	prev := &scene.Screen{Scene: home.scene, Tree: home.tree, Image: home.img}
	for b.Loop() {
		if d := scene.Assess(prev, scene.Screen{Scene: stale.scene, Tree: stale.tree, Image: stale.img}); !d.Stale() {
			b.Fatal("not stale")
		}
	}
}

// BenchmarkFuse merges a full-screen OCR result into the board's Scene.
func BenchmarkFuse(b *testing.B) {
	p := arcade(b)
	board := navigate(b, p, "Play")
	res, err := ocrEngine(b).Recognize(context.Background(), board.png, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		scene.Fuse(board.scene, res, nil)
	}
}

// BenchmarkAssessSoundScene judges the Arcade home from its Scene alone
// (no tree): its blank space is an uncovered region whose pixels are
// scanned.
func BenchmarkAssessSoundScene(b *testing.B) {
	home := observe(b, arcade(b))
	for b.Loop() {
		if d := scene.Assess(nil, scene.Screen{Scene: home.scene, Image: home.img}); d.Any() {
			b.Fatalf("distrusted: %v", d)
		}
	}
}
