package sim

import (
	"fmt"
	"image"
	"math"
	"strings"
)

var androidClass = map[string]string{
	KindText:     "android.widget.TextView",
	KindButton:   "android.widget.Button",
	KindIcon:     "android.widget.ImageButton",
	KindImage:    "android.widget.ImageView",
	KindField:    "android.widget.EditText",
	KindCheckbox: "android.widget.CheckBox",
	KindSwitch:   "android.widget.Switch",
	KindRadio:    "android.widget.RadioButton",
	KindTabs:     "android.widget.LinearLayout",
	KindList:     "androidx.recyclerview.widget.RecyclerView",
	KindRow:      "android.widget.LinearLayout",
	KindCanvas:   "android.webkit.WebView",
	KindAppGrid:  "androidx.recyclerview.widget.RecyclerView",
	KindSpacer:   "android.view.View",
}

// element builds the view of one element placed in r (spacing included).
func (c *layoutCtx) element(e *Element, r image.Rectangle, scope *evalScope, key string) *view {
	a := c.a
	v := &view{class: androidClass[e.Type], pkg: a.spec.Package, resID: c.rid(e.ID), kind: e.Type, style: e.Style,
		desc: render(e.Desc, scope), fg: c.textColor(), size: c.dp(16)}
	v.disabled = e.Enabled != "" && !cond(e.Enabled, scope)
	if e.Color != "" {
		v.bg, _ = parseColor(e.Color)
	}
	gap := c.dp(6)
	inner := image.Rect(r.Min.X, r.Min.Y+gap, r.Max.X, r.Max.Y-gap)
	v.r = inner
	onTap := func(acts []*Action) func() {
		if len(acts) == 0 || v.disabled {
			return nil
		}
		return func() { c.p.run(a, acts, scope) }
	}
	switch e.Type {
	case KindText:
		sp, bold := textStyle(e.Style)
		v.size, v.bold = c.dp(sp), bold
		v.text = render(e.Text, scope)
		v.lines = wrap(v.text, v.size, v.bold, r.Dx(), 8)
		v.r = r
		switch e.Style {
		case "error":
			v.fg = errorRed
		case "price":
			v.fg = c.prim
		case "caption":
			v.fg = c.mutedColor()
		}
		v.tap = onTap(e.OnTap)
		v.clickable = v.tap != nil
	case KindButton:
		v.text = render(e.Text, scope)
		v.bold = true
		v.size = c.dp(15)
		v.bg = pick(v.bg, c.prim)
		v.clickable, v.focusable = true, true
		v.tap = onTap(e.OnTap)
		v.longPress = onTap(e.OnLongPress)
		v.longClickable = v.longPress != nil
	case KindIcon:
		v.text = iconGlyph(e.Text, v.desc)
		v.clickable, v.focusable = true, true
		v.size = c.dp(22)
		w := min(inner.Dx(), c.dp(48))
		v.r = image.Rect(inner.Min.X, inner.Min.Y, inner.Min.X+w, inner.Min.Y+min(inner.Dy(), c.dp(48)))
		v.tap = onTap(e.OnTap)
		v.longPress = onTap(e.OnLongPress)
		v.longClickable = v.longPress != nil
		v.text, v.lines = "", []string{v.text}
	case KindImage:
		v.bg = pick(v.bg, c.prim)
		v.lines = []string{render(e.Text, scope)}
		v.tap = onTap(e.OnTap)
		v.clickable = v.tap != nil
		if e.Bind != "" {
			v.pinch = func(ratio float64) {
				z := min(max(toNum(a.read(e.Bind, scope))*ratio, MinZoom), MaxZoom)
				_ = a.assign(e.Bind, math.Round(z*100)/100, scope)
				c.p.run(a, e.OnChange, scope)
			}
		}
	case KindField:
		c.field(v, e, scope, key)
	case KindCheckbox, KindSwitch:
		v.text = render(e.Text, scope)
		v.checkable, v.clickable, v.focusable = true, true, true
		v.checked = truthy(a.read(e.Bind, scope))
		v.bg = c.prim
		v.tap = func() {
			if v.disabled {
				return
			}
			_ = a.assign(e.Bind, !truthy(a.read(e.Bind, scope)), scope)
			c.p.run(a, e.OnChange, scope)
			c.p.run(a, e.OnTap, scope)
		}
	case KindRadio:
		v.text = render(e.Text, scope)
		v.checkable, v.clickable, v.focusable = true, true, true
		val := value(e.Value, scope)
		v.checked = equal(a.read(e.Bind, scope), val)
		v.bg = c.prim
		v.tap = func() {
			if v.disabled {
				return
			}
			_ = a.assign(e.Bind, val, scope)
			c.p.run(a, e.OnChange, scope)
			c.p.run(a, e.OnTap, scope)
		}
	case KindTabs:
		c.tabs(v, e, r, scope)
	case KindList:
		c.list(v, e, r, scope, key)
	case KindRow:
		v.r = r
		total := 0.0
		var kids []*Element
		for _, ch := range e.Children {
			if c.shown(ch, scope) {
				kids = append(kids, ch)
				total += weight(ch)
			}
		}
		x := float64(r.Min.X)
		for i, ch := range kids {
			w := float64(r.Dx()) * weight(ch) / total
			cr := image.Rect(int(x), r.Min.Y, int(x+w), r.Max.Y)
			if i > 0 {
				cr.Min.X += c.dp(4)
			}
			if i < len(kids)-1 {
				cr.Max.X -= c.dp(4)
			}
			v.children = append(v.children, c.element(ch, cr, scope, fmt.Sprintf("%s/%d", key, i)))
			x += w
		}
	case KindCanvas:
		v.r = r
		v.bg = pick(v.bg, c.surface())
		for _, l := range e.Lines {
			v.lines = append(v.lines, render(l, scope))
		}
		v.tap = onTap(e.OnTap)
		v.clickable = v.tap != nil
		v.focusable = true
		c.canvasChildren(v, e, scope, key)
	case KindAppGrid:
		c.appGrid(v, r)
	case KindSpacer:
		v.r = r
		v.noNode = true
	}
	return v
}

