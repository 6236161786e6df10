package sim

import (
	"image"
	"image/color"
)

// view is one laid-out widget. The UI dump and the renderer both walk the
// same views, which is what keeps screenshots and dumps in agreement.
type view struct {
	class, text, desc, resID, pkg string
	r                             image.Rectangle

	clickable, longClickable, checkable, checked bool
	focusable, focused, scrollable, password     bool
	selected, disabled                           bool

	// kind says how to draw it; style refines it (title, primary, …).
	kind, style string
	fg, bg      color.RGBA
	size        int // text size in px
	bold        bool
	hint        bool     // text is the hint of an empty field
	lines       []string // wrapped text, or a canvas's pixel-only lines
	// noNode views are drawn but absent from the UI tree (canvas text).
	noNode   bool
	children []*view

	tap       func()
	longPress func()
	// pinch zooms the view by the ratio of the fingers' end span to their
	// start span (an image with bind).
	pinch     func(ratio float64)
	field     *fieldRef
	scrollKey string // lists and scrolling bodies
	scrollMax int    // how far scrollKey may scroll
	clip      *image.Rectangle
	scrimR    image.Rectangle // dialogs dim this area
}

// fieldRef tells input where a focused field's text lives.
type fieldRef struct {
	app   *appRun
	key   string
	bind  string
	el    *Element
	scope *evalScope
}

// screenLayout is everything on screen, topmost last.
type screenLayout struct {
	app      *view // the foreground app's window (or the keyguard)
	dialog   *view // a dialog window, with its scrim
	status   *view
	nav      *view
	keyboard *keyboard
	toast    *view
	dark     bool
	off      bool // screen off: everything black
}

// walk visits v and its descendants depth first.
func (v *view) walk(fn func(*view) bool) bool {
	if !fn(v) {
		return false
	}
	for _, c := range v.children {
		if !c.walk(fn) {
			return false
		}
	}
	return true
}

// hit returns the deepest view at (x, y) accepting pred, or nil.
func (v *view) hit(x, y int, pred func(*view) bool) *view {
	if !image.Pt(x, y).In(v.r) {
		return nil
	}
	if v.clip != nil && !image.Pt(x, y).In(*v.clip) {
		return nil
	}
	for i := len(v.children) - 1; i >= 0; i-- {
		if h := v.children[i].hit(x, y, pred); h != nil {
			return h
		}
	}
	if pred(v) {
		return v
	}
	return nil
}

var (
	white     = color.RGBA{255, 255, 255, 255}
	black     = color.RGBA{0, 0, 0, 255}
	textDark  = color.RGBA{28, 27, 31, 255}
	textMuted = color.RGBA{96, 96, 104, 255}
	divider   = color.RGBA{224, 224, 228, 255}
	errorRed  = color.RGBA{186, 26, 26, 255}
	darkBg    = color.RGBA{24, 24, 28, 255}
	darkCard  = color.RGBA{44, 44, 50, 255}
	lightText = color.RGBA{230, 230, 235, 255}
	defPrim   = color.RGBA{103, 80, 164, 255}
)
