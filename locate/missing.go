package locate

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/scene"
)

// MissingError says a locator matched nothing on a screen, and lists what
// the screen shows instead, closest to what was asked for first. It wraps
// action.ErrNotFound, and ErrNoRule when only a model could resolve the
// locator.
type MissingError struct {
	Locator action.Locator
	Package string // the foreground app, when the source says
	// Candidates are the labelled elements of the screen, most like the
	// locator first. What no one would have meant is left out: system
	// bars, OCR read with little confidence or over the status bar, single
	// characters, and a label a second time.
	Candidates []Candidate
	noRule     bool
}

// Candidate is an element of the screen with how much its label is like
// the locator's text, 0 (nothing alike) to 1 (the same words).
type Candidate struct {
	Element scene.Element
	Score   float64
}

// NearScore is the Score from which a candidate counts as near (see Near).
const NearScore = 0.7

// shownCandidates is how many candidates the message lists.
const shownCandidates = 10

func (e *MissingError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no element matches %s on screen", e.Locator)
	if e.Package != "" {
		b.WriteString(" in " + e.Package)
	}
	for i, c := range e.Candidates {
		switch {
		case i == shownCandidates:
			fmt.Fprintf(&b, ", … %d more", len(e.Candidates)-i)
		case i > shownCandidates:
			continue
		case i == 0:
			b.WriteString("; the screen shows, closest first: ")
		default:
			b.WriteString(", ")
		}
		if i < shownCandidates {
			fmt.Fprintf(&b, "%s %q", c.Element.ID, truncate(label(c.Element), 30))
		}
	}
	b.WriteString(": not found")
	return b.String()
}

// Is makes the error match action.ErrNotFound, and ErrNoRule when no rule
// could read the locator.
func (e *MissingError) Is(target error) bool {
	return target == action.ErrNotFound || e.noRule && target == ErrNoRule
}

// Near reports whether the screen shows something close to what was asked
// for (a count about to change, a label being edited): worth waiting for
// the screen to change, where a screen of unrelated labels is not.
func (e *MissingError) Near() bool {
	return len(e.Candidates) > 0 && e.Candidates[0].Score >= NearScore
}

// label is what an element shows a person: its text, else its description.
func label(e scene.Element) string {
	if e.Text != "" {
		return e.Text
	}
	return e.Desc
}

// missing builds the error for a locator that matched nothing in s.
func missing(s *scene.Scene, l action.Locator, q *query) *MissingError {
	wanted := wantedTexts(q)
	var cs []Candidate
	seen := map[string]int{} // folded label → index in cs
	for _, e := range s.Elements {
		lab := label(e)
		if lab == "" || noise(s, e) {
			continue
		}
		c := Candidate{Element: e, Score: similarity(wanted, e)}
		key := scene.Fold(lab)
		if i, dup := seen[key]; dup {
			// One line per label: the tree's copy over OCR's, the
			// higher score over the lower.
			if e.Source != scene.SourceOCR && cs[i].Element.Source == scene.SourceOCR || c.Score > cs[i].Score {
				cs[i] = c
			}
			continue
		}
		seen[key] = len(cs)
		cs = append(cs, c)
	}
	slices.SortStableFunc(cs, func(a, b Candidate) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return &MissingError{Locator: l, Package: s.Package, Candidates: cs,
		noRule: l.Prompt != "" && !q.quoted && q.strictID == "" && q.text2 == "" && q.desc == ""}
}

// noise reports an element no one would have meant: a system bar's, OCR
// of little confidence, OCR over the status bar (the clock and icons read
// as words), a single character.
func noise(s *scene.Scene, e scene.Element) bool {
	if e.System {
		return true
	}
	if e.Source != scene.SourceOCR {
		return false
	}
	statusBar := s.Height / 25
	return e.Confidence < 0.85 || e.Bounds.Y1 <= statusBar || len([]rune(scene.Fold(label(e)))) < 2
}

// wantedTexts are the texts the locator asks for, as a person says them.
func wantedTexts(q *query) []string {
	var ws []string
	for _, w := range []string{q.text, q.text2, q.desc, strings.ReplaceAll(entryName(q.strictID), "_", " ")} {
		if strings.TrimSpace(w) != "" {
			ws = append(ws, w)
		}
	}
	return ws
}

// similarity is how much e's label, description or resource id is like
// one of the wanted texts: the best of a whole-string comparison and the
// share of the wanted words that e holds (each word compared alike).
func similarity(wanted []string, e scene.Element) float64 {
	best := 0.0
	have := []string{e.Text, e.Desc, strings.ReplaceAll(entryName(e.ResourceID), "_", " ")}
	for _, w := range wanted {
		for _, h := range have {
			if h != "" {
				best = max(best, alike(scene.Fold(w), scene.Fold(h)), wordsAlike(w, h))
			}
		}
	}
	return best
}

// wordsAlike is the mean, over the words of want, of how alike the
// closest word of have is.
func wordsAlike(want, have string) float64 {
	ws, hs := words(want), words(have)
	if len(ws) == 0 || len(hs) == 0 {
		return 0
	}
	sum := 0.0
	for _, w := range ws {
		b := 0.0
		for _, h := range hs {
			b = max(b, alike(w, h))
		}
		sum += b
	}
	return sum / float64(len(ws))
}

// alike is 1 minus the edit distance of a and b over the longer's length.
func alike(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	n := max(len(ra), len(rb))
	if n == 0 {
		return 0
	}
	return 1 - float64(scene.EditDistance(ra, rb))/float64(n)
}

// words splits s into lower-case words of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
