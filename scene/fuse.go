package scene

import (
	"fmt"
	"image"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/apexagent/apex/ocr"
)

// Where an element came from (Element.Source).
const (
	SourceTree = "tree" // the UI tree alone
	SourceOCR  = "ocr"  // text read from the screenshot that the tree lacks
	SourceBoth = "both" // a tree element whose text OCR read where the tree puts it
)

// FuseOptions tune Fuse. A nil *FuseOptions means the defaults.
type FuseOptions struct {
	// MinConfidence drops OCR lines read with less confidence (0..1);
	// 0 means 0.5.
	MinConfidence float64
	// DropUnconfirmed removes tree elements OCR did not see (other than
	// system-bar elements and elements without text or description): for
	// a stale tree, whose elements describe a screen that is gone. When OCR
	// confirms most of the tree's text (see Agreement) the tree matches
	// the screen after all and nothing is removed.
	DropUnconfirmed bool
}

// Fuse merges text read from the screenshot into s and returns the new
// Scene; s is not changed. res may cover the whole screenshot or one
// region of it; its boxes are in screenshot pixels and are scaled to the
// Scene's units (an iPhone's points).
//
// An OCR line that lies on a tree element showing the same text confirms
// it: the element keeps the tree's bounds and attributes and says "both".
// A line inside a tree element without text or description (an image
// button whose label is drawn) gives that element its text. Every other
// line becomes an element of type text, source "ocr", with OCR's
// confidence. Lines over the system bars are ignored. Ids are given again
// in reading order and the Scene keeps to its budget.
func Fuse(s *Scene, res *ocr.Result, opts *FuseOptions) *Scene {
	if opts == nil {
		opts = &FuseOptions{}
	}
	minConf := opts.MinConfidence
	if minConf == 0 {
		minConf = 0.5
	}
	out := *s
	if res == nil {
		out.Elements = slices.Clone(s.Elements)
		return &out
	}
	// Parts (texts their rows say) take no OCR line: they go back to their
	// rows, renumbered with them.
	out.Elements = make([]Element, 0, len(s.Elements))
	parts := map[string][]Element{}
	for _, e := range s.Elements {
		if e.Part != "" {
			parts[e.Part] = append(parts[e.Part], e)
		} else {
			out.Elements = append(out.Elements, e)
		}
	}
	sx, sy := 1.0, 1.0
	switch {
	case s.Format == FormatUIAutomator:
		// Pixels, as the screenshot's. The tree's size is only the extent
		// of its windows when the dump holds a dialog alone: the screen is
		// at least the screenshot.
		out.Width, out.Height = max(s.Width, res.Width), max(s.Height, res.Height)
	case s.Width > 0 && s.Height > 0 && res.Width > 0 && res.Height > 0:
		sx, sy = float64(s.Width)/float64(res.Width), float64(s.Height)/float64(res.Height)
	case out.Width == 0:
		out.Width, out.Height = res.Width, res.Height
	}
	confirmed := make([]bool, len(out.Elements))
	var added []Element
	for _, l := range splitLines(res.Lines) {
		if l.Confidence < minConf || noise(l) {
			continue
		}
		box := scaleRect(l.Box, sx, sy)
		if onSystemBar(out.Elements, box) {
			continue
		}
		i, adopt := match(out.Elements, box, l.Text)
		switch {
		case i >= 0 && adopt:
			e := &out.Elements[i]
			e.Text, e.Source, e.Confidence = l.Text, SourceBoth, l.Confidence
			confirmed[i] = true
		case i >= 0:
			out.Elements[i].Source = SourceBoth
			confirmed[i] = true
		case !duplicate(added, box, l.Text):
			added = append(added, Element{Type: TypeText, Text: l.Text, Bounds: box, Source: SourceOCR,
				Confidence: math.Round(l.Confidence*100) / 100})
		}
	}
	kept := make([]*cand, 0, len(out.Elements)+len(added))
	hidden := 0
	drop := opts.DropUnconfirmed && agreement(out.Elements, confirmed) < AgreesAt
	for i := range out.Elements {
		e := out.Elements[i]
		if drop && !confirmed[i] && !e.System && (e.Text != "" || e.Desc != "") {
			hidden++
			continue
		}
		kept = append(kept, &cand{el: e, inner: parts[e.ID], tier: fuseTier(&e), seq: len(kept)})
	}
	for _, e := range added {
		kept = append(kept, &cand{el: e, tier: fuseTier(&e), seq: len(kept)})
	}
	readingOrder(kept)
	dropped := out.Dropped
	out.Dropped = ""
	if out.Budget <= 0 {
		out.Budget = DefaultBudget
	}
	fit(&out, kept)
	if out.Dropped == "" {
		out.Dropped = dropped
	}
	if hidden > 0 {
		note := fmt.Sprintf("(%d stale tree elements hidden: OCR did not see them)", hidden)
		if out.Dropped != "" {
			note = out.Dropped + " " + note
		}
		out.Dropped = note
	}
	if s.Budget <= 0 {
		out.Budget = s.Budget
	}
	out.Stats.ElementsOut = len(out.Elements)
	return &out
}

// AgreesAt is the share of a tree's text that OCR must confirm for the
// tree to count as describing the screen.
const AgreesAt = 0.8

