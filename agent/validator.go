package agent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/scene"
)

// Verdict is the validator's answer: pass or fail, how sure, and why.
// Review is set when the confidence is between 0.6 and 0.8: the task stops
// for a person instead of guessing.
type Verdict struct {
	Pass       bool    `json:"pass"`
	Confidence float64 `json:"confidence"`
	Evidence   string  `json:"evidence"`
	Review     bool    `json:"review,omitempty"`
}

// Review bounds: a confidence in [ReviewLow, ReviewHigh) is REVIEW_REQUIRED;
// below ReviewLow a verdict counts as a failure.
const (
	ReviewLow  = 0.6
	ReviewHigh = 0.8
)

func verdict(pass bool, conf float64, format string, args ...any) Verdict {
	v := Verdict{Pass: pass, Confidence: conf, Evidence: fmt.Sprintf(format, args...)}
	v.Review = conf >= ReviewLow && conf < ReviewHigh
	return v
}

// sure reports whether v passed with enough confidence to move on.
func (v Verdict) sure() bool { return v.Pass && v.Confidence >= ReviewHigh }

// locatorFor turns a check target into a locator: "id:x" is a resource id,
// anything else a prompt (visible text, description).
func locatorFor(target string) action.Locator {
	if id, ok := strings.CutPrefix(target, "id:"); ok {
		return action.Locator{ID: id}
	}
	return action.Locator{Prompt: target}
}

// findIn locates target for the validator and says how exactly it
// matched: 1 for exact text, description or id, 0.95 ignoring case and
// spacing, 0.9 when contained. Looser rule matches (all words somewhere)
// are not evidence that the target is shown: they count as absent.
func findIn(s *scene.Scene, target string) (scene.Element, float64, error) {
	e, err := locate.Find(s, locatorFor(target))
	var amb *locate.AmbiguousError
	if errors.As(err, &amb) {
		best, bestQ := scene.Element{}, 0.0
		for _, c := range amb.Candidates {
			if q := quality(c, target); q > bestQ {
				best, bestQ = c, q
			}
		}
		if bestQ == 0 {
			return scene.Element{}, 0, fmt.Errorf("%q: only loose matches (%s): %w", target, amb.Rule, action.ErrNotFound)
		}
		return best, bestQ, nil
	}
	if err != nil {
		return scene.Element{}, 0, err
	}
	if q := quality(e, target); q > 0 {
		return e, q, nil
	}
	return scene.Element{}, 0, fmt.Errorf("%q: only a loose match (%s): %w", target, brief(e), action.ErrNotFound)
}

// quality grades how well e matches target: 1 exact, 0.95 ignoring case,
// 0.9 contained, 0 otherwise.
func quality(e scene.Element, target string) float64 {
	if exactly(e, target) {
		return 1
	}
	t := norm(strings.TrimPrefix(target, "id:"))
	rid := e.ResourceID[strings.LastIndex(e.ResourceID, "/")+1:]
	switch {
	case norm(e.Text) == t || norm(e.Desc) == t:
		return 0.95
	case strings.Contains(norm(e.Text), t) || strings.Contains(norm(e.Desc), t) || t != "" && strings.Contains(rid, strings.ReplaceAll(t, " ", "_")):
		return 0.9
	}
	return 0
}

func exactly(e scene.Element, target string) bool {
	t := strings.TrimSpace(strings.TrimPrefix(target, "id:"))
	return e.Text == t || e.Desc == t || e.ResourceID == t || strings.HasSuffix(e.ResourceID, "/"+t) || e.ID == t
}

func label(e scene.Element) string {
	if e.Text != "" {
		return e.Text
	}
	return e.Desc
}

func brief(e scene.Element) string {
	return fmt.Sprintf("%s %s %q", e.ID, e.Type, truncate(label(e), 60))
}

