package sim

import (
	"bytes"
	"image"
	"strconv"
	"strings"
)

// XCUIElement is one node of an iPhone's accessibility tree as
// WebDriverAgent reports it. Rect is in points.
type XCUIElement struct {
	Type        string // "XCUIElementTypeButton"
	Identifier  string // accessibility identifier: the spec's element id
	Label       string
	Value       string
	HasValue    bool // Value is set (an empty text field's value is its placeholder)
	Placeholder string
	Enabled     bool
	Visible     bool
	Accessible  bool
	Selected    bool
	Focused     bool
	Rect        image.Rectangle
	Children    []*XCUIElement
}

// Name is WebDriverAgent's name: the identifier, or else the label.
func (e *XCUIElement) Name() string {
	if e.Identifier != "" {
		return e.Identifier
	}
	return e.Label
}

// Walk visits e and its descendants depth first until fn returns false.
func (e *XCUIElement) Walk(fn func(*XCUIElement) bool) bool {
	if !fn(e) {
		return false
	}
	for _, c := range e.Children {
		if !c.Walk(fn) {
			return false
		}
	}
	return true
}

// XCUITree returns the screen as XCUITest sees it: the application (the
// foreground app, or SpringBoard for the home and lock screens and the
// app switcher), its
// window, an alert window and the keyboard. Coordinates are points.
func (p *Phone) XCUITree() *XCUIElement {
	p.mu.Lock()
	defer p.mu.Unlock()
	L := p.layout()
	scale := max(1, p.density/160)
	t := &xcuiBuilder{scale: scale, screen: image.Rect(0, 0, p.w, p.h)}
	full := image.Rect(0, 0, p.w/scale, p.h/scale)
	label := "SpringBoard"
	if a := p.apps[p.fg]; a != nil && p.fg != Launcher && !p.locked && p.awake && !p.inOverview {
		label = p.pkgs[p.fg].Label
	}
	app := &XCUIElement{Type: "XCUIElementTypeApplication", Label: label, Enabled: true, Visible: true, Rect: full}
	if L.off {
		// The screen is dark: SpringBoard answers with its invisible lock
		// screen window.
		app.Children = []*XCUIElement{{Type: "XCUIElementTypeWindow", Enabled: true, Rect: full}}
		return app
	}
	win := &XCUIElement{Type: "XCUIElementTypeWindow", Enabled: true, Visible: true, Rect: full}
	if L.app != nil {
		if e := t.node(L.app, t.screen); e != nil {
			win.Children = append(win.Children, e)
		}
	}
	if L.toast != nil {
		if e := t.node(L.toast, t.screen); e != nil {
			win.Children = append(win.Children, e)
		}
	}
	app.Children = append(app.Children, win)
	if L.dialog != nil {
		if e := t.node(L.dialog, t.screen); e != nil {
			app.Children = append(app.Children, &XCUIElement{Type: "XCUIElementTypeWindow", Enabled: true, Visible: true, Rect: full,
				Children: []*XCUIElement{{Type: "XCUIElementTypeOther", Enabled: true, Visible: true, Rect: full, Children: []*XCUIElement{e}}}})
		}
	}
	if L.keyboard != nil {
		app.Children = append(app.Children, &XCUIElement{Type: "XCUIElementTypeWindow", Enabled: true, Visible: true, Rect: full,
			Children: []*XCUIElement{t.keyboard(L.keyboard)}})
	}
	return app
}

type xcuiBuilder struct {
	scale  int
	screen image.Rectangle
}

func (t *xcuiBuilder) pt(r image.Rectangle) image.Rectangle {
	s := t.scale
	return image.Rect(r.Min.X/s, r.Min.Y/s, (r.Max.X+s-1)/s, (r.Max.Y+s-1)/s)
}

// node converts a view and its children; views outside clip are left out,
// as XCUITest leaves out cells scrolled away.
func (t *xcuiBuilder) node(v *view, clip image.Rectangle) *XCUIElement {
	if v.noNode || v.r.Intersect(clip).Empty() {
		return nil
	}
	if v.clip != nil {
		clip = clip.Intersect(*v.clip)
	}
	e := &XCUIElement{Type: xcuiType(v), Identifier: identifier(v), Enabled: !v.disabled, Visible: true,
		Selected: v.selected, Rect: t.pt(v.r.Intersect(t.screen))}
	text := v.text
	if v.hint {
		text = ""
	}
	switch e.Type {
	case "XCUIElementTypeStaticText":
		e.Label, e.Value, e.HasValue = text, text, true
	case "XCUIElementTypeTextField", "XCUIElementTypeSecureTextField":
		e.Label = v.desc
		e.Focused = v.focused
		if v.field != nil {
			e.Placeholder = render(v.field.el.Hint, v.field.scope)
		}
		e.Value, e.HasValue = text, true
		if text == "" {
			e.Value = e.Placeholder
		}
	case "XCUIElementTypeSwitch":
		// A switch with no text of its own is labelled by its
		// accessibility description, as UIKit labels it.
		e.Label = pick(text, v.desc)
		e.Value, e.HasValue = "0", true
		if v.checked {
			e.Value = "1"
		}
	case "XCUIElementTypeNavigationBar":
		for _, c := range v.children {
			if c.kind == "text" {
				e.Identifier = c.text
			}
		}
	case "XCUIElementTypeAlert":
		for _, c := range v.children {
			if c.kind == "text" {
				e.Identifier = c.text
				break
			}
		}
	case "XCUIElementTypeImage", "XCUIElementTypeIcon":
		e.Label = pick(v.desc, pick(text, first(v.lines)))
	default:
		e.Label = pick(text, v.desc)
		if v.checkable {
			e.Value, e.HasValue = "0", true
			if v.checked {
				e.Value = "1"
			}
		}
	}
	switch e.Type {
	case "XCUIElementTypeStaticText", "XCUIElementTypeButton", "XCUIElementTypeTextField", "XCUIElementTypeSecureTextField",
		"XCUIElementTypeSwitch", "XCUIElementTypeImage", "XCUIElementTypeIcon", "XCUIElementTypeKey":
		e.Accessible = true
	}
	for _, c := range v.children {
		if ce := t.node(c, clip); ce != nil {
			e.Children = append(e.Children, ce)
		}
	}
	return e
}

