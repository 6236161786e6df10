package check

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/scene"
)

// Qualities of evidence below an exact match.
const (
	ignoringCase = 0.95 // the target matched ignoring case and spacing
	contained    = 0.9  // the target is part of the element's text
	// looseText is a text that equals or contains the expected one only
	// ignoring case and spacing: below Firm, so a person looks.
	looseText = 0.7
	// blindAbsence is an absence on a screen whose tree says nothing (a
	// game, a web view): only the pixels could tell.
	blindAbsence = 0.5
)

// Eval decides c on the screen after. before is the screen the step
// started from: layoutChanged compares the two, the other kinds ignore it.
// Eval does no I/O; a check that needs an element's pixels read goes
// through ReadText first.
func (c Check) Eval(before, after *scene.Scene) Result {
	if err := c.Validate(); err != nil {
		return Result{Evidence: err.Error()}
	}
	if after == nil {
		return Result{Evidence: "no screen to check"}
	}
	switch c.Kind {
	case LayoutChanged:
		return layoutChanged(before, after)
	case Region:
		return regions(c.Regions, after)
	case Exists, NotExists:
		return c.presence(after)
	case Count:
		return c.count(after)
	}
	e, q, res := c.one(after)
	if res != nil {
		return *res
	}
	var r Result
	switch c.Kind {
	case TextEquals, TextContains:
		r = c.text(e, q)
	case NumberGreater, NumberLess:
		r = c.number(e, q)
	case Checked, NotChecked:
		if !e.Flags.Checkable && !e.Flags.Checked {
			// "Wi-Fi" may name the row; its switch says.
			if sw, ok := checkableNear(after, e); ok {
				e = sw
			}
		}
		r = flag(e, q, e.Flags.Checked, c.Kind == Checked, "checked", "not checked")
	case Enabled:
		r = flag(e, q, !e.Flags.Disabled, true, "enabled", "disabled")
	case Focused:
		r = flag(e, q, e.Flags.Focused, true, "focused", "not focused")
	}
	r.Element = &e
	return r
}

// Find locates l in s for a check and grades the match: 1 exact, 0.95
// ignoring case and spacing, 0.9 contained. A loose match (every word
// somewhere) is no evidence that the element is shown: it is not found,
// wrapping action.ErrNotFound. Several equally good matches are a
// *locate.AmbiguousError, graded too.
func Find(s *scene.Scene, l action.Locator) (scene.Element, float64, error) {
	e, how, err := locate.Match(s, l)
	var amb *locate.AmbiguousError
	switch {
	case errors.As(err, &amb) && amb.How == locate.Loose:
		return scene.Element{}, 0, fmt.Errorf("%s: only loose matches (%d elements hold all its words), no evidence it is shown: %w", l, len(amb.Candidates), action.ErrNotFound)
	case amb != nil:
		return scene.Element{}, quality(amb.How), err
	case err != nil:
		return scene.Element{}, 0, err
	case how == locate.Loose:
		return scene.Element{}, 0, fmt.Errorf("%s: only a loose match (%s holds all its words), no evidence it is shown: %w", l, brief(e), action.ErrNotFound)
	}
	return e, quality(how), nil
}

func quality(how locate.Exactness) float64 {
	switch how {
	case locate.Exact:
		return 1
	case locate.IgnoringCase:
		return ignoringCase
	case locate.Contained:
		return contained
	}
	return 0
}

// absence is how sure a "not on screen" is.
func absence(s *scene.Scene) float64 {
	if s.Empty {
		return blindAbsence
	}
	return 1
}

func (c Check) presence(s *scene.Scene) Result {
	e, q, err := Find(s, c.Target)
	var amb *locate.AmbiguousError
	shown := ""
	switch {
	case err == nil:
		shown = brief(e)
	case errors.As(err, &amb):
		shown = fmt.Sprintf("%d elements match (%s)", len(amb.Candidates), amb.Rule)
	case errors.Is(err, action.ErrNotFound):
		if c.Kind == NotExists {
			return Result{Pass: true, Quality: absence(s), Evidence: fmt.Sprintf("%s is not on screen", c.Target), Actual: false}
		}
		return Result{Quality: absence(s), Evidence: err.Error(), Actual: false}
	default:
		return Result{Evidence: err.Error()}
	}
	r := Result{Pass: c.Kind == Exists, Quality: q, Actual: true}
	if err == nil {
		r.Element = &e
	}
	if c.Kind == Exists {
		r.Evidence = fmt.Sprintf("%s is shown: %s", c.Target, shown)
	} else {
		r.Evidence = fmt.Sprintf("%s is on screen (%s) but should not be", c.Target, shown)
	}
	return r
}

