package scene

import (
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// fillXCUITest maps the attributes of an XCUITest / WebDriverAgent element
// (<XCUIElementTypeButton type= name= label= value= x= y= width= height=
// enabled= visible=…>) onto n. Appium Mac2 sources use the same tags with
// identifier= and title= instead of name= and no visible=.
//
// Coordinates are kept as the source gives them: points on iOS, not
// pixels. WebDriverAgent taps in points too, so an element's centre can
// be tapped as is; only a screenshot (in pixels) needs the scale factor.
//
// XCUITest states no clickable/scrollable flags; they are inferred from the
// element type (see xcuiTraits).
func fillXCUITest(n *Node, tag string, attrs []xml.Attr) error {
	if strings.HasPrefix(tag, "XCUIElementType") {
		n.Class = tag
	} else {
		n.Class = tag // AppiumAUT: a grouping element without geometry
	}
	var name, label, value, title, placeholder string
	var geo [4]float64
	var haveGeo [4]bool
	for _, a := range attrs {
		if a.Name.Space != "" {
			keep(n, a) // a prefixed attribute is none of ours
			continue
		}
		v := a.Value
		switch a.Name.Local {
		case "type":
			if v != "" {
				n.Class = v
			}
		case "name":
			name = v
		case "identifier":
			n.ResourceID = v
		case "label":
			label = v
		case "value":
			value = v
		case "title":
			title = v
		case "placeholderValue":
			placeholder = v
			keep(n, a)
		case "x", "y", "width", "height":
			i := strings.Index("xywh", a.Name.Local[:1])
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e7 {
				return fmt.Errorf("%s=%q: expected a number", a.Name.Local, v)
			}
			geo[i], haveGeo[i] = f, true
		case "enabled":
			n.Enabled = v != "false"
		case "visible":
			n.Visible = v != "false"
		case "selected":
			n.Selected = v == "true"
		case "focused", "hasFocus":
			n.Focused = v == "true"
			keep(n, a)
		case "index", "elementType":
			// Position among siblings and the numeric twin of the tag.
		default:
			keep(n, a)
		}
	}
	if haveGeo[0] && haveGeo[1] && haveGeo[2] && haveGeo[3] {
		x0, y0 := int(math.Round(geo[0])), int(math.Round(geo[1]))
		n.Bounds = Rect{x0, y0, x0 + int(math.Round(geo[2])), y0 + int(math.Round(geo[3]))}
		n.hasBounds = true
	}
	kind := strings.TrimPrefix(n.Class, "XCUIElementType")
	tr := xcuiTraits[kind]
	n.Clickable, n.Scrollable, n.Editable, n.Checkable = tr.click, tr.scroll, tr.edit, tr.check
	n.Focusable = tr.edit
	n.Password = kind == "SecureTextField"
	if label == "" {
		label = title // Mac2
	}
	switch {
	case tr.edit:
		// The value is what was typed; the label names the field. An
		// empty field reports its placeholder as value.
		if value != placeholder {
			n.Text = value
		}
		n.Desc = label
		if n.Desc == "" {
			n.Desc = placeholder
		}
	case tr.check:
		n.Checked = value == "1" || value == "true"
		n.Text = label
	default:
		n.Text = label
		if n.Text == "" {
			n.Text = value
		} else if value != "" && value != label {
			n.Desc = value // e.g. a cell "Wi-Fi" whose value is the network name
		}
	}
	if n.ResourceID == "" && name != "" && name != label && name != value {
		n.ResourceID = name // WebDriverAgent's name is the accessibility identifier when one is set
	}
	if n.Text == "" && n.Desc == "" && n.ResourceID == "" && name != "" {
		n.Text = name
	}
	return nil
}

type xcuiTrait struct{ click, scroll, edit, check bool }

// xcuiTraits infers Android-style flags from XCUIElementType names.
var xcuiTraits = map[string]xcuiTrait{
	"Button": {click: true}, "Link": {click: true}, "Cell": {click: true}, "Key": {click: true},
	"MenuItem": {click: true}, "MenuBarItem": {click: true}, "Tab": {click: true}, "Icon": {click: true},
	"PopUpButton": {click: true}, "MenuButton": {click: true}, "DisclosureTriangle": {click: true},
	"IncrementArrow": {click: true}, "DecrementArrow": {click: true}, "SegmentedControl": {},
	"Slider": {click: true}, "PickerWheel": {click: true, scroll: true}, "Stepper": {click: true},
	"ColorWell": {click: true}, "StatusItem": {click: true}, "TableRow": {}, "OutlineRow": {},
	"Switch": {click: true, check: true}, "Toggle": {click: true, check: true},
	"CheckBox": {click: true, check: true}, "RadioButton": {click: true, check: true},
	"TextField": {click: true, edit: true}, "SecureTextField": {click: true, edit: true},
	"SearchField": {click: true, edit: true}, "TextView": {edit: true}, "ComboBox": {click: true, edit: true},
	"ScrollView": {scroll: true}, "Table": {scroll: true}, "CollectionView": {scroll: true},
	"Outline": {scroll: true}, "Browser": {scroll: true},
}
