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

// elementType names what an element is for a model, in the vocabulary of
// Types, whichever platform's class it has. Class names decide first,
// flags next. inList is set for the items of a list.
func elementType(n *Node, f Flags, inList bool) string {
	s := shortClass(n.Class)
	id := strings.ToLower(n.ResourceID)
	switch {
	case f.Editable || strings.HasSuffix(s, "EditText") || strings.HasSuffix(s, "AutoCompleteTextView") ||
		s == "TextField" || s == "SecureTextField" || s == "SearchField" || s == "ComboBox":
		return TypeInput
	case strings.Contains(s, "Switch") || s == "ToggleButton" || s == "Toggle":
		return TypeSwitch
	case strings.Contains(s, "RadioButton"):
		return TypeRadio
	case strings.Contains(s, "CheckBox") || s == "CheckedTextView" && f.Checkable:
		return TypeCheckbox
	case strings.Contains(s, "WebView") || s == "WebView":
		return TypeWeb
	case strings.Contains(s, "Tab") && s != "Table" && s != "TableRow" && s != "TableColumn" && !strings.Contains(s, "TabHost") ||
		strings.Contains(s, "BottomNavigationItem") || strings.Contains(s, "NavigationBarItem"):
		return TypeTab
	case strings.Contains(s, "SeekBar") || s == "Slider" || s == "RatingBar" || s == "Stepper":
		return TypeSlider
	case strings.Contains(s, "ProgressBar") || s == "ProgressIndicator" || s == "ActivityIndicator":
		return TypeProgress
	case strings.Contains(s, "Spinner") || s == "PopUpButton" || s == "PickerWheel" || s == "Picker":
		return TypeDropdown
	case s == "Link":
		return TypeLink
	case s == "Cell" || s == "TableRow" || s == "OutlineRow" || s == "MenuItem" || s == "MenuBarItem":
		return TypeItem
	case strings.Contains(s, "Button") || s == "Chip" || s == "Key":
		return TypeButton
	case strings.Contains(s, "Image") || s == "Icon":
		if f.Clickable {
			return TypeButton
		}
		return TypeImage
	case f.Checkable:
		return TypeCheckbox
	case inList && (f.Clickable || f.LongClickable):
		return TypeItem
	case strings.Contains(id, "tab") && f.Clickable && !strings.Contains(id, "table"):
		return TypeTab
	case f.Clickable || f.LongClickable:
		return TypeButton
	case strings.Contains(s, "Text") || s == "StaticText" || n.Text != "":
		return TypeText
	case f.Scrollable:
		return TypeList
	case n.Desc != "":
		return TypeImage
	}
	return TypeContainer
}
