package agent

import (
	"fmt"
	"strings"

	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/engine"
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
// below ReviewLow a verdict counts as a failure. ReviewHigh is the quality
// at which a check's evidence is firm, so scripts and the agent agree.
const (
	ReviewLow  = 0.6
	ReviewHigh = check.Firm
)

func verdict(pass bool, conf float64, format string, args ...any) Verdict {
	v := Verdict{Pass: pass, Confidence: conf, Evidence: fmt.Sprintf(format, args...)}
	v.Review = conf >= ReviewLow && conf < ReviewHigh
	return v
}

// sure reports whether v passed with enough confidence to move on.
func (v Verdict) sure() bool { return v.Pass && v.Confidence >= ReviewHigh }

// judge decides c on the screen after (before is the screen the step
// started from, for layoutChanged) by the rules of package check; the
// verdict's confidence is how exactly the evidence matched, and a match
// that is only loose asks a person. It never guesses: a target no rule can
// find is a failure with confidence 1 only when the tree is readable.
func judge(c *check.Check, before, after *scene.Scene) Verdict {
	return verdictFrom(c.Eval(before, after))
}

// verdictFrom weighs a check's result: its quality is the confidence.
func verdictFrom(r check.Result) Verdict {
	return verdict(r.Pass, r.Quality, "%s", r.Evidence)
}

// verdictOf weighs the check of a step the engine ran: the last result it
// judged, or a failure saying why there was none.
func verdictOf(r *engine.Record) Verdict {
	if r == nil || r.Verdict == nil {
		why := "the step did not run"
		if r != nil && r.Err != nil {
			why = r.Err.Error()
		}
		return verdict(false, 1, "%s", why)
	}
	return verdictFrom(*r.Verdict)
}

// exactly reports whether e is target itself, not merely a match of it:
// its text, description, resource id or scene id.
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
