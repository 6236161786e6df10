package sim

import (
	"fmt"
	"image"
	"image/color"
	"time"
)

// layoutCtx carries what laying out one app window needs.
type layoutCtx struct {
	p        *Phone
	a        *appRun
	now      time.Time
	entered  time.Time
	scale    float64
	prim     color.RGBA
	dark     bool
	scopeKey string
}

func (c *layoutCtx) dp(v float64) int { return int(v*c.scale + 0.5) }

func (c *layoutCtx) rid(id string) string {
	if id == "" {
		return ""
	}
	return c.a.spec.Package + ":id/" + id
}

func (c *layoutCtx) textColor() color.RGBA {
	if c.dark {
		return lightText
	}
	return textDark
}

func (c *layoutCtx) mutedColor() color.RGBA {
	if c.dark {
		return color.RGBA{170, 170, 180, 255}
	}
	return textMuted
}

func (c *layoutCtx) surface() color.RGBA {
	if c.dark {
		return darkBg
	}
	return white
}

// layout lays out the whole screen for the current state and time.
func (p *Phone) layout() *screenLayout {
	now := p.tick()
	L := &screenLayout{}
	if !p.awake {
		L.off = true
		return L
	}
	scale := float64(p.density) / 160
	dp := func(v float64) int { return int(v*scale + 0.5) }
	sb, nb := dp(24), dp(48)
	if p.ios {
		sb, nb = dp(iosStatusBar), dp(iosHomeIndicator)
	}
	L.status = p.statusBar(p.local(now), sb)
	L.nav = p.navBar(nb)
	if p.ios {
		defer p.iosify(L, now)
	}
	if p.locked {
		L.app = p.keyguard(p.local(now), sb, nb)
		return L
	}
	if p.inOverview {
		L.app = p.overviewView(sb, nb)
		return L
	}
	a := p.apps[p.fg]
	bottom := p.h - nb
	if p.keyboardShown() {
		L.keyboard = newKeyboard(p.w, bottom, scale)
		bottom = L.keyboard.r.Min.Y
	}
	c := p.ctxFor(a, now)
	L.dark = c.dark
	L.app = c.appWindow(image.Rect(0, sb, p.w, bottom))
	p.translate(L.app, a.spec)
	if a.dialog != nil {
		L.dialog = c.dialogWindow(a.dialog, image.Rect(0, sb, p.w, bottom))
	}
	if p.toast != "" {
		L.toast = c.toastView(p.toast, bottom)
	}
	return L
}

func (p *Phone) ctxFor(a *appRun, now time.Time) *layoutCtx {
	c := &layoutCtx{p: p, a: a, now: now, scale: float64(p.density) / 160, prim: defPrim}
	if col, err := parseColor(a.spec.Theme.Primary); err == nil && a.spec.Theme.Primary != "" {
		c.prim = col
	}
	c.dark = p.nightMode() || a.spec.Theme.Dark != "" && cond(a.spec.Theme.Dark, &evalScope{app: a})
	if t := a.top(); t != nil {
		c.entered = t.entered
		c.scopeKey = t.spec.ID
	}
	return c
}

func (c *layoutCtx) appWindow(content image.Rectangle) *view {
	a := c.a
	pkg := a.spec.Package
	full := image.Rect(0, 0, c.p.w, c.p.h)
	root := &view{class: "android.widget.FrameLayout", pkg: pkg, r: full, kind: "window", bg: c.surface()}
	lin := &view{class: "android.widget.LinearLayout", pkg: pkg, r: full}
	frame := &view{class: "android.widget.FrameLayout", pkg: pkg, resID: "android:id/content", r: content, clip: &content}
	root.children = []*view{lin}
	lin.children = []*view{frame}
	t := a.top()
	if t == nil {
		return root
	}
	sc := t.spec
	scope := &evalScope{app: a}
	body := content
	if sc.AppBar == nil || *sc.AppBar {
		bar := c.appBar(sc, image.Rect(content.Min.X, content.Min.Y, content.Max.X, content.Min.Y+c.dp(c.p.appBarHeight())), scope)
		frame.children = append(frame.children, bar)
		body.Min.Y = bar.r.Max.Y
	}
	frame.children = append(frame.children, c.column(sc.Elements, body, scope, sc.ID)...)
	return root
}

