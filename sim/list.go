package sim

import (
	"fmt"
	"image"
	"strings"
)

// listItems evaluates a list's items expression ("products" or
// "${filter(products, 'name', query)}").
func listItems(e *Element, scope *evalScope) []any {
	src := strings.TrimSpace(e.Items)
	if strings.HasPrefix(src, "${") && strings.HasSuffix(src, "}") {
		src = src[2 : len(src)-1]
	}
	items, _ := evalExpr(src, scope).([]any)
	return items
}

// list lays out the visible rows of a list, like a RecyclerView: rows
// outside the viewport have no views.
func (c *layoutCtx) list(v *view, e *Element, r image.Rectangle, scope *evalScope, key string) {
	a := c.a
	v.r = r
	clip := r
	v.clip = &clip
	items := listItems(e, scope)
	it := e.Item
	rowH := c.dp(72)
	if it.Height > 0 {
		rowH = c.dp(float64(it.Height))
	} else if it.Detail == "" && len(it.Trailing) == 0 {
		rowH = c.dp(56)
	}
	skey := c.scopeKey + "/list:" + pick(e.ID, key)
	v.scrollKey = skey
	total := rowH * len(items)
	limit := max(0, total-r.Dy())
	v.scrollMax = limit
	v.scrollable = limit > 0
	v.focusable = true
	off := min(max(a.scroll[skey], 0), limit)
	a.scroll[skey] = off
	if len(items) == 0 && e.Empty != "" {
		msg := render(e.Empty, scope)
		v.children = append(v.children, &view{class: "android.widget.TextView", pkg: a.spec.Package, resID: c.rid("empty"),
			text: msg, lines: []string{msg}, r: image.Rect(r.Min.X+c.dp(16), r.Min.Y+c.dp(24), r.Max.X-c.dp(16), r.Min.Y+c.dp(72)),
			kind: "text", size: c.dp(16), fg: c.mutedColor()})
		return
	}
	first := off / rowH
	for i := first; i < len(items); i++ {
		y := r.Min.Y + i*rowH - off
		if y >= r.Max.Y {
			break
		}
		is := &evalScope{app: a, item: items[i], index: i, hasItem: true}
		v.children = append(v.children, c.row(it, image.Rect(r.Min.X, y, r.Max.X, y+rowH), is, fmt.Sprintf("%s/%d", skey, i)))
	}
}

func (c *layoutCtx) row(it *ListItem, r image.Rectangle, s *evalScope, key string) *view {
	a := c.a
	pkg := a.spec.Package
	row := &view{class: "android.view.ViewGroup", pkg: pkg, resID: c.rid(pick(it.ID, "item")), r: r, kind: "listrow",
		desc: render(it.Desc, s), focusable: true}
	if len(it.OnTap) > 0 {
		row.clickable = true
		row.tap = func() { c.p.run(a, it.OnTap, s) }
	}
	if len(it.OnLongPress) > 0 {
		row.longClickable = true
		row.longPress = func() { c.p.run(a, it.OnLongPress, s) }
	}
	x := r.Min.X + c.dp(16)
	if it.Icon != "" {
		glyph := render(it.Icon, s)
		d := c.dp(40)
		ic := &view{class: "android.widget.ImageView", pkg: pkg, r: image.Rect(x, r.Min.Y+(r.Dy()-d)/2, x+d, r.Min.Y+(r.Dy()+d)/2),
			kind: "avatar", lines: []string{glyph}, bg: c.prim, size: c.dp(18), noNode: true}
		row.children = append(row.children, ic)
		x += d + c.dp(16)
	}
	right := r.Max.X - c.dp(8)
	var trailing []*view
	for i := len(it.Trailing) - 1; i >= 0; i-- {
		e := it.Trailing[i]
		if !c.shown(e, s) {
			continue
		}
		w := c.dp(48)
		if e.Type == KindText {
			w = max(c.dp(32), measure(render(e.Text, s), c.dp(16), true)+c.dp(8))
		} else if e.Type == KindButton {
			w = measure(render(e.Text, s), c.dp(15), true) + c.dp(32)
		} else if e.Type == KindCheckbox || e.Type == KindSwitch {
			w = c.dp(64)
		}
		er := image.Rect(right-w, r.Min.Y+c.dp(6), right, r.Max.Y-c.dp(6))
		tv := c.element(e, er, s, fmt.Sprintf("%s/t%d", key, i))
		if e.Type == KindText {
			tv.r = er
			tv.bold = true
			tv.lines = []string{tv.text}
			tv.style = "center"
		}
		if e.Type == KindIcon {
			tv.r = image.Rect(er.Min.X, r.Min.Y+(r.Dy()-c.dp(48))/2, er.Max.X, r.Min.Y+(r.Dy()+c.dp(48))/2)
		}
		trailing = append([]*view{tv}, trailing...)
		right = er.Min.X - c.dp(4)
	}
	title := render(it.Text, s)
	detail := render(it.Detail, s)
	tsize, dsize := c.dp(16), c.dp(14)
	if detail == "" {
		row.children = append(row.children, &view{class: "android.widget.TextView", pkg: pkg, resID: c.rid("title"), text: title,
			lines: []string{ellipsize(title, tsize, false, right-x)}, r: image.Rect(x, r.Min.Y, right, r.Max.Y),
			kind: "text", style: "middle", size: tsize, fg: c.textColor()})
	} else {
		mid := r.Min.Y + r.Dy()/2
		row.children = append(row.children,
			&view{class: "android.widget.TextView", pkg: pkg, resID: c.rid("title"), text: title,
				lines: []string{ellipsize(title, tsize, false, right-x)}, r: image.Rect(x, mid-tsize*13/10, right, mid),
				kind: "text", size: tsize, fg: c.textColor()},
			&view{class: "android.widget.TextView", pkg: pkg, resID: c.rid("subtitle"), text: detail,
				lines: []string{ellipsize(detail, dsize, false, right-x)}, r: image.Rect(x, mid+c.dp(2), right, mid+dsize*14/10+c.dp(4)),
				kind: "text", size: dsize, fg: c.mutedColor()})
	}
	row.children = append(row.children, trailing...)
	return row
}
