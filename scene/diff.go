package scene

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Fingerprint identifies a screen: two Scenes of the same screen have the
// same fingerprint even when the status-bar clock, battery level or
// notification icons changed. It hashes the app, the screen size, whether
// a soft keyboard shows, and each element's type, resource id, text (a
// field's text too), description, checked/selected/enabled/focused state
// and position (to 16 units), leaving out system-bar elements and parts
// (their rows carry their text) and masking the digits of text that looks
// like a clock or a percentage ("12:45", "87%"). Focusing a field or
// typing into it is a new screen; a caret blinking is not (no source
// shows it).
func (s *Scene) Fingerprint() string {
	h := sha256.New()
	var b []byte
	b = append(b, s.Package...)
	b = append(b, '|')
	b = strconv.AppendInt(b, int64(s.Width), 10)
	b = append(b, 'x')
	b = strconv.AppendInt(b, int64(s.Height), 10)
	if s.Keyboard {
		b = append(b, "|keyboard"...)
	}
	b = append(b, '\n')
	for i := range s.Elements {
		e := &s.Elements[i]
		if e.System || e.Part != "" {
			continue // a part's text is in its row's
		}
		b = append(b, e.Type...)
		b = append(b, '|')
		b = append(b, e.ResourceID...)
		b = append(b, '|')
		b = append(b, maskVolatile(e.Text)...)
		b = append(b, '|')
		b = append(b, maskVolatile(e.Desc)...)
		b = append(b, '|')
		for _, v := range [4]int{e.Bounds.X0, e.Bounds.Y0, e.Bounds.X1, e.Bounds.Y1} {
			b = strconv.AppendInt(b, int64(v>>4), 10)
			b = append(b, ',')
		}
		f := e.Flags
		for _, on := range [...]bool{f.Checked, f.Selected, f.Disabled, f.Editable, f.Clickable, f.Scrollable, f.Focused} {
			if on {
				b = append(b, '1')
			} else {
				b = append(b, '0')
			}
		}
		b = append(b, '\n')
		h.Write(b)
		b = b[:0]
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// maskVolatile replaces the digits of clock- and percentage-like text with
// '#', so "12:45 PM" and "12:46 PM" compare equal. Other text is returned
// unchanged.
func maskVolatile(s string) string {
	if !looksVolatile(s) {
		return s
	}
	out := []byte(s)
	for i, c := range out {
		if c >= '0' && c <= '9' {
			out[i] = '#'
		}
	}
	return string(out)
}

// looksVolatile matches short text made of digits with ':' or '%'
// ("9:41", "12:45 PM", "87%", "Battery 87 percent").
func looksVolatile(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	digits, colon, pct := 0, false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == ':':
			colon = true
		case c == '%':
			pct = true
		}
	}
	if digits == 0 {
		return false
	}
	l := strings.ToLower(s)
	if strings.Contains(l, "percent") || strings.Contains(l, "battery") {
		return true
	}
	if !colon && !pct {
		return false
	}
	// Mostly digits and punctuation: a clock or a level, not a sentence.
	letters := 0
	for _, r := range l {
		if r >= 'a' && r <= 'z' && r != 'a' && r != 'p' && r != 'm' {
			letters++
		}
	}
	return letters == 0
}

// Delta is what changed between two Scenes.
type Delta struct {
	Appeared    []Element `json:"appeared,omitempty"`
	Disappeared []Element `json:"disappeared,omitempty"`
	Changed     []Change  `json:"changed,omitempty"`
}

// Change is one element present in both Scenes in a different state.
type Change struct {
	Before Element  `json:"before"`
	After  Element  `json:"after"`
	Fields []string `json:"fields"` // what differs: text, desc, bounds, checked, selected, disabled, focused, note
}

// Empty reports whether nothing changed.
func (d Delta) Empty() bool {
	return len(d.Appeared) == 0 && len(d.Disappeared) == 0 && len(d.Changed) == 0
}

// Diff says what appeared, disappeared and changed from a to b, ignoring
// ids (they are renumbered per Scene), system-bar elements and parts (a
// part changes with its row's text). Elements
// are matched first when identical, then by type, resource id and text
// (a moved or toggled element), then by type and resource id (an element
// whose text changed, like a counter).
func Diff(a, b *Scene) Delta {
	before, after := nonSystem(a), nonSystem(b)
	usedA, usedB := make([]bool, len(before)), make([]bool, len(after))
	var d Delta
	pass := func(key func(e *Element) string, changed bool) {
		index := map[string][]int{}
		for j := range after {
			if !usedB[j] {
				k := key(&after[j])
				if k != "" {
					index[k] = append(index[k], j)
				}
			}
		}
		for i := range before {
			if usedA[i] {
				continue
			}
			k := key(&before[i])
			js := index[k]
			if k == "" || len(js) == 0 {
				continue
			}
			j := js[0]
			index[k] = js[1:]
			usedA[i], usedB[j] = true, true
			if changed {
				if f := changedFields(&before[i], &after[j]); len(f) > 0 {
					d.Changed = append(d.Changed, Change{Before: before[i], After: after[j], Fields: f})
				}
			}
		}
	}
	pass(func(e *Element) string { return exactKey(e) }, false)
	pass(func(e *Element) string { return e.Type + "\x00" + e.ResourceID + "\x00" + maskVolatile(e.Text) }, true)
	pass(func(e *Element) string {
		if e.ResourceID == "" {
			return ""
		}
		return e.Type + "\x00" + e.ResourceID
	}, true)
	for i := range before {
		if !usedA[i] {
			d.Disappeared = append(d.Disappeared, before[i])
		}
	}
	for j := range after {
		if !usedB[j] {
			d.Appeared = append(d.Appeared, after[j])
		}
	}
	return d
}

func nonSystem(s *Scene) []Element {
	if s == nil {
		return nil
	}
	out := make([]Element, 0, len(s.Elements))
	for _, e := range s.Elements {
		if !e.System && e.Part == "" { // a part changes with its row
			out = append(out, e)
		}
	}
	return out
}

func exactKey(e *Element) string {
	var b strings.Builder
	b.WriteString(e.Type)
	b.WriteByte(0)
	b.WriteString(e.ResourceID)
	b.WriteByte(0)
	b.WriteString(maskVolatile(e.Text))
	b.WriteByte(0)
	b.WriteString(maskVolatile(e.Desc))
	b.WriteByte(0)
	b.WriteString(strconv.Itoa(e.Bounds.X0) + "," + strconv.Itoa(e.Bounds.Y0) + "," + strconv.Itoa(e.Bounds.X1) + "," + strconv.Itoa(e.Bounds.Y1))
	b.WriteByte(0)
	b.WriteString(e.Note)
	f := e.Flags
	for _, on := range [...]bool{f.Checked, f.Selected, f.Disabled, f.Focused, f.Editable} {
		if on {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	return b.String()
}

func changedFields(a, b *Element) []string {
	var f []string
	add := func(diff bool, name string) {
		if diff {
			f = append(f, name)
		}
	}
	add(maskVolatile(a.Text) != maskVolatile(b.Text), "text")
	add(maskVolatile(a.Desc) != maskVolatile(b.Desc), "desc")
	add(a.Bounds != b.Bounds, "bounds")
	add(a.Flags.Checked != b.Flags.Checked, "checked")
	add(a.Flags.Selected != b.Flags.Selected, "selected")
	add(a.Flags.Disabled != b.Flags.Disabled, "disabled")
	add(a.Flags.Focused != b.Flags.Focused, "focused")
	add(a.Note != b.Note, "note")
	return f
}