// Agreement is the share (0..1) of s's text elements (system bars aside)
// that res confirms where the tree puts them; 1 when the tree has no
// text. A stale tree agrees little with the screen it is stale for.
func Agreement(s *Scene, res *ocr.Result) float64 {
	f := Fuse(s, res, nil)
	confirmed := make([]bool, len(f.Elements))
	var els []Element
	for _, e := range f.Elements {
		if e.Source == SourceOCR {
			continue
		}
		confirmed[len(els)] = e.Source == SourceBoth
		els = append(els, e)
	}
	return agreement(els, confirmed)
}

func agreement(els []Element, confirmed []bool) float64 {
	texts, seen := 0, 0
	for i, e := range els {
		if e.System || e.Text == "" {
			continue
		}
		texts++
		if confirmed[i] {
			seen++
		}
	}
	if texts == 0 {
		return 1
	}
	return float64(seen) / float64(texts)
}

func fuseTier(e *Element) int {
	interactive := e.Control()
	switch {
	case e.System && !interactive:
		return 0
	case !interactive:
		return 1
	case e.System:
		return 2
	}
	return 3
}

// match finds the tree element an OCR line belongs to: one whose text or
// description holds the line's text and whose bounds hold most of the
// line (the smallest such), or else the smallest element without text
// that holds the line and no other text (adopt). It returns -1 when none.
func match(els []Element, box Rect, text string) (int, bool) {
	want := Fold(text)
	best, bestArea := -1, 0
	for i := range els {
		e := &els[i]
		if overlap(box, e.Bounds) < 0.6 || !(similar(Fold(e.Text), want) || similar(Fold(e.Desc), want)) {
			continue
		}
		if a := e.Bounds.area(); best < 0 || a < bestArea {
			best, bestArea = i, a
		}
	}
	if best >= 0 {
		return best, false
	}
	for i := range els {
		e := &els[i]
		if e.Text != "" || e.Desc != "" || e.System || !e.Control() || overlap(box, e.Bounds) < 0.8 {
			continue
		}
		// Only a control about the size of its label: a canvas or a list
		// holds many lines, each its own element.
		if e.Bounds.area() > 8*box.area() {
			continue
		}
		if a := e.Bounds.area(); best < 0 || a < bestArea {
			best, bestArea = i, a
		}
	}
	return best, best >= 0
}

// similar reports whether OCR's reading b of a label matches the tree's
// text a: equal, one holding the other, or a few characters apart.
func similar(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b || strings.Contains(a, b) || strings.Contains(b, a) && len([]rune(a))*2 >= len([]rune(b)) {
		return true
	}
	ra, rb := []rune(a), []rune(b)
	d := EditDistance(ra, rb)
	return float64(d) <= 0.25*float64(max(len(ra), len(rb)))
}

// Fold normalises text for comparison: lower case, letters, digits and
// CJK only (OCR adds and loses punctuation and spaces).
func Fold(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// EditDistance is the Levenshtein distance of a and b.
func EditDistance(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// overlap is how much of a lies inside b, 0..1.
func overlap(a, b Rect) float64 {
	if a.Empty() {
		return 0
	}
	return float64(intersect(a, b).area()) / float64(a.area())
}

// onSystemBar reports whether the box's centre lies in the band of a
// system-bar element (status bar clock and icons, navigation buttons).
func onSystemBar(els []Element, box Rect) bool {
	_, cy := box.Center()
	for i := range els {
		if els[i].System && cy >= els[i].Bounds.Y0 && cy < els[i].Bounds.Y1 {
			return true
		}
	}
	return false
}

// duplicate reports whether an OCR element already added reads the same
// text at the same place (a region read twice).
func duplicate(added []Element, box Rect, text string) bool {
	for _, e := range added {
		if overlap(box, e.Bounds) > 0.5 && similar(Fold(e.Text), Fold(text)) {
			return true
		}
	}
	return false
}

// noise reports OCR lines that are no text a person would read: no letter
// or digit, a lone Latin character (icon edges read as "l" or "|"), or
// nothing but stroke-like characters (a rule read as 一一).
func noise(l ocr.Line) bool {
	f := Fold(l.Text)
	if f == "" {
		return true
	}
	rs := []rune(f)
	if len(rs) == 1 && rs[0] < 0x2e80 && l.Confidence < 0.9 {
		return true
	}
	// Edges and rules read as strokes: 一, 丨, ー and the like alone.
	return strings.Trim(f, "一丨ーｌlI") == ""
}

// splitLines cuts OCR lines at wide gaps between words: sparse-text
// reading can join labels of one row that are far apart (a title and a
// button), which are separate things to tap.
func splitLines(lines []ocr.Line) []ocr.Line {
	var out []ocr.Line
	for _, l := range lines {
		h := l.Box.Dy()
		start := 0
		for i := 1; i < len(l.Words); i++ {
			if gap := l.Words[i].Box.Min.X - l.Words[i-1].Box.Max.X; gap > 2*h {
				out = append(out, ocr.NewLine(l.Words[start:i]))
				start = i
			}
		}
		if start == 0 {
			out = append(out, l)
		} else {
			out = append(out, ocr.NewLine(l.Words[start:]))
		}
	}
	return out
}

func scaleRect(r image.Rectangle, sx, sy float64) Rect {
	return Rect{
		X0: int(math.Floor(float64(r.Min.X) * sx)), Y0: int(math.Floor(float64(r.Min.Y) * sy)),
		X1: int(math.Ceil(float64(r.Max.X) * sx)), Y1: int(math.Ceil(float64(r.Max.Y) * sy)),
	}
}