func (c Check) count(s *scene.Scene) Result {
	want := int(c.Number)
	_, q, err := Find(s, c.Target)
	var amb *locate.AmbiguousError
	n := 1
	switch {
	case errors.As(err, &amb):
		n = len(amb.Candidates)
	case errors.Is(err, action.ErrNotFound):
		n, q = 0, absence(s)
	case err != nil:
		return Result{Evidence: err.Error()}
	}
	return Result{Pass: n == want, Quality: q, Actual: n,
		Evidence: fmt.Sprintf("%s matches %d elements (want %d)", c.Target, n, want)}
}

// one finds the single element a check is about; otherwise the result
// says why not: absent, or several candidates (listed, never guessed).
func (c Check) one(s *scene.Scene) (scene.Element, float64, *Result) {
	e, q, err := Find(s, c.Target)
	var amb *locate.AmbiguousError
	switch {
	case err == nil:
		return e, q, nil
	case errors.As(err, &amb):
		return e, q, &Result{Evidence: err.Error()}
	case errors.Is(err, action.ErrNotFound):
		return e, q, &Result{Quality: absence(s), Evidence: err.Error()}
	}
	return e, q, &Result{Evidence: err.Error()}
}

func (c Check) text(e scene.Element, q float64) Result {
	got := label(e)
	r := Result{Quality: q, Actual: got}
	var exact, loose bool
	if c.Kind == TextEquals {
		exact = strings.TrimSpace(got) == strings.TrimSpace(c.Text)
		loose = norm(got) == norm(c.Text)
	} else {
		exact = strings.Contains(got, c.Text)
		loose = strings.Contains(norm(got), norm(c.Text))
	}
	verb := map[Kind]string{TextEquals: "equals", TextContains: "contains"}[c.Kind]
	switch {
	case exact:
		r.Pass, r.Evidence = true, fmt.Sprintf("%s reads %q", e.ID, got)
	case loose:
		r.Pass, r.Quality = true, min(q, looseText)
		r.Evidence = fmt.Sprintf("%s reads %q, which %s %q only ignoring case and spacing", e.ID, got, verb, c.Text)
	case c.Kind == TextEquals:
		r.Evidence = fmt.Sprintf("%s reads %q, want %q", e.ID, got, c.Text)
	default:
		r.Evidence = fmt.Sprintf("%s reads %q, without %q", e.ID, got, c.Text)
	}
	return r
}

func (c Check) number(e scene.Element, q float64) Result {
	got, ok := ReadNumber(e, c.Target)
	if !ok {
		return Result{Quality: q, Actual: label(e), Evidence: fmt.Sprintf("%s reads %q, which holds no number", e.ID, label(e))}
	}
	pass, op := got > c.Number, ">"
	if c.Kind == NumberLess {
		pass, op = got < c.Number, "<"
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	return Result{Pass: pass, Quality: q, Actual: got, Evidence: fmt.Sprintf("%s shows %s (want %s %s)", e.ID, f(got), op, f(c.Number))}
}

// ReadNumber reads the number an element shows, after the label the
// locator named when the text starts with it ("Brightness 70%" → 70 for
// "Brightness"; "Level 2 · 120 points" → 120 for "Level 2").
func ReadNumber(e scene.Element, l action.Locator) (float64, bool) {
	text := label(e)
	for _, name := range []string{l.Text, l.Prompt} {
		if name = strings.TrimSpace(name); name != "" {
			if rest, ok := strings.CutPrefix(text, name); ok {
				if n, ok := scene.FirstNumber(rest); ok {
					return n, true
				}
			}
		}
	}
	return scene.FirstNumber(text)
}

func flag(e scene.Element, q float64, got, want bool, yes, no string) Result {
	state := no
	if got {
		state = yes
	}
	return Result{Pass: got == want, Quality: q, Actual: got, Evidence: fmt.Sprintf("%s is %s", brief(e), state)}
}

// checkableNear finds a checkable element on the same row as e.
func checkableNear(s *scene.Scene, e scene.Element) (scene.Element, bool) {
	_, y := e.Bounds.Center()
	for _, c := range s.Elements {
		if c.Flags.Checkable && c.Bounds.Y0 <= y && y < c.Bounds.Y1 {
			return c, true
		}
	}
	return scene.Element{}, false
}

func layoutChanged(before, after *scene.Scene) Result {
	if before == nil {
		return Result{Evidence: "no earlier screen to compare with"}
	}
	if before.Fingerprint() == after.Fingerprint() {
		return Result{Quality: 1, Actual: false, Evidence: "screen unchanged"}
	}
	d := scene.Diff(before, after)
	return Result{Pass: true, Quality: 1, Actual: true,
		Evidence: fmt.Sprintf("screen changed: %d appeared, %d gone, %d changed", len(d.Appeared), len(d.Disappeared), len(d.Changed))}
}

// label is what an element reads: its text, else its description.
func label(e scene.Element) string {
	if e.Text != "" {
		return e.Text
	}
	return e.Desc
}

func brief(e scene.Element) string {
	l := []rune(label(e))
	if len(l) > 60 {
		l = append(l[:60], '…')
	}
	return fmt.Sprintf("%s %s %q", e.ID, e.Type, string(l))
}

func norm(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
