// Package check decides expectations about a screen: pure predicates over
// a Scene (exists, reads, is checked, holds a number, changed since before)
// that script asserts and the agent's validator share. A check never
// guesses: a loose match is no evidence, several candidates for a text
// check are an error that lists them, and every result says how exactly
// its evidence matched.
package check

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/scene"
)

// Kind names a predicate.
type Kind string

// The kinds of check.
const (
	Exists        Kind = "exists"
	NotExists     Kind = "notExists"
	TextEquals    Kind = "textEquals"
	TextContains  Kind = "textContains"
	NumberGreater Kind = "numberGreater"
	NumberLess    Kind = "numberLess"
	Checked       Kind = "checked"
	NotChecked    Kind = "notChecked"
	Enabled       Kind = "enabled"
	Focused       Kind = "focused"
	Count         Kind = "count"
	Region        Kind = "region"
	LayoutChanged Kind = "layoutChanged"
)

// Kinds lists every kind, in the order errors name them.
var Kinds = []Kind{Exists, NotExists, TextEquals, TextContains, NumberGreater, NumberLess,
	Checked, NotChecked, Enabled, Focused, Count, Region, LayoutChanged}

// Check is an expectation about the screen.
type Check struct {
	Kind   Kind           `json:"kind"`
	Target action.Locator `json:"target,omitzero"`  // the element the check is about
	Text   string         `json:"text,omitempty"`   // textEquals / textContains
	Number float64        `json:"number,omitempty"` // numberGreater / numberLess / count
	// Regions are region's assertions; all must hold.
	Regions []RegionText `json:"regions,omitempty"`
}

// RegionText is one assertion of a region check: within the named part of
// the screen (top, bottom, left, right, center, header, footer, dialog, or
// an element's text or id) Text must (or, with MustExist false, must not)
// appear, or an element there must read MustEqual exactly.
type RegionText struct {
	Name      string `json:"name"`
	Text      string `json:"text,omitempty"`
	MustExist *bool  `json:"must_exist,omitempty"`
	MustEqual string `json:"must_equal,omitempty"`
}

// Result is what a check saw.
type Result struct {
	Pass bool
	// Quality is how exactly the evidence matched: 1 exact; below 1 loose
	// (a match ignoring case, a contained text, an absence on a screen whose
	// tree says nothing); 0 when the check could not be decided.
	Quality float64
	// Evidence is one line a person reads: what was seen.
	Evidence string
	// Actual is the value compared: the text, the number, the flag, the
	// count.
	Actual any
	// Element is the element checked, when one was found.
	Element *scene.Element
}

// Firm is the quality at and above which a passing result holds without a
// person's review.
const Firm = 0.8

// Holds reports whether the check passed on firm evidence.
func (r Result) Holds() bool { return r.Pass && r.Quality >= Firm }

// ParseTarget reads a target as written in a plan or a check sentence:
// "id:RES" is a resource id, anything else describes the element.
func ParseTarget(s string) action.Locator {
	if id, ok := strings.CutPrefix(s, "id:"); ok {
		return action.Locator{ID: id}
	}
	return action.Locator{Prompt: s}
}

// NeedsText reports whether the target's text decides the check, so an
// element without text in the tree is worth reading from the pixels.
func (c Check) NeedsText() bool {
	switch c.Kind {
	case TextEquals, TextContains, NumberGreater, NumberLess:
		return true
	}
	return false
}

// needsTarget reports whether the kind is about one element.
func (c Check) needsTarget() bool { return c.Kind != Region && c.Kind != LayoutChanged }

// Validate says what is missing for the check to be decided.
func (c Check) Validate() error {
	if !known(c.Kind) {
		return fmt.Errorf("unknown check kind %q: use %s", c.Kind, kindList())
	}
	switch {
	case c.needsTarget() && c.Target.IsZero():
		return fmt.Errorf("%s needs a target: the element it is about", c.Kind)
	case c.Kind == Region && len(c.Regions) == 0:
		return errors.New("region needs regions: [{name, text}] naming a part of the screen and the text there")
	case c.Kind == Count && (c.Number < 0 || c.Number != float64(int(c.Number))):
		return fmt.Errorf("count needs a whole number of elements, got %v", c.Number)
	case c.Kind == Count && c.Target.HasIndex():
		return errors.New("count counts every match: drop the target's index")
	}
	for i, r := range c.Regions {
		if r.Name == "" {
			return fmt.Errorf("region %d needs a name: top, bottom, left, right, center, header, footer, dialog or an element", i+1)
		}
		if r.Text == "" && r.MustEqual == "" {
			return fmt.Errorf("region %s needs text or must_equal", r.Name)
		}
	}
	return nil
}

func known(k Kind) bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// String renders the check in a few words, in the controlled language
// where it has a sentence for it: `"Cart" shows`, `"Total" reads "$5"`.
func (c Check) String() string {
	t := c.Target.String()
	if id := c.Target.ID; id != "" && c.Target == (action.Locator{ID: id}) {
		t = strconv.Quote("id:" + id) // as ParseTarget reads it
	}
	n := strconv.FormatFloat(c.Number, 'f', -1, 64)
	switch c.Kind {
	case Exists:
		return t + " shows"
	case NotExists:
		return t + " is gone"
	case TextEquals:
		return fmt.Sprintf("%s reads %q", t, c.Text)
	case TextContains:
		return fmt.Sprintf("%s contains %q", t, c.Text)
	case NumberGreater:
		return t + " is greater than " + n
	case NumberLess:
		return t + " is less than " + n
	case Checked:
		return t + " is checked"
	case NotChecked:
		return t + " is not checked"
	case Enabled:
		return t + " can be used"
	case Focused:
		return t + " is focused"
	case Count:
		return fmt.Sprintf("%s shows %s times", t, n)
	case LayoutChanged:
		return "the screen changed"
	case Region:
		var parts []string
		for _, r := range c.Regions {
			switch {
			case r.MustEqual != "":
				parts = append(parts, fmt.Sprintf("%q reads %q", r.Name, r.MustEqual))
			case r.MustExist != nil && !*r.MustExist:
				parts = append(parts, fmt.Sprintf("%q is not in the %s", r.Text, r.Name))
			default:
				parts = append(parts, fmt.Sprintf("%q is in the %s", r.Text, r.Name))
			}
		}
		return strings.Join(parts, ", ")
	}
	return string(c.Kind)
}