func weight(e *Element) float64 {
	if e.Weight > 0 {
		return e.Weight
	}
	return 1
}

func pick[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// iconGlyph picks what an icon button draws: its text, or a symbol that
// fits its description.
func iconGlyph(text, desc string) string {
	if text != "" {
		return text
	}
	d := strings.ToLower(desc)
	for _, m := range []struct{ word, glyph string }{
		{"cart", "$"}, {"close", "×"}, {"delete", "×"}, {"search", "○"}, {"add", "+"}, {"more", "…"},
		{"back", "←"}, {"up", "←"}, {"settings", "≡"}, {"menu", "≡"},
		{"increase", "+"}, {"decrease", "−"}, {"remove", "−"}, {"favorite", "♥"}, {"save", "✓"},
	} {
		if strings.Contains(d, m.word) {
			return m.glyph
		}
	}
	if desc == "" {
		return "•"
	}
	return strings.ToUpper(string([]rune(desc)[:1]))
}

func (c *layoutCtx) field(v *view, e *Element, scope *evalScope, key string) {
	a := c.a
	fk := c.fieldKey(e, key)
	text := ""
	if e.Bind != "" {
		text = toStr(a.read(e.Bind, scope))
	} else {
		text = a.fields[fk]
	}
	v.focusable, v.clickable, v.longClickable = true, true, true
	v.focused = a.focus == fk
	v.password = e.Password
	v.field = &fieldRef{app: a, key: fk, bind: e.Bind, el: e, scope: scope}
	shown := text
	if e.Password {
		shown = strings.Repeat("•", len([]rune(text)))
	}
	hint := render(e.Hint, scope)
	if text == "" {
		v.text, v.hint = hint, true
	} else {
		v.text = shown
	}
	v.lines = []string{ellipsize(v.text, v.size, false, v.r.Dx()-c.dp(32))}
	v.bg = c.prim
	v.tap = func() {
		if !v.disabled {
			a.setFocus(fk)
			c.p.run(a, e.OnTap, scope)
		}
	}
}

func (c *layoutCtx) tabs(v *view, e *Element, r image.Rectangle, scope *evalScope) {
	v.r = r
	if e.Style != "bottom" {
		v.r.Min.Y += c.dp(2)
	}
	a := c.a
	cur := ""
	if t := a.top(); t != nil {
		cur = t.spec.ID
	}
	w := r.Dx() / len(e.Tabs)
	for i, t := range e.Tabs {
		selected := t.Screen != "" && t.Screen == cur
		if t.Selected != "" {
			selected = cond(t.Selected, scope)
		}
		label := render(t.Label, scope)
		tv := &view{class: "android.widget.TextView", pkg: a.spec.Package, resID: c.rid(t.ID), text: label, desc: label,
			r: image.Rect(r.Min.X+i*w, v.r.Min.Y, r.Min.X+(i+1)*w, r.Max.Y), kind: "tab", style: e.Style,
			clickable: true, focusable: true, selected: selected, size: c.dp(14), bold: selected, fg: c.textColor(), bg: c.prim}
		tab := t
		tv.tap = func() {
			c.p.run(a, tab.OnTap, scope)
			if tab.Screen != "" && tab.Screen != cur && a.running {
				c.p.run(a, []*Action{{Replace: tab.Screen}}, scope)
			}
		}
		v.children = append(v.children, tv)
	}
}

func (c *layoutCtx) appGrid(v *view, r image.Rectangle) {
	v.r = r
	cols := 4
	cw, ch := r.Dx()/cols, c.dp(104)
	i := 0
	for _, name := range c.p.order {
		app := c.p.apps[name]
		if app.spec.Hidden {
			continue
		}
		x, y := r.Min.X+(i%cols)*cw, r.Min.Y+c.dp(16)+(i/cols)*ch
		if y+ch > r.Max.Y {
			break
		}
		label := c.p.pkgs[name].Label
		iv := &view{class: "android.widget.TextView", pkg: c.a.spec.Package, text: label, desc: label,
			r: image.Rect(x, y, x+cw, y+ch), kind: "appicon", clickable: true, focusable: true, longClickable: true,
			fg: c.textColor(), size: c.dp(13)}
		iv.bg, _ = parseColor(pick(app.spec.Icon.Color, "#607D8B"))
		glyph := pick(app.spec.Icon.Glyph, firstRune(label))
		iv.lines = []string{glyph}
		pkg := name
		iv.tap = func() { c.p.launch(pkg) }
		v.children = append(v.children, iv)
		i++
	}
}
