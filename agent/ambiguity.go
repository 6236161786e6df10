package agent

import (
	"fmt"
	"strings"

	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/scene"
)

// minOCRConfidence is scene.Fuse's default MinConfidence: an OCR element
// read less surely is noise, never a candidate to choose from.
const minOCRConfidence = 0.5

// candidates cleans the elements an ambiguous locator matched: OCR noise
// dropped, and an element shown twice (the tree's and OCR's reading of
// the same text at the same place) listed once.
func candidates(in []scene.Element) []scene.Element {
	var out []scene.Element
	for _, e := range in {
		if e.Source == scene.SourceOCR && e.Confidence < minOCRConfidence {
			continue
		}
		dup := false
		for _, o := range out {
			if label(o) == label(e) && (o.Bounds.Contains(e.Bounds.Center()) || e.Bounds.Contains(o.Bounds.Center())) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, e)
		}
	}
	return out
}

// row is the list row that holds e (the smallest item around it), if e is
// not a row itself.
func row(sc *scene.Scene, e scene.Element) (scene.Element, bool) {
	x, y := e.Bounds.Center()
	var best scene.Element
	found := false
	for _, r := range sc.Elements {
		if r.ID == e.ID || r.Type != "item" || !r.Bounds.Contains(x, y) {
			continue
		}
		if !found || area(r.Bounds) < area(best.Bounds) {
			best, found = r, true
		}
	}
	return best, found
}

func area(r scene.Rect) int { return (r.X1 - r.X0) * (r.Y1 - r.Y0) }

// candidateList renders the candidates one a line for the executor model:
// id, type, text, and the row each sits in.
func candidateList(sc *scene.Scene, amb *locate.AmbiguousError) string {
	var b strings.Builder
	for _, c := range amb.Candidates {
		b.WriteString(brief(c))
		if r, ok := row(sc, c); ok {
			fmt.Fprintf(&b, " in row %s %q", r.ID, truncate(label(r), 60))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// choice is the executor model's answer to an ambiguous target: the
// evidence the acted event carries.
type choice struct {
	Candidates []string `json:"candidates"`
	Chosen     string   `json:"chosen"`
}
