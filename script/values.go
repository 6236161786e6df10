package script

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// str reads a scalar as text (numbers and booleans too, as written).
func (l *loader) str(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		l.errorf(n, "%s: expected text, got %s", what, describe(n))
		return ""
	}
	return l.interpolate(n, n.Value, false)
}

// text reads a scalar as text put in when the step runs: it may refer to
// values (${total}).
func (l *loader) text(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		l.errorf(n, "%s: expected text, got %s", what, describe(n))
		return ""
	}
	return l.interpolate(n, n.Value, true)
}

// optText is text that accepts an empty value.
func (l *loader) optText(n *yaml.Node, what string) string {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return ""
	}
	return l.text(n, what)
}

func (l *loader) boolean(n *yaml.Node, what string) bool {
	s := l.str(n, what)
	switch strings.ToLower(s) {
	case "true", "yes", "on":
		return true
	case "false", "no", "off", "":
		return false
	}
	l.errorf(n, "%s: expected true or false, got %q", what, s)
	return false
}

func (l *loader) integer(n *yaml.Node, what string) int {
	s := l.str(n, what)
	v, err := strconv.Atoi(s)
	if err != nil {
		l.errorf(n, "%s: expected a whole number, got %q", what, s)
	}
	return v
}

func (l *loader) number(n *yaml.Node, what string) float64 {
	s := l.str(n, what)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		l.errorf(n, "%s: expected a number, got %q", what, s)
	}
	return v
}

// millis reads a duration: a number is milliseconds (as in Midscene), text
// with a unit ("2s", "500ms") is a Go duration.
func (l *loader) millis(n *yaml.Node, what string) time.Duration {
	s := l.str(n, what)
	if s == "" {
		return 0
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if v < 0 || v > 24*3600*1000 {
			l.errorf(n, "%s: %v ms is out of range (0 to one day)", what, v)
			return 0
		}
		return time.Duration(v * float64(time.Millisecond))
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		l.errorf(n, "%s: expected milliseconds (3000) or a duration (3s), got %q", what, s)
		return 0
	}
	return d
}

// elementObject is the object form of a step's element, in the wire format of
// Apex's locators (action.Locator, which script must not import): the same
// field names and order, so the runner decodes it strictly and a step's
// name shows it as written.
type elementObject struct {
	Prompt string `json:"prompt,omitempty"`
	Text   string `json:"text,omitempty"`
	ID     string `json:"id,omitempty"`
	Desc   string `json:"desc,omitempty"`
	Type   string `json:"type,omitempty"`
	Index  *int   `json:"index,omitempty"`
}

// element reads a step's target element as JSON: text is a prompt (a JSON string),
// a mapping names fields (an object; one naming only a prompt is the same
// prompt as a string).
func (l *loader) element(n *yaml.Node, what string) json.RawMessage {
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag != "!!null":
		p := strings.TrimSpace(l.interpolate(n, n.Value, true))
		if p == "" {
			l.errorf(n, "%s: the target is empty: name the element (text, id, desc or a description)", what)
		}
		return mustJSON(p)
	case n.Kind == yaml.MappingNode:
		var t elementObject
		for _, p := range l.pairs(n, what) {
			switch p.key.Value {
			case "prompt":
				t.Prompt = l.text(p.val, what+".prompt")
			case "text":
				t.Text = l.text(p.val, what+".text")
			case "id", "resourceId", "resource_id":
				t.ID = l.text(p.val, what+"."+p.key.Value)
			case "desc", "contentDesc", "description":
				t.Desc = l.text(p.val, what+"."+p.key.Value)
			case "type":
				t.Type = l.str(p.val, what+".type")
			case "index":
				i := l.integer(p.val, what+".index")
				if i < 0 {
					l.errorf(p.val, "%s.index: expected 0 or more, got %d", what, i)
				}
				t.Index = &i
			case "images", "convertHttpImage2Base64":
				// Midscene reference images: only a model could use them.
			default:
				l.errorf(p.key, "unknown key %q in %s: expected text, id, desc, type, index or prompt", p.key.Value, what)
			}
		}
		if t == (elementObject{Prompt: t.Prompt, Index: t.Index}) {
			if t.Prompt == "" {
				// An index alone picks among nothing.
				l.errorf(n, "%s: the target names nothing: give text, id, desc, type or prompt", what)
			} else if t.Index == nil {
				return mustJSON(t.Prompt)
			}
		}
		return mustJSON(t)
	}
	l.errorf(n, "%s: expected a target (text, or a mapping with text, id, desc, type, index), got %s", what, describe(n))
	return nil
}

// mustJSON encodes a value that always encodes: a string or an elementObject.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("script: encode target: " + err.Error())
	}
	return b
}

// toAny converts a node to plain Go values for JSON, interpolating text.
func (l *loader) toAny(n *yaml.Node) any {
	return l.toAnyDepth(n, 0)
}

func (l *loader) toAnyDepth(n *yaml.Node, depth int) any {
	n = resolveAlias(n)
	l.visits++
	if depth > 32 || l.visits > maxVisits {
		if !l.tooBig {
			l.tooBig = true
			l.errorf(n, "value nested too deep or expanded by too many aliases")
		}
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for _, p := range l.pairs(n, "value") {
			m[p.key.Value] = l.toAnyDepth(p.val, depth+1)
		}
		return m
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, l.toAnyDepth(c, depth+1))
		}
		return out
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil
		case "!!bool":
			return l.boolean(n, "value")
		case "!!int", "!!float":
			if v, err := strconv.ParseFloat(n.Value, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
				return v
			}
		}
		return l.interpolate(n, n.Value, true)
	}
	return nil
}
