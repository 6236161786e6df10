package scene

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
)

// fillUIAutomator maps the attributes of a uiautomator dump element
// (<node …>) or of an Appium UiAutomator2 element (named after its class)
// onto n. Grouping elements (<hierarchy>, <window>) carry no bounds.
func fillUIAutomator(n *Node, tag string, attrs []xml.Attr) error {
	if tag != "node" {
		n.Class = tag // Appium names elements after their class; a class attribute overrides
	}
	for _, a := range attrs {
		if a.Name.Space != "" {
			keep(n, a) // a prefixed attribute is none of ours
			continue
		}
		v := a.Value
		switch a.Name.Local {
		case "class":
			n.Class = v
		case "text":
			n.Text = v
		case "content-desc":
			n.Desc = v
		case "resource-id":
			n.ResourceID = v
		case "package":
			n.Package = v
		case "bounds":
			r, err := parseBounds(v)
			if err != nil {
				return err
			}
			n.Bounds, n.hasBounds = r, true
		case "clickable":
			n.Clickable = v == "true"
		case "long-clickable":
			n.LongClickable = v == "true"
		case "checkable":
			n.Checkable = v == "true"
		case "checked":
			n.Checked = v == "true"
		case "scrollable":
			n.Scrollable = v == "true"
		case "focusable":
			n.Focusable = v == "true"
		case "focused":
			n.Focused = v == "true"
		case "enabled":
			n.Enabled = v != "false"
		case "selected":
			n.Selected = v == "true"
		case "password":
			n.Password = v == "true"
		case "editable":
			n.Editable = v == "true"
		case "displayed", "visible-to-user":
			if v == "false" {
				n.Visible = false
			}
			keep(n, a)
		case "index":
			// Position among siblings: the tree already says it.
		default:
			keep(n, a)
		}
	}
	if !n.Editable && isEditClass(n.Class) {
		n.Editable = true
	}
	return nil
}

func keep(n *Node, a xml.Attr) {
	if n.Attrs == nil {
		n.Attrs = make(map[string]string, 4)
	}
	n.Attrs[qname(a.Name)] = a.Value
}

// parseBounds reads "[x0,y0][x1,y1]".
func parseBounds(s string) (Rect, error) {
	var v [4]int
	rest := s
	for i := 0; i < 4; i++ {
		open := byte(',')
		if i%2 == 0 {
			open = '['
		}
		if rest == "" || rest[0] != open {
			return Rect{}, fmt.Errorf("bounds %q: expected [x0,y0][x1,y1]", s)
		}
		rest = rest[1:]
		j := 0
		for j < len(rest) && (rest[j] == '-' || rest[j] >= '0' && rest[j] <= '9') {
			j++
		}
		n, err := strconv.Atoi(rest[:j])
		if err != nil {
			return Rect{}, fmt.Errorf("bounds %q: expected [x0,y0][x1,y1] with integers", s)
		}
		if n < -1e8 || n > 1e8 {
			return Rect{}, fmt.Errorf("bounds %q: coordinate %d out of range", s, n)
		}
		v[i] = n
		rest = rest[j:]
		if i%2 == 1 {
			if rest == "" || rest[0] != ']' {
				return Rect{}, fmt.Errorf("bounds %q: expected [x0,y0][x1,y1]", s)
			}
			rest = rest[1:]
		}
	}
	if rest != "" {
		return Rect{}, fmt.Errorf("bounds %q: unexpected %q after [x0,y0][x1,y1]", s, rest)
	}
	return Rect{v[0], v[1], v[2], v[3]}, nil
}

func atoiAttr(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// isEditClass reports whether an Android class is a text input.
func isEditClass(class string) bool {
	short := class[strings.LastIndexByte(class, '.')+1:]
	return strings.HasSuffix(short, "EditText") || strings.HasSuffix(short, "AutoCompleteTextView")
}
