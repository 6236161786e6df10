package sim

import (
	"fmt"
	"image"
	"image/color"
	"time"
)

const systemUI = "com.android.systemui"

func (p *Phone) dpf(v float64) int { return int(v*float64(p.density)/160 + 0.5) }

func (p *Phone) statusBar(now time.Time, h int) *view {
	sb := &view{class: "android.widget.FrameLayout", pkg: systemUI, resID: systemUI + ":id/status_bar", r: image.Rect(0, 0, p.w, h), kind: "statusbar"}
	size := p.dpf(14)
	clock := now.Format("15:04")
	x := p.dpf(16)
	sb.children = append(sb.children, &view{class: "android.widget.TextView", pkg: systemUI, resID: systemUI + ":id/clock", text: clock,
		lines: []string{clock}, r: image.Rect(x, 0, x+measure(clock, size, true)+p.dpf(4), h), kind: "text", style: "middle", size: size, bold: true, fg: white})
	right := p.w - p.dpf(16)
	batt, battDesc := p.batteryText()
	bw := measure(batt, size, false) + p.dpf(4)
	sb.children = append(sb.children, &view{class: "android.widget.ImageView", pkg: systemUI, resID: systemUI + ":id/battery",
		desc: battDesc, r: image.Rect(right-bw, 0, right, h), kind: "text", style: "middle", size: size, lines: []string{batt}, fg: white})
	if p.settings["global"]["wifi_on"] == "1" {
		sb.children = append(sb.children, &view{class: "android.widget.ImageView", pkg: systemUI, resID: systemUI + ":id/wifi_signal",
			desc: "Wifi signal full.", r: image.Rect(right-bw-p.dpf(28), p.dpf(4), right-bw-p.dpf(6), h-p.dpf(4)), kind: "wifi"})
	}
	return sb
}

func (p *Phone) navBar(h int) *view {
	r := image.Rect(0, p.h-h, p.w, p.h)
	nb := &view{class: "android.widget.FrameLayout", pkg: systemUI, resID: systemUI + ":id/navigation_bar_frame", r: r, kind: "navbar"}
	w := p.w / 3
	for i, b := range []struct{ id, desc, glyph string }{{"back", "Back", "◄"}, {"home", "Home", "●"}, {"recent_apps", "Overview", "■"}} {
		cx := w*i + w/2
		bv := &view{class: "android.widget.ImageView", pkg: systemUI, resID: systemUI + ":id/" + b.id, desc: b.desc,
			r: image.Rect(cx-p.dpf(32), r.Min.Y, cx+p.dpf(32), r.Max.Y), clickable: true, longClickable: true, focusable: true,
			kind: "navbutton", lines: []string{b.glyph}, size: p.dpf(18)}
		code := []int{KeycodeBack, KeycodeHome, KeycodeAppSwitch}[i]
		bv.tap = func() { p.keyEvent(code) }
		nb.children = append(nb.children, bv)
	}
	return nb
}

func (p *Phone) keyguard(now time.Time, sb, nb int) *view {
	full := image.Rect(0, 0, p.w, p.h)
	kg := &view{class: "android.widget.FrameLayout", pkg: systemUI, resID: systemUI + ":id/keyguard_root_view", r: full, kind: "keyguard",
		bg: color.RGBA{32, 44, 68, 255}}
	clock := now.Format("15:04")
	date := now.Format("Monday, January 2")
	big, mid := p.dpf(72), p.dpf(18)
	y := p.h / 4
	kg.children = append(kg.children,
		&view{class: "android.widget.TextView", pkg: systemUI, resID: systemUI + ":id/keyguard_clock", text: clock, lines: []string{clock},
			r: image.Rect(0, y, p.w, y+big*13/10), kind: "text", style: "center", size: big, fg: white},
		&view{class: "android.widget.TextView", pkg: systemUI, resID: systemUI + ":id/keyguard_date", text: date, lines: []string{date},
			r: image.Rect(0, y+big*14/10, p.w, y+big*14/10+mid*15/10), kind: "text", style: "center", size: mid, fg: white},
		&view{class: "android.widget.TextView", pkg: systemUI, resID: systemUI + ":id/keyguard_indication_text", text: "Swipe up to unlock",
			lines: []string{"Swipe up to unlock"}, r: image.Rect(0, p.h-nb-p.dpf(96), p.w, p.h-nb-p.dpf(64)), kind: "text", style: "center",
			size: p.dpf(16), fg: white},
		&view{class: "android.widget.ImageView", pkg: systemUI, resID: systemUI + ":id/lock_icon", desc: "Unlock",
			r: image.Rect(p.w/2-p.dpf(24), p.h-nb-p.dpf(170), p.w/2+p.dpf(24), p.h-nb-p.dpf(122)), kind: "text", style: "center",
			lines: []string{"○"}, size: p.dpf(28), fg: white})
	return kg
}