func (c *layoutCtx) appBar(sc *Screen, r image.Rectangle, scope *evalScope) *view {
	bar := &view{class: "android.view.ViewGroup", pkg: c.a.spec.Package, resID: c.rid("toolbar"), r: r, kind: "appbar", bg: c.prim}
	x := r.Min.X + c.dp(16)
	if sc.Up {
		up := &view{class: "android.widget.ImageButton", pkg: bar.pkg, desc: "Navigate up", r: image.Rect(r.Min.X+c.dp(4), r.Min.Y+c.dp(8), r.Min.X+c.dp(52), r.Max.Y-c.dp(8)),
			clickable: true, focusable: true, kind: "icon", lines: []string{"←"}, size: c.dp(24), fg: white}
		up.tap = func() { c.p.back() }
		bar.children = append(bar.children, up)
		x = up.r.Max.X + c.dp(12)
	}
	right := r.Max.X - c.dp(4)
	var acts []*view
	for i := len(sc.Actions) - 1; i >= 0; i-- {
		e := sc.Actions[i]
		if !c.shown(e, scope) {
			continue
		}
		w := c.dp(48)
		if e.Type != KindIcon && e.Text != "" {
			w = measure(render(e.Text, scope), c.dp(14), true) + c.dp(24)
		}
		ar := image.Rect(right-w, r.Min.Y+c.dp(8), right, r.Max.Y-c.dp(8))
		v := c.element(e, ar, scope, fmt.Sprintf("%s/action%d", sc.ID, i))
		v.fg = white
		if v.kind == "button" {
			v.style = "appbar"
		}
		acts = append([]*view{v}, acts...)
		right = ar.Min.X
	}
	size := c.dp(22)
	title := render(sc.Title, scope)
	if title == "" {
		title = c.a.spec.Label
	}
	tv := &view{class: "android.widget.TextView", pkg: bar.pkg, text: title, r: image.Rect(x, r.Min.Y, right, r.Max.Y),
		kind: "text", style: "middle", size: size, bold: true, fg: white, lines: []string{ellipsize(title, size, true, right-x)}}
	bar.children = append(bar.children, tv)
	bar.children = append(bar.children, acts...)
	return bar
}

// shown reports whether an element is visible now (condition and delay).
func (c *layoutCtx) shown(e *Element, scope *evalScope) bool {
	if e.Delay > 0 && c.now.Before(c.entered.Add(time.Duration(e.Delay))) {
		return false
	}
	return cond(e.Visible, scope)
}

