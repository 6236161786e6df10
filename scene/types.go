package scene

// The element types: one closed vocabulary for both platforms. Android's
// android.widget.* (and app) classes and iOS's XCUIElementType* classes
// map onto it in elementType, so a plan learned on one platform reads the
// same on the other. Text, the form a model reads, names only these; the
// platform class stays in Element.Class, in the Scene's JSON, for
// debugging.
const (
	TypeButton    = "button"    // something to tap: Button, ImageButton, a clickable row or icon, a keyboard key
	TypeInput     = "input"     // a text field: EditText, TextField, SecureTextField, SearchField
	TypeText      = "text"      // read-only text: TextView, StaticText
	TypeImage     = "image"     // a picture or an icon that is not tapped
	TypeSwitch    = "switch"    // an on/off toggle: Switch, ToggleButton, XCUIElementTypeSwitch
	TypeCheckbox  = "checkbox"  // CheckBox, a checkable text or row
	TypeRadio     = "radio"     // RadioButton: one of a group
	TypeDropdown  = "dropdown"  // picks one of several values: Spinner, PopUpButton, Picker
	TypeTab       = "tab"       // a tab or bottom-navigation item
	TypeLink      = "link"      // a hyperlink: XCUIElementTypeLink
	TypeSlider    = "slider"    // SeekBar, RatingBar, Slider, Stepper
	TypeProgress  = "progress"  // ProgressBar, ProgressIndicator, ActivityIndicator
	TypeList      = "list"      // a scrolling container of items: RecyclerView, ListView, Table, CollectionView, ScrollView
	TypeItem      = "item"      // an entry of a list or menu: a row, Cell, MenuItem
	TypeWeb       = "web"       // web content: WebView
	TypeContainer = "container" // anything else whose class says nothing more
)

// Types lists the vocabulary, in the order docs name it. Every Element's
// Type is one of them.
var Types = []string{TypeButton, TypeInput, TypeText, TypeImage, TypeSwitch, TypeCheckbox, TypeRadio,
	TypeDropdown, TypeTab, TypeLink, TypeSlider, TypeProgress, TypeList, TypeItem, TypeWeb, TypeContainer}

// KnownType reports whether t is one of Types.
func KnownType(t string) bool {
	for _, k := range Types {
		if k == t {
			return true
		}
	}
	return false
}

// readOnly reports whether elements of type t show something rather than
// take input: Text flags them "clickable" when the source says so, and a
// disabled one is not a control.
func readOnly(t string) bool {
	switch t {
	case TypeText, TypeImage, TypeContainer, TypeList, TypeWeb, TypeProgress:
		return true
	}
	return false
}