// checkScene decides c on the screen after (before is the screen the step
// started from, for LAYOUT_CHANGED). It never guesses: a target no rule can
// find is a failure with confidence 1 only when the tree is readable.
func checkScene(c *Check, before, after *scene.Scene) Verdict {
	if after == nil {
		return verdict(false, 0, "no screen to check")
	}
	absentConf := 1.0
	if after.Empty {
		absentConf = 0.5 // the tree says nothing; OCR would be needed to be sure
	}
	switch c.Kind {
	case LayoutChanged:
		if before == nil {
			return verdict(false, 0.5, "no earlier screen to compare with")
		}
		if before.Fingerprint() != after.Fingerprint() {
			d := scene.Diff(before, after)
			return verdict(true, 1, "screen changed: %d appeared, %d gone, %d changed", len(d.Appeared), len(d.Disappeared), len(d.Changed))
		}
		return verdict(false, 1, "screen unchanged")
	case RegionCheck:
		return checkRegions(c.Regions, after)
	}
	e, conf, err := findIn(after, c.Target)
	var amb *locate.AmbiguousError
	ambiguous := errors.As(err, &amb)
	switch c.Kind {
	case Exist:
		if err == nil || ambiguous {
			return verdict(true, conf, "%q is shown: %s", c.Target, brief(e))
		}
		return verdict(false, absentConf, "%q is not on screen", c.Target)
	case NotExist:
		if err != nil && !ambiguous {
			return verdict(true, absentConf, "%q is not on screen", c.Target)
		}
		return verdict(false, conf, "%q is on screen: %s", c.Target, brief(e))
	}
	if err != nil && !ambiguous {
		return verdict(false, absentConf, "%q is not on screen", c.Target)
	}
	text := label(e)
	switch c.Kind {
	case TextEquals:
		switch {
		case strings.TrimSpace(text) == strings.TrimSpace(c.Value):
			return verdict(true, conf, "%s reads %q", e.ID, text)
		case norm(text) == norm(c.Value):
			return verdict(true, 0.7, "%s reads %q, which equals %q only ignoring case and spacing", e.ID, text, c.Value)
		}
		return verdict(false, conf, "%s reads %q, want %q", e.ID, text, c.Value)
	case TextContains:
		if strings.Contains(text, c.Value) {
			return verdict(true, conf, "%s reads %q", e.ID, text)
		}
		if strings.Contains(norm(text), norm(c.Value)) {
			return verdict(true, 0.7, "%s reads %q, which contains %q only ignoring case and spacing", e.ID, text, c.Value)
		}
		return verdict(false, conf, "%s reads %q, without %q", e.ID, text, c.Value)
	case NumericGreater, NumericLess:
		want, _ := scene.FirstNumber(c.Value)
		got, ok := scene.FirstNumber(strings.TrimPrefix(text, strings.TrimSpace(c.Target)))
		if !ok {
			got, ok = scene.FirstNumber(text)
		}
		if !ok {
			return verdict(false, conf, "%s reads %q, which holds no number", e.ID, text)
		}
		pass := got > want
		if c.Kind == NumericLess {
			pass = got < want
		}
		return verdict(pass, conf, "%s shows %s (want %s %s)", e.ID, strconv.FormatFloat(got, 'f', -1, 64), map[string]string{NumericGreater: ">", NumericLess: "<"}[c.Kind], c.Value)
	case Checked, NotChecked:
		if !e.Flags.Checkable && !e.Flags.Checked {
			// "Wi-Fi" may name the row; look for the switch on it.
			if sw, ok := checkableNear(after, e); ok {
				e = sw
			}
		}
		want := c.Kind == Checked
		return verdict(e.Flags.Checked == want, conf, "%s is %s", brief(e), onOff(e.Flags.Checked))
	}
	return verdict(false, 0, "unknown check %q", c.Kind)
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

func onOff(b bool) string {
	if b {
		return "checked"
	}
	return "not checked"
}

func norm(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// regionRect maps a region name to a part of the screen; other names are
// looked up as an element (its bounds are the region).
func regionRect(s *scene.Scene, name string) (scene.Rect, bool) {
	w, h := s.Width, s.Height
	switch strings.ToLower(name) {
	case "top":
		return scene.Rect{X1: w, Y1: h / 2}, true
	case "bottom":
		return scene.Rect{Y0: h / 2, X1: w, Y1: h}, true
	case "left":
		return scene.Rect{X1: w / 2, Y1: h}, true
	case "right":
		return scene.Rect{X0: w / 2, X1: w, Y1: h}, true
	case "center", "centre":
		return scene.Rect{X0: w / 4, Y0: h / 4, X1: w * 3 / 4, Y1: h * 3 / 4}, true
	case "header":
		return scene.Rect{X1: w, Y1: h * 15 / 100}, true
	case "footer":
		return scene.Rect{Y0: h * 85 / 100, X1: w, Y1: h}, true
	case "dialog":
		return scene.Rect{X0: w / 10, Y0: h / 5, X1: w * 9 / 10, Y1: h * 4 / 5}, true
	}
	if e, _, err := findIn(s, name); err == nil {
		return e.Bounds, true
	}
	return scene.Rect{}, false
}

// checkRegions decides region assertions {name, text, must_exist,
// must_equal}; the verdict is as sure as its least sure part.
func checkRegions(rs []Region, s *scene.Scene) Verdict {
	var why []string
	conf := 1.0
	for _, r := range rs {
		rect, ok := regionRect(s, r.Name)
		if !ok {
			return verdict(false, 1, "region %q is not on screen", r.Name)
		}
		var in []scene.Element
		for _, e := range s.Elements {
			if x, y := e.Bounds.Center(); !e.System && rect.Contains(x, y) {
				in = append(in, e)
			}
		}
		found, exact := false, false
		var hit scene.Element
		for _, e := range in {
			l := label(e)
			if r.Text != "" && strings.Contains(l, r.Text) || r.Text == "" && r.MustEqual != "" && l == r.MustEqual {
				found, hit = true, e
				exact = r.MustEqual == "" || l == r.MustEqual
				if exact {
					break
				}
			}
		}
		mustExist := r.MustExist == nil || *r.MustExist
		switch {
		case mustExist && !found:
			return verdict(false, 1, "region %s: %q not found among %d elements", r.Name, r.Text+r.MustEqual, len(in))
		case !mustExist && found:
			return verdict(false, 1, "region %s: %q is there (%s) but must not be", r.Name, r.Text, brief(hit))
		case found && r.MustEqual != "" && !exact:
			if norm(label(hit)) != norm(r.MustEqual) {
				return verdict(false, 1, "region %s: %s reads %q, want %q", r.Name, hit.ID, label(hit), r.MustEqual)
			}
			conf = min(conf, 0.7)
		}
		why = append(why, fmt.Sprintf("%s ok", r.Name))
	}
	return verdict(true, conf, "regions: %s", strings.Join(why, ", "))
}
