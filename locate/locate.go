// Package locate finds elements of a Scene without a model: by short id,
// resource id, exact then fuzzy text, content description and element type.
// It never guesses: several equally good matches are an error that lists
// them, so the script (or a model) can say which one.
package locate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/scene"
)

// Exactness grades the rule a locator matched by, from the strictest.
type Exactness int

const (
	// Exact: the text, description, resource id, scene id, type or point
	// as given.
	Exact Exactness = iota
	// IgnoringCase: equal ignoring case and spacing.
	IgnoringCase
	// Contained: the element's text, description or id contains it.
	Contained
	// Loose: every word somewhere in the element; enough to act on when
	// nothing closer matches, not evidence that the element is shown.
	Loose
)

// AmbiguousError lists the elements a locator matched equally well.
type AmbiguousError struct {
	Locator    action.Locator
	Rule       string    // which rule matched them: "exact text", "text contains", …
	How        Exactness // how exactly that rule matched
	Candidates []scene.Element
	// SetAside are elements that matched as well but are not of the kind
	// the locator wants (see action.Locator.NamesField); Why says so.
	SetAside []scene.Element
	Why      string
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s matches %d elements (%s): ", e.Locator, len(e.Candidates), e.Rule)
	for i, c := range e.Candidates {
		if i == 8 {
			fmt.Fprintf(&b, "; … %d more", len(e.Candidates)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(describe(c))
	}
	if len(e.SetAside) > 0 {
		fmt.Fprintf(&b, " (also matched, %s: ", e.Why)
		for i, c := range e.SetAside {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(describe(c))
		}
		b.WriteByte(')')
	}
	b.WriteString(": say which with index: N (0 is the first), an id (e.g. {id: " + e.Candidates[0].ID + "}) or more exact text")
	return b.String()
}

// describe renders an element the way errors list it.
func describe(e scene.Element) string {
	s := e.ID + " " + e.Type
	if e.Text != "" {
		s += fmt.Sprintf(" %q", e.Text)
	}
	if e.Desc != "" && e.Desc != e.Text {
		s += fmt.Sprintf(" desc=%q", e.Desc)
	}
	if e.ResourceID != "" {
		s += " id=" + e.ResourceID
	}
	r := e.Bounds
	return s + fmt.Sprintf(" [%d,%d][%d,%d]", r.X0, r.Y0, r.X1, r.Y1)
}

// Resolver resolves locators against one Scene. It is immutable and safe for
// concurrent use.
type Resolver struct{ scene *scene.Scene }

var _ action.Resolver = (*Resolver)(nil)

// New returns a Resolver over s.
func New(s *scene.Scene) *Resolver { return &Resolver{scene: s} }

// Resolve finds l in the Scene; the target point is the element's centre.
func (r *Resolver) Resolve(ctx context.Context, l action.Locator) (action.Target, error) {
	if err := ctx.Err(); err != nil {
		return action.Target{}, err
	}
	e, err := Find(r.scene, l)
	if err != nil {
		return action.Target{}, err
	}
	x, y := e.Bounds.Center()
	return action.Target{Point: device.Point{X: x, Y: y}, Element: &e}, nil
}

// at is the element a touch at p lands on: the smallest control there,
// else the smallest element.
func at(s *scene.Scene, p device.Point) (scene.Element, error) {
	best, found := scene.Element{}, false
	better := func(e scene.Element) bool {
		if !found || e.Control() != best.Control() {
			return !found || e.Control()
		}
		return area(e.Bounds) < area(best.Bounds)
	}
	for _, e := range s.Elements {
		if !e.Bounds.Empty() && e.Bounds.Contains(p.X, p.Y) && better(e) {
			best, found = e, true
		}
	}
	if !found {
		return scene.Element{}, fmt.Errorf("no element at %d,%d: %w", p.X, p.Y, action.ErrNotFound)
	}
	return best, nil
}

func area(r scene.Rect) int { return (r.X1 - r.X0) * (r.Y1 - r.Y0) }

// Observer returns the current Scene of a device.
type Observer func(ctx context.Context) (*scene.Scene, error)

// Live resolves against a Scene it refreshes: the first Resolve uses the
// Scene it was given (the one the step just observed), every later one
// observes again, because the action in between may have changed the screen
// (scrolling until something shows). Safe for use by one action at a time.
type Live struct {
	Observe Observer
	Scene   *scene.Scene // used once, then refreshed; nil observes at once
	// Observed, when set, is told about every Scene observed.
	Observed func(*scene.Scene)
}

// Resolve implements action.Resolver.
func (lv *Live) Resolve(ctx context.Context, l action.Locator) (action.Target, error) {
	s := lv.Scene
	lv.Scene = nil
	if s == nil {
		var err error
		if s, err = lv.Observe(ctx); err != nil {
			return action.Target{}, fmt.Errorf("observe the screen to find %s: %w", l, err)
		}
		if lv.Observed != nil {
			lv.Observed(s)
		}
	}
	return New(s).Resolve(ctx, l)
}

// ErrNoRule marks a free-text prompt that matched no visible text, id or
// description: only a model could resolve it, if it is on screen at all.
// errors.Is(ErrNoRule, action.ErrNotFound) holds.
var ErrNoRule error = noRule{}

type noRule struct{}

func (noRule) Error() string        { return "not found" }
func (noRule) Is(target error) bool { return target == action.ErrNotFound }

// Find returns the one element l names in s. Errors wrap action.ErrNotFound
// when nothing matches, or are an *AmbiguousError when several do.
func Find(s *scene.Scene, l action.Locator) (scene.Element, error) {
	e, _, err := Match(s, l)
	return e, err
}

// Match is Find that also says how exactly the element matched, so a
// check can tell evidence from a hint.
func Match(s *scene.Scene, l action.Locator) (scene.Element, Exactness, error) {
	if s == nil {
		return scene.Element{}, 0, errors.New("locate: no scene")
	}
	if l.IsZero() {
		return scene.Element{}, 0, errors.New("locate: empty locator: give text, id, desc, type or a description")
	}
	if l.Point != nil && l.Prompt == "" && l.Text == "" && l.ID == "" && l.Desc == "" && l.Type == "" {
		e, err := at(s, *l.Point)
		return e, Exact, err
	}
	q := compile(l)
	if q.sceneID != "" {
		e, ok := s.Element(q.sceneID)
		if !ok {
			return scene.Element{}, 0, fmt.Errorf("no element %s on this screen (ids change when the screen does; ids now run e1 to e%d): %w", q.sceneID, len(s.Elements), action.ErrNotFound)
		}
		return e, Exact, nil
	}
	visible := make([]scene.Element, 0, len(s.Elements))
	for _, e := range s.Elements {
		if !e.Bounds.Empty() {
			visible = append(visible, e)
		}
	}
	rules := rulesFor(q)
	// With a type hint ("the search box"), the first rule whose hits include
	// that type wins; only when no rule finds one does the hint give way
	// (people call a clickable text a button).
	for pass := 0; pass < 2; pass++ {
		if pass == 0 && q.typeHint == "" {
			continue
		}
		// The first rule's hits that are all of the kind the locator does
		// not want (fields for a tap), kept while later rules look for
		// the kind it does.
		var aside []scene.Element
		var asideRule rule
		for _, r := range rules {
			var hits []scene.Element
			for _, e := range visible {
				if e.Part != "" && !r.byID || q.typ != "" && !strings.EqualFold(e.Type, q.typ) {
					continue
				}
				if pass == 0 && !typeMatches(e, q.typeHint) {
					continue
				}
				if r.match(e) {
					hits = append(hits, e)
				}
			}
			if len(hits) == 0 {
				continue
			}
			wanted, other := byKind(hits, l.NamesField())
			switch {
			case q.indexSet || q.index > 0 || q.last || r.byID && aside == nil:
				// An index counts every match, of either kind; a resource
				// id names its element whatever its kind.
				e, err := pick(l, q, r, hits)
				return e, r.how, err
			case len(wanted) > 0:
				e, err := pick(l, q, r, wanted)
				return e, r.how, setAside(err, append(aside, other...), l.NamesField())
			case aside == nil && (l.NamesField() || typing(other)) && r.how < Loose:
				// Only fields match so far, and one is being typed into:
				// the words just typed are not what a tap means, if a
				// later rule finds something else.
				aside, asideRule = other, r
				continue
			case aside == nil:
				e, err := pick(l, q, r, hits)
				return e, r.how, err
			}
		}
		if aside != nil {
			e, err := pick(l, q, asideRule, aside)
			return e, asideRule.how, err
		}
	}
	return scene.Element{}, 0, missing(s, l, q)
}

// byKind splits hits into those of the kind a locator wants (editable when
// it names a field, not editable otherwise) and the others.
func byKind(hits []scene.Element, field bool) (wanted, other []scene.Element) {
	for _, e := range hits {
		if e.Flags.Editable == field {
			wanted = append(wanted, e)
		} else {
			other = append(other, e)
		}
	}
	return wanted, other
}

// typing reports whether one of the fields is focused: its text is what
// the user is typing.
func typing(fields []scene.Element) bool {
	for _, e := range fields {
		if e.Flags.Focused {
			return true
		}
	}
	return false
}

// setAside adds to an ambiguity error the matches passed over for their
// kind, so its list says why they are not among the candidates.
func setAside(err error, aside []scene.Element, field bool) error {
	var amb *AmbiguousError
	if len(aside) == 0 || !errors.As(err, &amb) {
		return err
	}
	amb.SetAside = aside
	amb.Why = "text fields, passed over for a target that is not one"
	if field {
		amb.Why = "not text fields, passed over for a field to type into"
	}
	return amb
}

// pick chooses among the hits of one rule: by containment, then by index; otherwise the hits are ambiguous.
func pick(l action.Locator, q *query, r rule, hits []scene.Element) (scene.Element, error) {
	hits = dedupe(hits)
	switch {
	case q.last:
		return hits[len(hits)-1], nil
	case q.indexSet || q.index > 0:
		if q.index >= len(hits) {
			return scene.Element{}, fmt.Errorf("%s: index %d asked, but only %d elements match (%s): %w", l, q.index, len(hits), r.name, action.ErrNotFound)
		}
		return hits[q.index], nil
	case len(hits) == 1:
		return hits[0], nil
	}
	return scene.Element{}, &AmbiguousError{Locator: l, Rule: r.name, How: r.how, Candidates: hits}
}

// typeMatches reports whether an element is of a hinted type; a clickable
// text counts as a button, an editable one as an input.
func typeMatches(e scene.Element, hint string) bool {
	switch {
	case strings.EqualFold(e.Type, hint):
		return true
	case hint == "button":
		return e.Flags.Clickable && e.Type != "input"
	case hint == "input":
		return e.Flags.Editable
	case hint == "switch":
		return e.Type == "checkbox" || e.Flags.Checkable
	}
	return false
}

// dedupe drops an element that lies inside another hit that a person would
// act on instead: a label inside its clickable row, a copy with the same
// bounds.
func dedupe(hits []scene.Element) []scene.Element {
	if len(hits) < 2 {
		return hits
	}
	out := hits[:0:0]
	for i, a := range hits {
		drop := false
		for j, b := range hits {
			if i == j || !inside(a.Bounds, b.Bounds) {
				continue
			}
			same := a.Bounds == b.Bounds
			if (b.Flags.Interactive() && !a.Flags.Interactive()) || (same && j < i && b.Flags.Interactive() == a.Flags.Interactive()) {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, a)
		}
	}
	return out
}

func inside(a, b scene.Rect) bool {
	return a.X0 >= b.X0 && a.Y0 >= b.Y0 && a.X1 <= b.X1 && a.Y1 <= b.Y1
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
