package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/apexagent/apex/scene"
)

// kindNames maps the spellings of a kind, lowercased without '_', '-' or
// spaces, to the kind: the script's ("notExists", "numberGreater") and the
// plan's a model writes ("NOT_EXIST", "NUMERIC_GREATER").
var kindNames = map[string]Kind{
	"exist": Exists, "exists": Exists,
	"notexist": NotExists, "notexists": NotExists,
	"textequals": TextEquals, "textequal": TextEquals,
	"textcontains": TextContains, "textcontain": TextContains,
	"numericgreater": NumberGreater, "numbergreater": NumberGreater,
	"numericless": NumberLess, "numberless": NumberLess,
	"checked": Checked, "notchecked": NotChecked, "unchecked": NotChecked,
	"enabled": Enabled, "focused": Focused, "count": Count,
	"region": Region, "regions": Region,
	"layoutchanged": LayoutChanged,
}

// ParseKind reads a kind in any of its spellings; an unknown one comes
// back as written, for Validate to name.
func ParseKind(s string) Kind {
	k := strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(s))
	if kind, ok := kindNames[k]; ok {
		return kind
	}
	return Kind(s)
}

// wire is a check as scripts, plans, records and models write it.
type wire struct {
	Kind    string          `json:"kind"`
	Target  json.RawMessage `json:"target"`
	Text    *string         `json:"text"`
	Number  *float64        `json:"number"`
	Value   json.RawMessage `json:"value"`
	Regions []RegionText    `json:"regions"`
}

// UnmarshalJSON reads a check in the script's spelling or a model's:
//
//	{"kind": "textEquals", "target": {"id": "total"}, "text": "$5"}
//	{"kind": "TEXT_EQUALS", "target": "id:total", "value": "$5"}
//	{"kind": "NUMERIC_GREATER", "target": "Brightness", "value": "60"}
//
// The target is a Locator (a string describes the element, "id:RES" is a
// resource id); value is the text of a text check and the number of a
// number check or count. An unknown kind is kept as written: Validate
// says which kinds there are. An empty kind decodes, so a plan can drop
// an expectation a model left blank.
func (c *Check) UnmarshalJSON(data []byte) error {
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("check: %w", err)
	}
	n := Check{Kind: ParseKind(w.Kind), Regions: w.Regions}
	if err := n.decodeTarget(w.Target); err != nil {
		return err
	}
	if w.Text != nil {
		n.Text = *w.Text
	}
	if w.Number != nil {
		n.Number = *w.Number
	}
	if err := n.decodeValue(w.Value, w.Text != nil, w.Number != nil); err != nil {
		return err
	}
	*c = n
	return nil
}

func (c *Check) decodeTarget(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("check target: %w", err)
		}
		if strings.TrimSpace(s) != "" {
			c.Target = ParseTarget(s)
		}
		return nil
	}
	if err := json.Unmarshal(raw, &c.Target); err != nil {
		return fmt.Errorf("check target: %w", err)
	}
	return nil
}

// decodeValue reads a model's value: a string or a number, meaning the
// text or the number the kind compares with. text and number, when given,
// win over it.
func (c *Check) decodeValue(raw json.RawMessage, hasText, hasNumber bool) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("check value: %w", err)
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil {
			return fmt.Errorf("check value: %w", err)
		}
		s = strconv.FormatFloat(f, 'f', -1, 64)
	default:
		return fmt.Errorf("check value: expected a string or a number, got %.20s", raw)
	}
	switch c.Kind {
	case TextEquals, TextContains:
		if !hasText {
			c.Text = s
		}
	case NumberGreater, NumberLess, Count:
		if hasNumber || strings.TrimSpace(s) == "" {
			return nil
		}
		f, ok := scene.FirstNumber(s)
		if !ok {
			return fmt.Errorf("check value: %s compares with a number, and %q holds none", c.Kind, s)
		}
		c.Number = f
	}
	return nil
}