// column lays elements top to bottom in r. Lists share the height left
// over; without lists, content taller than r scrolls.
func (c *layoutCtx) column(els []*Element, r image.Rectangle, scope *evalScope, key string) []*view {
	var vis []*Element
	var keys []string
	for i, e := range els {
		if c.shown(e, scope) {
			vis = append(vis, e)
			keys = append(keys, fmt.Sprintf("%s/%d", key, i))
		}
	}
	var out []*view
	// A bottom tab bar sits at the bottom edge whatever the content.
	for i := len(vis) - 1; i >= 0; i-- {
		if vis[i].Type == KindTabs && vis[i].Style == "bottom" {
			h := c.dp(80)
			out = append(out, c.element(vis[i], image.Rect(r.Min.X, r.Max.Y-h, r.Max.X, r.Max.Y), scope, keys[i]))
			r.Max.Y -= h
			vis = append(vis[:i], vis[i+1:]...)
			keys = append(keys[:i], keys[i+1:]...)
		}
	}
	pad := c.dp(16)
	inner := r.Inset(0)
	inner.Min.X += pad
	inner.Max.X -= pad
	heights := make([]int, len(vis))
	fixed, flex := c.dp(8), 0
	for i, e := range vis {
		heights[i] = c.height(e, inner.Dx(), scope)
		if heights[i] < 0 {
			flex++
		} else {
			fixed += heights[i]
		}
	}
	offset := 0
	var scroller *view
	if flex > 0 && r.Dy()-fixed >= flex*c.dp(168) {
		share := (r.Dy() - fixed) / flex
		for i := range heights {
			if heights[i] < 0 {
				heights[i] = share
			}
		}
	} else if flex > 0 {
		// Too little room: the body scrolls and each list shows a window
		// of its own (nested scrolling, as a RecyclerView in a ScrollView
		// with a fixed height).
		for i := range heights {
			if heights[i] < 0 {
				heights[i] = c.dp(280)
				fixed += heights[i]
			}
		}
	}
	if fixed > r.Dy() {
		skey := c.scopeKey + "/body:" + key
		limit := fixed - r.Dy()
		offset = min(max(c.a.scroll[skey], 0), limit)
		clip := r
		scroller = &view{class: "android.widget.ScrollView", pkg: c.a.spec.Package, r: r, scrollable: true,
			focusable: true, scrollKey: skey, scrollMax: limit, clip: &clip}
		c.ensureFocusVisible(vis, heights, keys, r, &offset, limit, skey)
	}
	y := r.Min.Y + c.dp(8) - offset
	var placed []*view
	for i, e := range vis {
		h := heights[i]
		er := image.Rect(inner.Min.X, y, inner.Max.X, y+h)
		if e.Type == KindList || e.Type == KindTabs || e.Type == KindAppGrid || e.Type == KindCanvas && e.Style == "full" {
			er.Min.X, er.Max.X = r.Min.X, r.Max.X
		}
		if scroller == nil || er.Overlaps(r) {
			placed = append(placed, c.element(e, er, scope, keys[i]))
		}
		y += h
	}
	if scroller != nil {
		scroller.children = placed
		return append([]*view{scroller}, out...)
	}
	return append(placed, out...)
}

// ensureFocusVisible scrolls a form so the focused field sits above the
// keyboard, as adjustResize does.
func (c *layoutCtx) ensureFocusVisible(vis []*Element, heights []int, keys []string, r image.Rectangle, offset *int, limit int, skey string) {
	if c.a.focus == "" {
		return
	}
	y := c.dp(8)
	for i, e := range vis {
		if e.Type == KindField && c.fieldKey(e, keys[i]) == c.a.focus {
			top, bottom := y, y+heights[i]
			if top < *offset {
				*offset = top
			} else if bottom > *offset+r.Dy() {
				*offset = min(bottom-r.Dy(), limit)
			}
			c.a.scroll[skey] = *offset
			return
		}
		y += heights[i]
	}
}

func (c *layoutCtx) fieldKey(e *Element, fallback string) string {
	if e.ID != "" {
		return c.scopeKey + "/" + e.ID
	}
	return fallback
}

func textStyle(style string) (sp float64, bold bool) {
	switch style {
	case "title":
		return 24, true
	case "subtitle":
		return 18, true
	case "caption", "error":
		return 14, false
	case "price":
		return 20, true
	case "headline":
		return 32, true
	}
	return 16, false
}

// height is an element's height in px including its spacing; -1 for
// elements that take the space left (lists).
func (c *layoutCtx) height(e *Element, width int, scope *evalScope) int {
	if e.Height > 0 && e.Type != KindList {
		return c.dp(float64(e.Height))
	}
	switch e.Type {
	case KindText:
		sp, bold := textStyle(e.Style)
		size := c.dp(sp)
		n := len(wrap(render(e.Text, scope), size, bold, width, 8))
		return n*size*135/100 + c.dp(12)
	case KindButton, KindIcon:
		return c.dp(60)
	case KindField:
		return c.dp(68)
	case KindCheckbox, KindSwitch, KindRadio:
		return c.dp(56)
	case KindTabs:
		return c.dp(52)
	case KindImage:
		return c.dp(168)
	case KindCanvas:
		return c.canvasHeight(e, width, scope)
	case KindSpacer:
		return c.dp(16)
	case KindRow:
		h := 0
		for _, ch := range e.Children {
			if c.shown(ch, scope) {
				h = max(h, c.height(ch, width/len(e.Children), scope))
			}
		}
		return h
	case KindList, KindAppGrid:
		if e.Height > 0 {
			return c.dp(float64(e.Height))
		}
		return -1
	}
	return c.dp(48)
}
