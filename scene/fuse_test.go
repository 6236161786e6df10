package scene

import (
	"image"
	"image/color"
	"image/draw"
	"strings"
	"testing"

	"github.com/apexagent/apex/ocr"
	"github.com/google/go-cmp/cmp"
)

func line(text string, conf float64, x0, y0, x1, y1 int) ocr.Line {
	return ocr.NewLine([]ocr.Word{{Text: text, Box: image.Rect(x0, y0, x1, y1), Confidence: conf}})
}

func fuseFixture() *Scene {
	return &Scene{Width: 1080, Height: 2400, Package: "com.example", Elements: []Element{
		{ID: "e1", Type: "text", Text: "09:41", Bounds: Rect{40, 0, 160, 63}, Source: SourceTree, Confidence: 1, System: true},
		{ID: "e2", Type: "text", Text: "Old title", Bounds: Rect{40, 100, 600, 180}, Source: SourceTree, Confidence: 1},
		{ID: "e3", Type: "button", Text: "Checkout", Bounds: Rect{100, 500, 980, 620}, Flags: Flags{Clickable: true}, Source: SourceTree, Confidence: 1},
		{ID: "e4", Type: "button", Bounds: Rect{100, 700, 300, 800}, Flags: Flags{Clickable: true}, Source: SourceTree, Confidence: 1},
		{ID: "e5", Type: "web", Bounds: Rect{0, 900, 1080, 2000}, Flags: Flags{Clickable: true}, Source: SourceTree, Confidence: 1},
	}}
}

func fuseResult() *ocr.Result {
	return &ocr.Result{Width: 1080, Height: 2400, Region: image.Rect(0, 0, 1080, 2400), Lines: []ocr.Line{
		line("09:41", 0.95, 45, 10, 150, 50),           // status bar: ignored
		line("Checkout", 0.93, 420, 530, 660, 590),     // confirms e3
		line("Cart", 0.9, 150, 720, 250, 780),          // names the textless e4
		line("Start game", 0.88, 300, 1000, 780, 1060), // only in pixels
		line("Level 3", 0.35, 300, 1200, 500, 1250),    // too unsure
		line("|", 0.6, 1000, 1500, 1010, 1560),         // noise
	}}
}

func TestFuse(t *testing.T) {
	s := fuseFixture()
	before := s.Text()
	got := Fuse(s, fuseResult(), nil)
	if s.Text() != before {
		t.Error("Fuse changed its input Scene")
	}
	type el struct {
		Text, Source string
		Bounds       Rect
		Conf         float64
	}
	var els []el
	for _, e := range got.Elements {
		els = append(els, el{e.Text, e.Source, e.Bounds, e.Confidence})
	}
	want := []el{
		{"09:41", SourceTree, Rect{40, 0, 160, 63}, 1},
		{"Old title", SourceTree, Rect{40, 100, 600, 180}, 1},
		{"Checkout", SourceBoth, Rect{100, 500, 980, 620}, 1},
		{"Cart", SourceBoth, Rect{100, 700, 300, 800}, 0.9},
		{"", SourceTree, Rect{0, 900, 1080, 2000}, 1},
		{"Start game", SourceOCR, Rect{300, 1000, 780, 1060}, 0.88},
	}
	if diff := cmp.Diff(want, els); diff != "" {
		t.Errorf("fused elements (-want +got):\n%s", diff)
	}
	for i, e := range got.Elements {
		if e.ID != "e"+itoa(i+1) {
			t.Errorf("element %d has id %q", i, e.ID)
		}
	}
	if !strings.Contains(got.Text(), `text "Start game" [540,1030] ocr`) {
		t.Errorf("Text does not mark the OCR element:\n%s", got.Text())
	}
	if got.Stats.ElementsOut != len(got.Elements) {
		t.Errorf("stats say %d elements, have %d", got.Stats.ElementsOut, len(got.Elements))
	}
}

