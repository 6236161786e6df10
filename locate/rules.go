package locate

import (
	"strings"
	"unicode/utf8"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/scene"
)

// rule is one way of matching, tried in order from strictest to loosest;
// the first rule with any hit decides.
type rule struct {
	name  string
	how   Exactness
	match func(scene.Element) bool
	// byID is set for rules that match a resource id: only they see the
	// parts of a Scene (texts their rows already say).
	byID bool
}

func compile(l action.Locator) *query {
	q := &query{typ: l.Type, desc: l.Desc, text2: l.Text, index: l.Index, indexSet: l.HasIndex()}
	if l.ID != "" {
		if isSceneID(l.ID) {
			q.sceneID = l.ID
		} else {
			q.strictID = l.ID
		}
	}
	if l.Prompt != "" && q.sceneID == "" && q.strictID == "" && q.text2 == "" && q.desc == "" {
		idx, set := q.index, q.indexSet
		parsePrompt(l.Prompt, q)
		if set {
			q.index, q.indexSet = idx, true
		}
	}
	return q
}

func norm(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// entryName is the part of a resource id after ":id/", as a person says it.
func entryName(id string) string {
	if i := strings.LastIndex(id, "/"); i >= 0 {
		id = id[i+1:]
	}
	return strings.ToLower(id)
}

func rulesFor(q *query) []rule {
	if q.strictID != "" || q.text2 != "" || q.desc != "" {
		return structuredRules(q)
	}
	if q.text == "" {
		if q.typ != "" || q.typeHint != "" {
			hint := q.typeHint
			return []rule{{"type", Exact, func(e scene.Element) bool { return hint == "" || typeMatches(e, hint) }, false}}
		}
		return nil
	}
	t := q.text
	nt := norm(t)
	idForm := strings.ReplaceAll(nt, " ", "_")
	short := utf8.RuneCountInString(nt) < 2 && isASCII(nt)
	rules := []rule{
		{"exact text", Exact, func(e scene.Element) bool { return e.Text == t }, false},
		{"exact description", Exact, func(e scene.Element) bool { return e.Desc == t }, false},
		{"text or description ignoring case", IgnoringCase, func(e scene.Element) bool { return norm(e.Text) == nt || norm(e.Desc) == nt }, false},
		{"resource id", Exact, func(e scene.Element) bool { return e.ResourceID != "" && entryName(e.ResourceID) == idForm }, true},
	}
	if short {
		return rules
	}
	rules = append(rules,
		rule{"text contains", Contained, func(e scene.Element) bool { return strings.Contains(norm(e.Text), nt) }, false},
		rule{"description contains", Contained, func(e scene.Element) bool { return strings.Contains(norm(e.Desc), nt) }, false},
		rule{"resource id contains", Contained, func(e scene.Element) bool {
			return e.ResourceID != "" && strings.Contains(entryName(e.ResourceID), idForm)
		}, true},
	)
	if words := strings.Fields(nt); len(words) > 1 {
		rules = append(rules, rule{"all words", Loose, func(e scene.Element) bool {
			hay := norm(e.Text) + " " + norm(e.Desc) + " " + strings.ReplaceAll(entryName(e.ResourceID), "_", " ")
			for _, w := range words {
				if !strings.Contains(hay, w) {
					return false
				}
			}
			return true
		}, false})
	}
	return rules
}

// structuredRules match every given field, first exactly, then ignoring
// case, then by containment.
func structuredRules(q *query) []rule {
	field := func(want, got string, level int) bool {
		switch {
		case want == "":
			return true
		case level == 0:
			return got == want
		case level == 1:
			return norm(got) == norm(want)
		}
		return strings.Contains(norm(got), norm(want))
	}
	id := func(e scene.Element, level int) bool {
		switch {
		case q.strictID == "":
			return true
		case level == 0:
			return e.ResourceID == q.strictID || (!strings.Contains(q.strictID, "/") && entryName(e.ResourceID) == strings.ToLower(q.strictID))
		case level == 1:
			return strings.EqualFold(e.ResourceID, q.strictID)
		}
		return e.ResourceID != "" && strings.HasSuffix(strings.ToLower(e.ResourceID), strings.ToLower(q.strictID))
	}
	names := []string{"exact fields", "fields ignoring case", "fields contain"}
	rules := make([]rule, 0, 3)
	for level := range 3 {
		rules = append(rules, rule{names[level], Exactness(level), func(e scene.Element) bool {
			return id(e, level) && field(q.text2, e.Text, level) && field(q.desc, descOf(e), level)
		}, q.strictID != ""})
	}
	return rules
}

// descOf is what a desc locator matches: the content description, or on
// iOS, where the accessibility label plays its part and the scene keeps
// it as the element's text, the label.
func descOf(e scene.Element) string {
	if e.Desc == "" && strings.HasPrefix(e.Class, "XCUIElementType") {
		return e.Text
	}
	return e.Desc
}
