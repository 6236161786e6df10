// Package scene turns raw UI sources into a Scene: a short, pruned list of
// elements that fits a byte budget, with fingerprints and diffs. It is pure
// data: it never talks to a device.
package scene

// Rect is a rectangle in device pixels, [X0,Y0] inclusive to [X1,Y1] exclusive.
type Rect struct {
	X0 int `json:"x0"`
	Y0 int `json:"y0"`
	X1 int `json:"x1"`
	Y1 int `json:"y1"`
}

// Center is the point a tap on the rectangle aims at.
func (r Rect) Center() (x, y int) { return (r.X0 + r.X1) / 2, (r.Y0 + r.Y1) / 2 }

// Empty reports whether the rectangle has no area.
func (r Rect) Empty() bool { return r.X1 <= r.X0 || r.Y1 <= r.Y0 }

// Contains reports whether the point lies inside r.
func (r Rect) Contains(x, y int) bool { return x >= r.X0 && x < r.X1 && y >= r.Y0 && y < r.Y1 }

// Flags are the boolean states of an element.
type Flags struct {
	Clickable     bool `json:"clickable,omitempty"`
	LongClickable bool `json:"long_clickable,omitempty"`
	Checkable     bool `json:"checkable,omitempty"`
	Checked       bool `json:"checked,omitempty"`
	Editable      bool `json:"editable,omitempty"`
	Scrollable    bool `json:"scrollable,omitempty"`
	Selected      bool `json:"selected,omitempty"`
	Focused       bool `json:"focused,omitempty"`
	Disabled      bool `json:"disabled,omitempty"`
	Password      bool `json:"password,omitempty"`
}

// Interactive reports whether a person could act on the element.
func (f Flags) Interactive() bool {
	return f.Clickable || f.LongClickable || f.Checkable || f.Editable || f.Scrollable
}

// Element is one thing on screen a model or a locator can refer to.
type Element struct {
	ID         string  `json:"id"`   // e1, e2, … in reading order; valid until the screen changes
	Type       string  `json:"type"` // one of Types: button, input, text, image, switch, …
	Text       string  `json:"text,omitempty"`
	Desc       string  `json:"desc,omitempty"`
	ResourceID string  `json:"resource_id,omitempty"`
	Class      string  `json:"class,omitempty"` // the platform class, for debugging; Text never shows it
	Bounds     Rect    `json:"bounds"`
	Flags      Flags   `json:"flags"`
	Source     string  `json:"source"`               // "tree" or "ocr"
	Confidence float64 `json:"confidence,omitempty"` // 1 for tree elements; OCR's own score otherwise
	// Note summarises what pruning cut inside this element, e.g. "+12 items below".
	Note string `json:"note,omitempty"`
	// System marks status- and navigation-bar elements (clock, battery,
	// back/home): volatile, ignored by Fingerprint, dropped first.
	System bool `json:"system,omitempty"`
	// Part is set on a text with a resource id of its own that its row
	// absorbed ("e5" for the row e5; the part's id is then "e5.1"): its row's
	// text already says it, so Text leaves it out, but a locator by resource
	// id finds it and a check reads its own text.
	Part string `json:"part,omitempty"`
}

// Stats says how much pruning removed.
type Stats struct {
	NodesIn     int `json:"nodes_in"`
	ElementsOut int `json:"elements_out"`
	BytesIn     int `json:"bytes_in"`
	BytesOut    int `json:"bytes_out"`
}

// Scene is a pruned view of one screen.
type Scene struct {
	Width    int       `json:"width"`
	Height   int       `json:"height"`
	Package  string    `json:"package,omitempty"` // foreground app, when the source says
	Elements []Element `json:"elements"`
	// Empty is set when the source had nothing but system UI or no nodes at
	// all, so callers can fall back to OCR.
	Empty bool `json:"empty,omitempty"`
	// Keyboard is set when the source shows a soft keyboard: an input
	// method's window (Android dumps of all windows) or an
	// XCUIElementTypeKeyboard (iOS). Android's dump of the active window
	// alone does not show it; there the focused field says typing goes on.
	Keyboard bool `json:"keyboard,omitempty"`
	// Dropped summarises, in one line, what the budget cut ("" when nothing).
	Dropped string `json:"dropped,omitempty"`
	Stats   Stats  `json:"stats"`
	// Format is the source format ("uiautomator", "xcuitest"); coordinates
	// are pixels for the first, points for the second.
	Format string `json:"format,omitempty"`
	// Budget is the byte budget Text keeps to (0 = DefaultBudget).
	Budget int `json:"budget,omitempty"`
}

// Element returns the element with the given short id.
func (s *Scene) Element(id string) (Element, bool) {
	for _, e := range s.Elements {
		if e.ID == id {
			return e, true
		}
	}
	return Element{}, false
}
