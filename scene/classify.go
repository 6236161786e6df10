package scene

import "strings"

// shortClass is the class name without its package or the XCUIElementType
// prefix: "Button" for android.widget.Button and XCUIElementTypeButton.
func shortClass(class string) string {
	if s, ok := strings.CutPrefix(class, "XCUIElementType"); ok {
		return s
	}
	return class[strings.LastIndexByte(class, '.')+1:]
}

// isListClass reports whether a class is a container of repeated items.
func isListClass(class string) bool {
	s := shortClass(class)
	switch s {
	case "Table", "CollectionView", "Outline", "ScrollView":
		return true
	}
	for _, k := range []string{"RecyclerView", "ListView", "GridView", "ScrollView", "ViewPager", "Gallery"} {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// elementType names what an element is for a model: button, text, input,
// image, checkbox, switch, radio, list, tab, web, item, slider, progress,
// dropdown, link, key, menu, view. Class names decide first, flags next.
// inList is set for the items of a list.
func elementType(n *Node, f Flags, inList bool) string {
	s := shortClass(n.Class)
	id := strings.ToLower(n.ResourceID)
	switch {
	case f.Editable || strings.HasSuffix(s, "EditText") || strings.HasSuffix(s, "AutoCompleteTextView") ||
		s == "TextField" || s == "SecureTextField" || s == "SearchField" || s == "ComboBox":
		return "input"
	case strings.Contains(s, "Switch") || s == "ToggleButton" || s == "Toggle":
		return "switch"
	case strings.Contains(s, "RadioButton"):
		return "radio"
	case strings.Contains(s, "CheckBox") || s == "CheckedTextView" && f.Checkable:
		return "checkbox"
	case strings.Contains(s, "WebView") || s == "WebView":
		return "web"
	case strings.Contains(s, "Tab") && s != "Table" && s != "TableRow" && s != "TableColumn" && !strings.Contains(s, "TabHost") ||
		strings.Contains(s, "BottomNavigationItem") || strings.Contains(s, "NavigationBarItem"):
		return "tab"
	case strings.Contains(s, "SeekBar") || s == "Slider" || s == "RatingBar" || s == "Stepper":
		return "slider"
	case strings.Contains(s, "ProgressBar") || s == "ProgressIndicator" || s == "ActivityIndicator":
		return "progress"
	case strings.Contains(s, "Spinner") || s == "PopUpButton" || s == "PickerWheel" || s == "Picker":
		return "dropdown"
	case s == "Link":
		return "link"
	case s == "Key":
		return "key"
	case s == "MenuItem" || s == "MenuBarItem":
		return "menu"
	case s == "Cell" || s == "TableRow" || s == "OutlineRow":
		return "item"
	case strings.Contains(s, "Button") || s == "Chip":
		return "button"
	case strings.Contains(s, "Image") || s == "Icon":
		if f.Clickable {
			return "button"
		}
		return "image"
	case f.Checkable:
		return "checkbox"
	case inList && (f.Clickable || f.LongClickable):
		return "item"
	case strings.Contains(id, "tab") && f.Clickable && !strings.Contains(id, "table"):
		return "tab"
	case f.Clickable || f.LongClickable:
		return "button"
	case strings.Contains(s, "Text") || s == "StaticText" || n.Text != "":
		return "text"
	case f.Scrollable:
		return "list"
	case n.Desc != "":
		return "image"
	}
	return "view"
}