func (c *layoutCtx) dialogWindow(d *dialogRun, area image.Rectangle) *view {
	a := c.a
	pkg := a.spec.Package
	s := d.scope
	if s == nil {
		s = &evalScope{app: a}
	}
	margin := c.dp(28)
	w := area.Dx() - 2*margin
	pad := c.dp(24)
	inner := w - 2*pad
	title := render(d.spec.Title, s)
	text := render(d.spec.Text, s)
	tsize, bsize := c.dp(22), c.dp(16)
	var tl, bl []string
	h := pad
	titleW := inner
	for _, e := range d.spec.Elements {
		if e.Type == KindIcon && e.Style == "corner" {
			titleW = inner - c.dp(40)
		}
	}
	if title != "" {
		tl = wrap(title, tsize, true, titleW, 3)
		h += len(tl)*tsize*13/10 + c.dp(12)
	}
	if text != "" {
		bl = wrap(text, bsize, false, inner, 10)
		h += len(bl)*bsize*14/10 + c.dp(12)
	}
	saved := c.scopeKey
	c.scopeKey = "dialog:" + d.spec.ID
	defer func() { c.scopeKey = saved }()
	var elH []int
	var els, corner []*Element
	for _, e := range d.spec.Elements {
		if e.Type == KindIcon && e.Style == "corner" {
			corner = append(corner, e)
			continue
		}
		if c.shown(e, s) {
			els = append(els, e)
			eh := c.height(e, inner, s)
			if eh < 0 {
				eh = c.dp(240)
			}
			elH = append(elH, eh)
			h += eh
		}
	}
	if len(d.spec.Buttons) > 0 {
		h += c.dp(64)
	}
	h += c.dp(8)
	top := area.Min.Y + (area.Dy()-h)/2
	if top < area.Min.Y {
		top = area.Min.Y
	}
	r := image.Rect(area.Min.X+margin, top, area.Max.X-margin, top+h)
	scrim := image.Rect(0, 0, c.p.w, c.p.h)
	win := &view{class: "android.widget.FrameLayout", pkg: pkg, r: r, kind: "dialog", bg: c.surface(), noNode: false}
	win.scrimR = scrim
	y := r.Min.Y + pad
	if title != "" {
		win.children = append(win.children, &view{class: "android.widget.TextView", pkg: pkg, resID: "android:id/alertTitle", text: title,
			lines: tl, r: image.Rect(r.Min.X+pad, y, r.Max.X-pad, y+len(tl)*tsize*13/10), kind: "text", size: tsize, bold: true, fg: c.textColor()})
		y += len(tl)*tsize*13/10 + c.dp(12)
	}
	if text != "" {
		win.children = append(win.children, &view{class: "android.widget.TextView", pkg: pkg, resID: "android:id/message", text: text,
			lines: bl, r: image.Rect(r.Min.X+pad, y, r.Max.X-pad, y+len(bl)*bsize*14/10), kind: "text", size: bsize, fg: c.mutedColor()})
		y += len(bl)*bsize*14/10 + c.dp(12)
	}
	for i, e := range els {
		win.children = append(win.children, c.element(e, image.Rect(r.Min.X+pad, y, r.Max.X-pad, y+elH[i]), s, fmt.Sprintf("dialog:%s/%d", d.spec.ID, i)))
		y += elH[i]
	}
	for i, e := range corner {
		if !c.shown(e, s) {
			continue
		}
		x := r.Max.X - c.dp(8) - (i+1)*c.dp(48)
		cv := c.element(e, image.Rect(x, r.Min.Y+c.dp(2), x+c.dp(48), r.Min.Y+c.dp(62)), s, fmt.Sprintf("dialog:%s/c%d", d.spec.ID, i))
		win.children = append(win.children, cv)
	}
	if len(d.spec.Buttons) > 0 {
		right := r.Max.X - c.dp(16)
		for i := len(d.spec.Buttons) - 1; i >= 0; i-- {
			e := d.spec.Buttons[i]
			if !c.shown(e, s) {
				continue
			}
			bw := measure(render(e.Text, s), c.dp(15), true) + c.dp(32)
			br := image.Rect(right-bw, y, right, y+c.dp(60))
			bv := c.element(e, br, s, fmt.Sprintf("dialog:%s/b%d", d.spec.ID, i))
			if bv.resID == "" {
				bv.resID = fmt.Sprintf("android:id/button%d", len(d.spec.Buttons)-i)
			}
			bv.style = pick(bv.style, "text")
			win.children = append(win.children, bv)
			right = br.Min.X - c.dp(8)
		}
	}
	return win
}

