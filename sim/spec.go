// Package sim is Apex's simulated phone: apps described in YAML, run by a
// small interpreter, shown as a uiautomator-style UI tree (or, on an
// iPhone, an XCUITest tree in points) and as real PNG screenshots drawn
// from the same layout. The adbd subpackage serves a Phone as an Android
// device over TCP; the wda subpackage serves an iPhone as WebDriverAgent
// over HTTP.
package sim

import "time"

// AppSpec describes one app. It is parsed from YAML by ParseApp and never
// changed afterwards, so one spec may back many phones.
type AppSpec struct {
	Package  string `yaml:"package"`  // com.apex.shop
	Label    string `yaml:"label"`    // Shop
	Version  string `yaml:"version"`  // 1.4.2
	Activity string `yaml:"activity"` // launcher activity, .MainActivity by default
	Icon     Icon   `yaml:"icon"`
	Theme    Theme  `yaml:"theme"`
	// Hidden apps have no launcher icon (the launcher itself).
	Hidden bool `yaml:"hidden"`
	System bool `yaml:"system"`
	// Aliases are other package names that resolve to this app (an
	// earlier name that scripts still use).
	Aliases []string `yaml:"aliases"`
	// Links makes the app open VIEW intents (`am start -a
	// android.intent.action.VIEW -d URI`) with these URI schemes.
	Links *Links `yaml:"links"`
	// State survives force-stop (like an app's database); Session is reset
	// on every cold start (like fields on screen).
	State   map[string]any `yaml:"state"`
	Session map[string]any `yaml:"session"`
	// Data is read-only: catalogues, settings lists.
	Data    map[string]any `yaml:"data"`
	Start   string         `yaml:"start"` // first screen id; the first screen by default
	Screens []*Screen      `yaml:"screens"`
	Dialogs []*Dialog      `yaml:"dialogs"`
	// Strings translate the app's texts: language ("de") to English text
	// to its translation. The phone shows them when its locale
	// (persist.sys.locale) has that language.
	Strings map[string]map[string]string `yaml:"strings"`

	File string `yaml:"-"` // where the spec was read from
	Line int    `yaml:"-"`
}

// Links are the URIs an app opens: a VIEW intent whose scheme is in
// Schemes cold-starts the app at its start screen with the URI in the
// session variable Bind.
type Links struct {
	Schemes []string `yaml:"schemes"`
	Bind    string   `yaml:"bind"`
}

// Icon is the launcher icon: a coloured disc with a glyph.
type Icon struct {
	Color string `yaml:"color"` // #RRGGBB
	Glyph string `yaml:"glyph"` // one or two characters
}

// Theme colours the app bar and primary buttons.
type Theme struct {
	Primary string `yaml:"primary"`
	Dark    string `yaml:"dark"` // condition: draw light text on dark surfaces
}

// Screen is one page of an app (an Activity or a fragment on Android).
type Screen struct {
	ID       string     `yaml:"id"`
	Title    string     `yaml:"title"`    // template
	Activity string     `yaml:"activity"` // .ProductActivity; the app's by default
	Up       bool       `yaml:"up"`       // show a navigate-up arrow in the app bar
	AppBar   *bool      `yaml:"appbar"`   // false hides the app bar
	Actions  []*Element `yaml:"actions"`  // app bar icons at the right
	Elements []*Element `yaml:"elements"`
	OnEnter  []*Action  `yaml:"on_enter"`
	Popup    *Popup     `yaml:"popup"`
	Line     int        `yaml:"-"`
}

// Popup shows a dialog on entering a screen with a seeded probability.
type Popup struct {
	Dialog string   `yaml:"dialog"`
	Chance float64  `yaml:"chance"` // 0..1
	Delay  Duration `yaml:"delay"`
	Once   bool     `yaml:"once"` // at most once per app session
	Line   int      `yaml:"-"`
}

// Dialog is a modal window above a screen.
type Dialog struct {
	ID       string     `yaml:"id"`
	Title    string     `yaml:"title"`
	Text     string     `yaml:"text"`
	Elements []*Element `yaml:"elements"`
	Buttons  []*Element `yaml:"buttons"`
	Cancel   bool       `yaml:"cancelable"` // BACK and taps outside dismiss it
	Line     int        `yaml:"-"`
}

// Element kinds.
const (
	KindText     = "text"
	KindButton   = "button"
	KindIcon     = "icon" // an icon-only button: a content description, no text
	KindImage    = "image"
	KindField    = "field"
	KindCheckbox = "checkbox"
	KindSwitch   = "switch"
	KindRadio    = "radio"
	KindTabs     = "tabs"
	KindList     = "list"
	KindRow      = "row"
	KindCanvas   = "canvas" // text only in pixels: no tree nodes inside
	KindAppGrid  = "appgrid"
	KindSpacer   = "spacer"
)

