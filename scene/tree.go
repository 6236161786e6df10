package scene

// Formats Parse recognises.
const (
	FormatUIAutomator = "uiautomator" // Android uiautomator dump or Appium UiAutomator2 page source
	FormatXCUITest    = "xcuitest"    // iOS XCUITest / WebDriverAgent page source (also Appium Mac2)
)

// Tree is a parsed UI source: one node tree whatever the platform.
type Tree struct {
	Format string // FormatUIAutomator or FormatXCUITest
	// Root is the document root (<hierarchy>, <AppiumAUT> or the
	// application element). Its children are the windows. When a source
	// holds several top-level elements, Root is a synthetic "hierarchy"
	// node holding them all.
	Root *Node
	// Width and Height are the screen size in the source's own units:
	// device pixels for Android; points for iOS (WebDriverAgent reports
	// points, so a 1179x2556 iPhone is 393x852 here). Nothing is rescaled:
	// a tap at an element's centre must be sent in the same units, which
	// is what WebDriverAgent expects.
	Width, Height int
	Nodes         int // elements in the source, the root included
	Bytes         int // size of the source
}

// Node is one element of a UI source. Flags that the source does not
// state are inferred: XCUITest sources carry no clickable/scrollable
// attributes, so the parser derives them from the element type (a Button
// is clickable, a Table is scrollable, a TextField is editable).
type Node struct {
	Class      string // android.widget.Button, XCUIElementTypeButton, …
	Text       string
	Desc       string // content-desc (Android); label or value (iOS) when it adds to Text
	ResourceID string // resource-id (Android); accessibility identifier (iOS)
	Package    string
	Bounds     Rect

	Clickable, LongClickable, Checkable, Checked, Scrollable bool
	Focusable, Focused, Enabled, Selected, Password, Visible bool
	// Editable is set for text inputs (EditText and friends, an
	// editable="true" attribute, XCUIElementTypeTextField…).
	Editable bool

	// Attrs keeps the attributes the parser does not map to a field, so
	// nothing in the source is lost (Appium's displayed, drawing-order, NAF…).
	Attrs    map[string]string
	Children []*Node

	// Offset is the byte offset of the element's start tag in the source.
	Offset int
	// hasBounds is false for grouping elements (hierarchy, window,
	// AppiumAUT) that carry no geometry: they do not clip their children.
	hasBounds bool
	// innerText is set when a descendant carries text or a description.
	innerText bool
}

// HasBounds reports whether the source gave the node a geometry. Grouping
// elements such as <hierarchy> have none and do not clip their children.
func (n *Node) HasBounds() bool { return n.hasBounds }

// Walk calls fn for n and every descendant, depth first in document
// order, stopping early when fn returns false for a node (its subtree is
// skipped).
func (n *Node) Walk(fn func(*Node) bool) {
	if !fn(n) {
		return
	}
	for _, c := range n.Children {
		c.Walk(fn)
	}
}