// xcuiType names the UIKit control a view stands for.
func xcuiType(v *view) string {
	switch v.kind {
	case "iosnav":
		return "XCUIElementTypeNavigationBar"
	case "iosback", "button", "icon", "radio", "tab", "card":
		return "XCUIElementTypeButton"
	case "text", "toast":
		return "XCUIElementTypeStaticText"
	case "image":
		return "XCUIElementTypeImage"
	case "field":
		if v.password {
			return "XCUIElementTypeSecureTextField"
		}
		return "XCUIElementTypeTextField"
	case "checkbox", "switch":
		return "XCUIElementTypeSwitch"
	case "tabs":
		if v.style == "bottom" {
			return "XCUIElementTypeTabBar"
		}
		return "XCUIElementTypeSegmentedControl"
	case "list":
		return "XCUIElementTypeTable"
	case "appgrid":
		return "XCUIElementTypeCollectionView"
	case "listrow":
		return "XCUIElementTypeCell"
	case "appicon":
		return "XCUIElementTypeIcon"
	case "canvas":
		return "XCUIElementTypeWebView"
	case "dialog":
		return "XCUIElementTypeAlert"
	}
	if v.scrollKey != "" {
		return "XCUIElementTypeScrollView"
	}
	return "XCUIElementTypeOther"
}

// identifier is the accessibility identifier: the element id of the spec
// (a resource id without its "package:id/" prefix). Framework ids
// (android:id/…) have no iOS counterpart.
func identifier(v *view) string {
	if v.resID == "" || strings.HasPrefix(v.resID, "android:") {
		return ""
	}
	if _, id, ok := strings.Cut(v.resID, ":id/"); ok {
		return id
	}
	return v.resID
}

// iosKeyNames are the accessibility names of an iOS keyboard's special
// keys, by the Android keyboard's labels.
var iosKeyNames = map[string]string{"▲": "shift", "←": "delete", "?123": "more", "space": "space", "return": "Return"}

func (t *xcuiBuilder) keyboard(k *keyboard) *XCUIElement {
	kb := &XCUIElement{Type: "XCUIElementTypeKeyboard", Enabled: true, Visible: true, Rect: t.pt(k.r)}
	for _, key := range k.keys {
		name := key.label
		if n, ok := iosKeyNames[name]; ok {
			name = n
		}
		kb.Children = append(kb.Children, &XCUIElement{Type: "XCUIElementTypeKey", Label: name, Enabled: true, Visible: true,
			Accessible: true, Rect: t.pt(key.r)})
	}
	return kb
}

// SourceXCUI returns the screen as WebDriverAgent's GET /source writes it.
func (p *Phone) SourceXCUI() []byte {
	var b bytes.Buffer
	b.Grow(16 << 10)
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	p.XCUITree().AppendXML(&b, 0, 0)
	return b.Bytes()
}

// AppendXML writes e as WebDriverAgent's XML source does: a tag named
// after the type, attributes type, value, name, label, placeholderValue,
// enabled, visible, accessible, selected (when true), x, y, width,
// height, index, indented two spaces a level. Like iOS's WebDriverAgent
// it writes no focus (only the JSON source has isFocused).
func (e *XCUIElement) AppendXML(b *bytes.Buffer, depth, index int) {
	for range depth {
		b.WriteString("  ")
	}
	b.WriteByte('<')
	b.WriteString(e.Type)
	b.WriteString(` type="`)
	b.WriteString(e.Type)
	b.WriteByte('"')
	str := func(name, v string) {
		b.WriteByte(' ')
		b.WriteString(name)
		b.WriteString(`="`)
		escape(b, v)
		b.WriteByte('"')
	}
	flag := func(name string, on bool) {
		b.WriteByte(' ')
		b.WriteString(name)
		if on {
			b.WriteString(`="true"`)
		} else {
			b.WriteString(`="false"`)
		}
	}
	num := func(name string, v int) {
		b.WriteByte(' ')
		b.WriteString(name)
		b.WriteString(`="`)
		b.WriteString(strconv.Itoa(v))
		b.WriteByte('"')
	}
	if e.HasValue {
		str("value", e.Value)
	}
	if n := e.Name(); n != "" {
		str("name", n)
	}
	if e.Label != "" {
		str("label", e.Label)
	}
	if e.Placeholder != "" {
		str("placeholderValue", e.Placeholder)
	}
	flag("enabled", e.Enabled)
	flag("visible", e.Visible)
	flag("accessible", e.Accessible)
	if e.Selected {
		flag("selected", true)
	}
	num("x", e.Rect.Min.X)
	num("y", e.Rect.Min.Y)
	num("width", e.Rect.Dx())
	num("height", e.Rect.Dy())
	num("index", index)
	if len(e.Children) == 0 {
		b.WriteString("/>\n")
		return
	}
	b.WriteString(">\n")
	for i, c := range e.Children {
		c.AppendXML(b, depth+1, i)
	}
	for range depth {
		b.WriteString("  ")
	}
	b.WriteString("</")
	b.WriteString(e.Type)
	b.WriteString(">\n")
}
