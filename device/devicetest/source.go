package devicetest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/apexagent/apex/device"
)

// The suite reads sources itself, with only what it checks, so that it
// stays in the device layer: a source must be well-formed XML in the
// dialect its Format names, and its elements carry the ids, texts, focus
// and bounds of that dialect.

// node is one element of a UI source.
type node struct {
	ID       string // resource-id (uiautomator); identifier, or a name that is neither label nor value (XCUITest)
	Text     string
	Focused  bool
	Bounds   rect
	sized    bool // the element states its bounds
	Children []*node
}

type rect struct{ X0, Y0, X1, Y1 int }

func (r rect) center() device.Point { return device.Point{X: (r.X0 + r.X1) / 2, Y: (r.Y0 + r.Y1) / 2} }

// sourceTree is a parsed UI source.
type sourceTree struct {
	Format        device.SourceFormat
	Root          *node
	Width, Height int // uiautomator: the screen the source declares, in pixels
}

// parseSource reads src in the dialect its Format names.
func parseSource(src device.Source) (*sourceTree, error) {
	var fill func(n *node, tag string, attrs map[string]string) error
	var rootOK func(tag string) bool
	switch src.Format {
	case device.FormatUIAutomator:
		fill, rootOK = fillUIAutomator, func(tag string) bool {
			return tag == "hierarchy" || tag == "node" || strings.Contains(tag, ".")
		}
	case device.FormatXCUITest:
		fill, rootOK = fillXCUITest, func(tag string) bool {
			return tag == "AppiumAUT" || strings.HasPrefix(tag, "XCUIElementType")
		}
	default:
		return nil, fmt.Errorf("source format %q: want %q or %q", src.Format, device.FormatUIAutomator, device.FormatXCUITest)
	}
	d := xml.NewDecoder(bytes.NewReader(src.Data))
	var stack []*node
	t := &sourceTree{Format: src.Format}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s source is not well-formed XML: %w", src.Format, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 {
				if t.Root != nil {
					return nil, fmt.Errorf("%s source has a second root element <%s>", src.Format, tok.Name.Local)
				}
				if !rootOK(tok.Name.Local) {
					return nil, fmt.Errorf("%s source has root element <%s>", src.Format, tok.Name.Local)
				}
			}
			attrs := make(map[string]string, len(tok.Attr))
			for _, a := range tok.Attr {
				if a.Name.Space == "" {
					attrs[a.Name.Local] = a.Value
				}
			}
			n := &node{}
			if err := fill(n, tok.Name.Local, attrs); err != nil {
				return nil, fmt.Errorf("%s source: element <%s>: %w", src.Format, tok.Name.Local, err)
			}
			if len(stack) == 0 {
				t.Root = n
				if src.Format == device.FormatUIAutomator {
					t.Width, _ = strconv.Atoi(attrs["width"]) // Appium's <hierarchy width height>
					t.Height, _ = strconv.Atoi(attrs["height"])
				}
			} else {
				p := stack[len(stack)-1]
				p.Children = append(p.Children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	if t.Root == nil {
		return nil, fmt.Errorf("%s source has no element in %d bytes", src.Format, len(src.Data))
	}
	if src.Format == device.FormatUIAutomator {
		t.Width, t.Height = extent(t.Root, t.Width, t.Height)
	}
	return t, nil
}

// extent grows w, h to cover the outermost elements that state bounds:
// the windows of a uiautomator dump.
func extent(n *node, w, h int) (int, int) {
	if n.sized && n.Bounds.X1 > n.Bounds.X0 && n.Bounds.Y1 > n.Bounds.Y0 {
		return max(w, n.Bounds.X1), max(h, n.Bounds.Y1)
	}
	for _, c := range n.Children {
		w, h = extent(c, w, h)
	}
	return w, h
}

func fillUIAutomator(n *node, _ string, a map[string]string) error {
	n.ID, n.Text, n.Focused = a["resource-id"], a["text"], a["focused"] == "true"
	if b, ok := a["bounds"]; ok {
		var r rect
		if _, err := fmt.Sscanf(b, "[%d,%d][%d,%d]", &r.X0, &r.Y0, &r.X1, &r.Y1); err != nil {
			return fmt.Errorf("bounds %q: want [x0,y0][x1,y1]", b)
		}
		n.Bounds, n.sized = r, true
	}
	return nil
}

// xcuiEditable are the XCUITest element types whose value is what was typed.
var xcuiEditable = map[string]bool{"TextField": true, "SecureTextField": true, "SearchField": true, "TextView": true, "ComboBox": true}

func fillXCUITest(n *node, tag string, a map[string]string) error {
	typ := a["type"]
	if typ == "" {
		typ = tag
	}
	label, value := a["label"], a["value"]
	if label == "" {
		label = a["title"]
	}
	switch {
	case xcuiEditable[strings.TrimPrefix(typ, "XCUIElementType")]:
		if value != a["placeholderValue"] {
			n.Text = value
		}
	case label != "":
		n.Text = label
	default:
		n.Text = value
	}
	n.ID = a["identifier"]
	if name := a["name"]; n.ID == "" && name != label && name != value {
		n.ID = name
	}
	n.Focused = a["focused"] == "true" || a["hasFocus"] == "true"
	var geo [4]float64
	for i, k := range []string{"x", "y", "width", "height"} {
		v, ok := a[k]
		if !ok {
			return nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%s=%q: want a number", k, v)
		}
		geo[i] = f
	}
	x0, y0 := int(math.Round(geo[0])), int(math.Round(geo[1]))
	n.Bounds, n.sized = rect{x0, y0, x0 + int(math.Round(geo[2])), y0 + int(math.Round(geo[3]))}, true
	return nil
}
