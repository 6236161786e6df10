package agent

import (
	"fmt"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/scene"
)

// switchTarget is the control a step that turns something on or off acts
// on: the switch or checkbox labelled as the locator says, or the switch
// in the row whose own label that is — never an element that merely
// mentions it (the Settings row "Network & internet · Wi-Fi, airplane
// mode" is no Wi-Fi switch). Several are an *locate.AmbiguousError; none
// is an error wrapping action.ErrNotFound that lists what mentions it,
// so the planner knows where to go first.
func switchTarget(sc *scene.Scene, l action.Locator) (scene.Element, error) {
	want := strings.TrimSpace(locatorWords(l))
	var hits, mentions []scene.Element
	for _, e := range sc.Elements {
		if e.System || e.Bounds.Empty() {
			continue
		}
		own := labelled(e, want)
		switch {
		case own && e.Flags.Checkable:
			hits = append(hits, e)
		case own:
			if sw, ok := switchIn(sc, e); ok {
				hits = append(hits, sw)
			}
		case e.Part == "" && strings.Contains(strings.ToLower(label(e)), strings.ToLower(want)):
			mentions = append(mentions, e)
		}
	}
	hits = candidates(hits)
	switch {
	case len(hits) == 1:
		return hits[0], nil
	case len(hits) > 1:
		return scene.Element{}, &locate.AmbiguousError{Locator: l, Rule: "switch labelled", How: locate.Exact, Candidates: hits}
	}
	msg := fmt.Sprintf("no switch or checkbox labelled %q on screen", want)
	if len(mentions) == 0 {
		return scene.Element{}, fmt.Errorf("%s: %w", msg, action.ErrNotFound)
	}
	var ms []string
	for _, m := range mentions[:min(len(mentions), 4)] {
		ms = append(ms, brief(m))
	}
	return scene.Element{}, fmt.Errorf("%s, only mentioned by %s: open the page that holds the switch first (tap what mentions it), then turn it on or off: %w",
		msg, strings.Join(ms, ", "), errMentionedOnly)
}

// errMentionedOnly is switchTarget's error when elements mention the
// switch's label but none is it: the switch is on another page. Recovery
// cannot get there by scrolling or waiting; the planner must.
var errMentionedOnly error = mentionedOnly{}

type mentionedOnly struct{}

func (mentionedOnly) Error() string        { return "not found" }
func (mentionedOnly) Is(target error) bool { return target == action.ErrNotFound }

// labelled reports whether e's own label is want, ignoring case and
// surrounding space.
func labelled(e scene.Element, want string) bool {
	return strings.EqualFold(strings.TrimSpace(e.Text), want) || strings.EqualFold(strings.TrimSpace(e.Desc), want)
}

// switchIn is the checkable element of the row e labels: inside e, or
// beside it on the same line.
func switchIn(sc *scene.Scene, e scene.Element) (scene.Element, bool) {
	_, y := e.Bounds.Center()
	for _, c := range sc.Elements {
		if c.ID == e.ID || !c.Flags.Checkable || c.System {
			continue
		}
		if cx, cy := c.Bounds.Center(); e.Bounds.Contains(cx, cy) || c.Bounds.Y0 <= y && y < c.Bounds.Y1 {
			return c, true
		}
	}
	return scene.Element{}, false
}