func TestFuseDropsUnconfirmedForStaleTrees(t *testing.T) {
	got := Fuse(fuseFixture(), fuseResult(), &FuseOptions{DropUnconfirmed: true})
	for _, e := range got.Elements {
		if e.Text == "Old title" {
			t.Errorf("stale tree element %q kept", e.Text)
		}
	}
	if _, ok := got.Element("e1"); !ok || got.Elements[0].Text != "09:41" {
		t.Errorf("system bar element dropped: %+v", got.Elements)
	}
	if !strings.Contains(got.Dropped, "1 stale tree elements hidden") {
		t.Errorf("Dropped %q does not say a stale element was hidden", got.Dropped)
	}
}

func TestFuseScalesToPoints(t *testing.T) {
	// An iPhone Scene is in points; its screenshot in pixels (x3).
	s := &Scene{Width: 390, Height: 844, Format: FormatXCUITest}
	res := &ocr.Result{Width: 1170, Height: 2532, Lines: []ocr.Line{line("Sign in", 0.9, 300, 900, 600, 960)}}
	got := Fuse(s, res, nil)
	if len(got.Elements) != 1 || got.Elements[0].Bounds != (Rect{100, 300, 200, 320}) {
		t.Errorf("elements %+v, want Sign in at {100 300 200 320} points", got.Elements)
	}
}

// An Android dump of a dialog alone spans only the dialog's extent; its
// coordinates are pixels still, and OCR lines stay where they were read
// (scaled by extent/screenshot they landed elsewhere, beside the tree's
// copy of the same text).
func TestFuseDialogOnlyDump(t *testing.T) {
	s := &Scene{Width: 1006, Height: 1422, Format: FormatUIAutomator, Elements: []Element{
		{ID: "e1", Type: TypeText, Text: "Summer Sale: 20% off", Bounds: Rect{137, 977, 943, 1052}, Source: SourceTree, Confidence: 1},
	}}
	res := &ocr.Result{Width: 1080, Height: 2400, Lines: []ocr.Line{
		line("Summer Sale: 20% off", 0.96, 140, 1006, 748, 1052),
		line("Sunday.", 0.92, 140, 1166, 287, 1206),
	}}
	got := Fuse(s, res, nil)
	want := []Element{
		{ID: "e1", Type: TypeText, Text: "Summer Sale: 20% off", Bounds: Rect{137, 977, 943, 1052}, Source: SourceBoth, Confidence: 1},
		{ID: "e2", Type: TypeText, Text: "Sunday.", Bounds: Rect{140, 1166, 287, 1206}, Source: SourceOCR, Confidence: 0.92},
	}
	if diff := cmp.Diff(want, got.Elements); diff != "" || got.Width != 1080 || got.Height != 2400 {
		t.Errorf("%dx%d; elements (-want +got):\n%s", got.Width, got.Height, diff)
	}
}

func TestFuseDedupsRegionReads(t *testing.T) {
	s := &Scene{Width: 1080, Height: 2400}
	res := &ocr.Result{Width: 1080, Height: 2400, Lines: []ocr.Line{
		line("Score", 0.9, 100, 100, 300, 150), line("Score", 0.8, 102, 101, 301, 151),
	}}
	if got := Fuse(s, res, nil); len(got.Elements) != 1 {
		t.Errorf("same text read twice at one place gave %d elements", len(got.Elements))
	}
}

func TestSplitLinesAtWideGaps(t *testing.T) {
	l := ocr.NewLine([]ocr.Word{
		{Text: "Total", Box: image.Rect(40, 100, 160, 140), Confidence: 0.9},
		{Text: "price", Box: image.Rect(175, 100, 290, 140), Confidence: 0.9},
		{Text: "Pay", Box: image.Rect(800, 100, 880, 140), Confidence: 0.9},
	})
	got := splitLines([]ocr.Line{l})
	if len(got) != 2 || got[0].Text != "Total price" || got[1].Text != "Pay" {
		t.Errorf("split %+v, want [Total price] [Pay]", got)
	}
}