var elementKinds = []string{KindText, KindButton, KindIcon, KindImage, KindField, KindCheckbox,
	KindSwitch, KindRadio, KindTabs, KindList, KindRow, KindCanvas, KindAppGrid, KindSpacer}

// Element is one widget. Which fields apply depends on Type; the JSON
// Schema in docs/sim-app.schema.json spells it out.
type Element struct {
	Type     string `yaml:"type"`
	ID       string `yaml:"id"` // resource id without the package: "search"
	Text     string `yaml:"text"`
	Desc     string `yaml:"desc"` // content description
	Hint     string `yaml:"hint"`
	Password bool   `yaml:"password"`
	// Bind names the state variable a field's text or a toggle's value
	// lives in; a radio sets Bind to Value.
	Bind    string   `yaml:"bind"`
	Value   any      `yaml:"value"`
	Visible string   `yaml:"visible"` // condition
	Enabled string   `yaml:"enabled"` // condition
	Delay   Duration `yaml:"delay"`   // appears this long after the screen opens
	Style   string   `yaml:"style"`   // title, subtitle, caption, price, error, primary, outline
	Color   string   `yaml:"color"`
	Height  int      `yaml:"height"` // dp
	Weight  float64  `yaml:"weight"` // share of a row's width

	Items string    `yaml:"items"` // list: expression giving the items
	Item  *ListItem `yaml:"item"`
	Empty string    `yaml:"empty"` // list: text when there are no items

	Tabs     []*Tab     `yaml:"tabs"`
	Children []*Element `yaml:"children"` // row
	Lines    []string   `yaml:"lines"`    // canvas

	OnTap       []*Action `yaml:"on_tap"`
	OnLongPress []*Action `yaml:"on_long_press"`
	OnChange    []*Action `yaml:"on_change"`
	OnSubmit    []*Action `yaml:"on_submit"`
	Line        int       `yaml:"-"`
}

// ListItem is the row template of a list; item and index name the current
// item in its templates and actions.
type ListItem struct {
	ID          string     `yaml:"id"`
	Text        string     `yaml:"text"`
	Detail      string     `yaml:"detail"`
	Icon        string     `yaml:"icon"` // a glyph drawn in a disc at the left
	Desc        string     `yaml:"desc"`
	Height      int        `yaml:"height"`
	Trailing    []*Element `yaml:"trailing"`
	OnTap       []*Action  `yaml:"on_tap"`
	OnLongPress []*Action  `yaml:"on_long_press"`
	Line        int        `yaml:"-"`
}

// Tab is one entry of a tab bar.
type Tab struct {
	Label    string    `yaml:"label"`
	ID       string    `yaml:"id"`
	Screen   string    `yaml:"screen"`   // switch to this screen (replacing, not pushing)
	Selected string    `yaml:"selected"` // condition; by default the current screen is Screen
	OnTap    []*Action `yaml:"on_tap"`
	Line     int       `yaml:"-"`
}

// Action is one step of a handler. Exactly one verb is set; By, Min, Max,
// Then and Else qualify it.
type Action struct {
	Navigate  string         `yaml:"navigate"` // push a screen
	Replace   string         `yaml:"replace"`  // switch screen without growing the back stack
	Root      string         `yaml:"root"`     // clear the back stack down to this screen
	Back      bool           `yaml:"back"`
	Home      bool           `yaml:"home"`
	Set       map[string]any `yaml:"set"` // var (or item.field) -> value template
	Increment string         `yaml:"increment"`
	By        *float64       `yaml:"by"`
	Min       *float64       `yaml:"min"`
	Max       *float64       `yaml:"max"`
	Append    *Append        `yaml:"append"`
	Remove    string         `yaml:"remove"` // list var: removes the current item, or those matching Where
	Where     string         `yaml:"where"`  // condition on item for remove
	Clear     string         `yaml:"clear"`  // empties a list or text var
	Dialog    string         `yaml:"dialog"`
	Dismiss   bool           `yaml:"dismiss"`
	Toast     string         `yaml:"toast"`
	Crash     string         `yaml:"crash"` // exception message; the app dies
	Launch    string         `yaml:"launch"`
	Focus     string         `yaml:"focus"` // element id
	Log       string         `yaml:"log"`
	If        string         `yaml:"if"`
	Then      []*Action      `yaml:"then"`
	Else      []*Action      `yaml:"else"`
	Line      int            `yaml:"-"`
}

// Append adds Value to the list To. With Key set, an item whose Key field
// matches instead gets its Count field incremented.
type Append struct {
	To    string `yaml:"to"`
	Value any    `yaml:"value"`
	Key   string `yaml:"key"`
	Count string `yaml:"count"`
}

// Duration is a YAML duration: "1.5s", "800ms", or a number of milliseconds.
type Duration time.Duration