func (c *layoutCtx) toastView(text string, bottom int) *view {
	size := c.dp(14)
	w := min(measure(text, size, false)+c.dp(32), c.p.w-c.dp(48))
	h := c.dp(44)
	x := (c.p.w - w) / 2
	y := bottom - c.dp(72) - h
	return &view{class: "android.widget.Toast", pkg: c.a.spec.Package, text: text, lines: []string{ellipsize(text, size, false, w-c.dp(24))},
		r: image.Rect(x, y, x+w, y+h), kind: "toast", size: size, fg: white, bg: color.RGBA{50, 50, 54, 235}}
}

// overview shows the recent apps (KEYCODE_APP_SWITCH).
func (p *Phone) overview() {
	p.inOverview = true
	if a := p.apps[p.fg]; a != nil {
		a.focus = ""
	}
	p.changed()
}

func (p *Phone) overviewView(sb, nb int) *view {
	full := image.Rect(0, 0, p.w, p.h)
	ov := &view{class: "android.widget.FrameLayout", pkg: Launcher, resID: Launcher + ":id/overview_panel", r: full, kind: "window",
		bg: color.RGBA{60, 60, 66, 255}}
	y := sb + p.dpf(24)
	cardH := p.dpf(120)
	for i := len(p.recents) - 1; i >= 0 && y+cardH < p.h-nb-p.dpf(80); i-- {
		pkg := p.recents[i]
		label := p.pkgs[pkg].Label
		card := &view{class: "android.widget.FrameLayout", pkg: Launcher, resID: Launcher + ":id/snapshot", desc: label,
			text: label, lines: []string{label}, r: image.Rect(p.dpf(32), y, p.w-p.dpf(32), y+cardH), kind: "card",
			clickable: true, focusable: true, size: p.dpf(18), bold: true, fg: textDark, bg: white}
		card.tap = func() { p.launch(pkg) }
		ov.children = append(ov.children, card)
		y += cardH + p.dpf(16)
	}
	if len(p.recents) == 0 {
		ov.children = append(ov.children, &view{class: "android.widget.TextView", pkg: Launcher, text: "No recent items",
			lines: []string{"No recent items"}, r: image.Rect(0, p.h/2-p.dpf(20), p.w, p.h/2+p.dpf(20)), kind: "text", style: "center",
			size: p.dpf(16), fg: white})
	} else {
		b := &view{class: "android.widget.Button", pkg: Launcher, resID: Launcher + ":id/clear_all", text: "Clear all",
			r: image.Rect(p.w/2-p.dpf(70), p.h-nb-p.dpf(72), p.w/2+p.dpf(70), p.h-nb-p.dpf(24)), kind: "button",
			clickable: true, focusable: true, size: p.dpf(15), bold: true, bg: white, fg: textDark}
		b.tap = func() {
			for _, pkg := range p.recents {
				if a := p.apps[pkg]; a != nil && a.running {
					a.reset()
				}
			}
			p.recents = nil
			p.home()
		}
		ov.children = append(ov.children, b)
	}
	return ov
}