func TestSimilar(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"Checkout", "Checkout", true},
		{"Checkout", "Check0ut", true},
		{"Add to cart · $29", "Add to cart", true},
		{"立即购买", "立即购买", true},
		{"Settings", "Network", false},
		{"", "x", false},
	} {
		if got := similar(Fold(c.a), Fold(c.b)); got != c.want {
			t.Errorf("similar(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func flat(w, h int, c color.Color) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(c), image.Point{}, draw.Src)
	return img
}

func TestAssess(t *testing.T) {
	s := fuseFixture()
	white := flat(1080, 2400, color.White)
	other := flat(1080, 2400, color.White)
	draw.Draw(other, image.Rect(0, 300, 1080, 900), image.NewUniform(color.Black), image.Point{}, draw.Src)
	cases := []struct {
		name       string
		prev       *Screen
		cur        Screen
		want       []string
		wholeScren bool
	}{
		{"no screenshot, tree only", nil, Screen{Scene: s}, nil, false},
		{"blank pixels under the web view", nil, Screen{Scene: s, Image: white}, nil, false},
		{"system windows only", nil, Screen{Scene: &Scene{Width: 1080, Height: 2400, Empty: true}}, []string{ReasonSystemOnly}, true},
		{"pixels changed, tree did not", &Screen{Scene: s, Image: white}, Screen{Scene: s, Image: other}, []string{ReasonStale}, true},
		{"nothing changed", &Screen{Scene: s, Image: white}, Screen{Scene: s, Image: white}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Assess(c.prev, c.cur)
			if diff := cmp.Diff(c.want, d.Reasons); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
			if d.WholeScreen() != c.wholeScren || d.Any() != (len(c.want) > 0) {
				t.Errorf("WholeScreen %v Any %v", d.WholeScreen(), d.Any())
			}
		})
	}
}

func TestUncoveredAndTextLike(t *testing.T) {
	s := fuseFixture()
	regions := Uncovered(s)
	if len(regions) == 0 {
		t.Fatal("the text-less web view left no uncovered region")
	}
	web := Rect{0, 900, 1080, 2000}
	inside := false
	for _, r := range regions {
		if overlap(r, web) > 0.5 {
			inside = true
		}
		if r.Y0 < 63 {
			t.Errorf("region %v covers the status bar", r)
		}
	}
	if !inside {
		t.Errorf("regions %v miss the web view %v", regions, web)
	}
	img := flat(1080, 2400, color.White)
	if TextLike(img, image.Rect(0, 900, 1080, 2000)) {
		t.Error("a blank area looks like text")
	}
	// Stripes as dense as glyph strokes over a text line's height.
	for y := 1000; y < 1040; y++ {
		for x := 100; x < 900; x += 9 {
			for dx := range 3 {
				img.Set(x+dx, y, color.Black)
			}
		}
	}
	if !TextLike(img, image.Rect(0, 900, 1080, 2000)) {
		t.Error("stroke-like pixels do not look like text")
	}
}

func TestStaleTreeThatAgreesIsKept(t *testing.T) {
	s := fuseFixture()
	s.Elements = append(s.Elements[:1], s.Elements[2:]...) // no Old title: OCR sees all the text
	s.Elements = append(s.Elements, Element{Type: "button", Desc: "Back", Bounds: Rect{0, 2300, 200, 2400}, Flags: Flags{Clickable: true}, Source: SourceTree, Confidence: 1})
	res := fuseResult()
	if a := Agreement(s, res); a < AgreesAt {
		t.Fatalf("agreement %v, want at least %v", a, AgreesAt)
	}
	got := Fuse(s, res, &FuseOptions{DropUnconfirmed: true})
	if strings.Contains(got.Dropped, "hidden") {
		t.Errorf("a tree OCR agrees with lost elements: %s", got.Dropped)
	}
	if a := Agreement(fuseFixture(), res); a >= AgreesAt {
		t.Errorf("a tree with unseen text agrees %v", a)
	}
}
