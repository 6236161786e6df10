package sim

import (
	"image"
	"image/color"
	"strings"
)

// renderer draws a screenLayout. Everything is drawn from the same views the
// UI dump is written from.
type renderer struct {
	dst   *image.RGBA // the rows being drawn
	rows  image.RGBA  // the part of dst a view draws in (see view)
	scale float64
	prim  color.RGBA
	dark  bool
	ios   bool
}

// draw draws the screen's rows that dst covers: a whole frame, or a buffer
// of a few rows placed at their rows (a screenshot's band), leaving nothing
// of dst as it was. The pixels drawn are those a whole frame has there:
// views are culled by the screen and their clips as when all of it is
// drawn, and each draws only within dst.
func (p *Phone) draw(dst *image.RGBA, L *screenLayout) {
	if L.off || !coversOpaque(L.app, dst.Bounds()) {
		// The app's window paints every pixel it covers: painting them
		// black first cost a tenth of a screenshot.
		fill(dst, dst.Bounds(), black)
	}
	if L.off {
		return
	}
	screen := image.Rect(0, 0, p.w, p.h)
	rd := p.renderer(dst, L)
	rd.view(screen, L.app)
	if L.dialog != nil {
		dim(dst, L.dialog.scrimR)
		rd.view(screen, L.dialog)
	}
	if L.keyboard != nil {
		rd.keyboard(L.keyboard)
	}
	if L.toast != nil {
		rd.view(screen, L.toast)
	}
	if p.ios {
		rd.iosChrome(dst, L)
		return
	}
	sbBg := color.RGBA{20, 20, 24, 255}
	if !p.locked && !p.inOverview {
		sbBg = darken(rd.prim)
	}
	fill(dst, L.status.r, sbBg)
	rd.view(screen, L.status)
	fill(dst, L.nav.r, color.RGBA{12, 12, 14, 255})
	rd.view(screen, L.nav)
}

func (p *Phone) renderer(dst *image.RGBA, L *screenLayout) *renderer {
	return &renderer{dst: dst, scale: float64(p.density) / 160, prim: p.primary(), dark: L.dark, ios: p.ios}
}

// primary is the colour of the foreground app's theme.
func (p *Phone) primary() color.RGBA {
	if a := p.apps[p.fg]; a != nil && !p.locked && !p.inOverview {
		if c, err := parseColor(a.spec.Theme.Primary); err == nil {
			return c
		}
	}
	return defPrim
}

// coversOpaque reports whether drawing v fills all of r with an opaque
// colour first.
func coversOpaque(v *view, r image.Rectangle) bool {
	return v != nil && (v.kind == "window" || v.kind == "keyguard") && v.bg.A == 255 && r.In(v.r)
}

func (rd *renderer) dp(v float64) int { return int(v*rd.scale + 0.5) }

// view draws v and its children, culled and clipped by clip (the screen
// cut by the clips above v), into rd.dst's rows.
func (rd *renderer) view(clip image.Rectangle, v *view) {
	r := clip.Intersect(rd.dst.Rect)
	if r.Empty() {
		// Nothing of v's subtree can reach rd.dst: every view under v
		// draws within clip.
		return
	}
	rows := rd.dst
	if r != rd.dst.Rect {
		// dst.SubImage(r), without an allocation per view and band.
		rd.rows = image.RGBA{Pix: rd.dst.Pix[rd.dst.PixOffset(r.Min.X, r.Min.Y):], Stride: rd.dst.Stride, Rect: r}
		rows = &rd.rows
	}
	rd.drawSelf(rows, v)
	if len(v.children) == 0 {
		return
	}
	if v.clip != nil {
		if clip = v.clip.Intersect(clip); clip.Empty() {
			return
		}
	}
	for _, c := range v.children {
		if c.r.Overlaps(clip) {
			rd.view(clip, c)
		}
	}
}

func (rd *renderer) fg(v *view) color.RGBA {
	if v.fg.A == 0 {
		if rd.dark {
			return lightText
		}
		return textDark
	}
	return v.fg
}

func (rd *renderer) drawSelf(dst *image.RGBA, v *view) {
	if rd.ios && rd.iosSelf(dst, v) {
		return
	}
	r := v.r
	switch v.kind {
	case "window", "keyguard":
		fill(dst, r, v.bg)
	case "appbar":
		fill(dst, r, v.bg)
	case "text":
		rd.lines(dst, v, v.lines, rd.fg(v))
	case "button":
		rd.button(dst, v)
	case "icon":
		col := rd.fg(v)
		if v.disabled {
			col = textMuted
		}
		rd.centered(dst, first(v.lines), r, v.size, false, col)
	case "navbutton":
		rd.centered(dst, first(v.lines), r, v.size, false, color.RGBA{230, 230, 230, 255})
	case "image":
		fillRound(dst, r, rd.dp(12), lighten(v.bg))
		if len(v.lines) > 0 && first(v.lines) != "" {
			rd.centered(dst, first(v.lines), r, rd.dp(18), true, darken(v.bg))
		}
	case "field":
		rd.field(dst, v)
	case "checkbox", "radio", "switch":
		rd.toggle(dst, v)
	case "tab":
		col := rd.fg(v)
		if v.selected {
			col = v.bg
			if v.style == "bottom" {
				pill := image.Rect(r.Min.X+r.Dx()/2-rd.dp(32), r.Min.Y+rd.dp(12), r.Min.X+r.Dx()/2+rd.dp(32), r.Min.Y+rd.dp(44))
				fillRound(dst, pill, rd.dp(16), lighten(v.bg))
			} else {
				fill(dst, image.Rect(r.Min.X+rd.dp(12), r.Max.Y-rd.dp(3), r.Max.X-rd.dp(12), r.Max.Y), v.bg)
			}
		}
		if v.style == "bottom" {
			rd.centered(dst, v.text, image.Rect(r.Min.X, r.Min.Y+rd.dp(44), r.Max.X, r.Max.Y-rd.dp(6)), v.size, v.selected, col)
			rd.centered(dst, firstRune(v.text), image.Rect(r.Min.X, r.Min.Y+rd.dp(12), r.Max.X, r.Min.Y+rd.dp(44)), rd.dp(16), true, col)
		} else {
			rd.centered(dst, v.text, r, v.size, v.selected, col)
		}
	case "list":
		if v.bg.A != 0 {
			fill(dst, r, v.bg)
		}
	case "listrow":
		fill(dst, image.Rect(r.Min.X+rd.dp(16), r.Max.Y-1, r.Max.X, r.Max.Y), rd.divider())
	case "canvas":
		fill(dst, r, v.bg)
		y := r.Min.Y + rd.dp(20)
		for _, l := range v.lines {
			drawText(dst, l, r.Min.X+rd.dp(16), y+rd.dp(18), rd.dp(18), false, rd.fg(v))
			y += rd.dp(32)
		}
	case "appicon":
		d := rd.dp(56)
		cx := r.Min.X + r.Dx()/2
		disc := image.Rect(cx-d/2, r.Min.Y+rd.dp(8), cx+d/2, r.Min.Y+rd.dp(8)+d)
		fillRound(dst, disc, d/2, v.bg)
		rd.centered(dst, first(v.lines), disc, rd.dp(24), true, white)
		rd.centered(dst, ellipsize(v.text, v.size, false, r.Dx()-rd.dp(4)), image.Rect(r.Min.X, disc.Max.Y+rd.dp(4), r.Max.X, disc.Max.Y+rd.dp(28)), v.size, false, rd.fg(v))
	case "avatar":
		fillRound(dst, r, r.Dx()/2, lighten(v.bg))
		rd.centered(dst, strings.ToUpper(string([]rune(first(v.lines) + " ")[:1])), r, v.size, true, darken(v.bg))
	case "dialog":
		fillRound(dst, r, rd.dp(28), v.bg)
	case "toast", "card":
		fillRound(dst, r, rd.dp(22), v.bg)
		rd.centered(dst, first(v.lines), r, v.size, v.bold, v.fg)
	case "wifi":
		h := r.Dy()
		for i := range 3 {
			bh := h * (i + 1) / 3
			x := r.Min.X + i*r.Dx()/3
			fill(dst, image.Rect(x, r.Max.Y-bh, x+r.Dx()/3-rd.dp(2), r.Max.Y), white)
		}
	}
}

func (rd *renderer) divider() color.RGBA {
	if rd.dark {
		return darkCard
	}
	return divider
}

// lines draws wrapped text: left aligned and top down, or centered /
// vertically middled according to the view's style.
func (rd *renderer) lines(dst *image.RGBA, v *view, lines []string, col color.RGBA) {
	lh := v.size * 135 / 100
	switch v.style {
	case "center":
		y := v.r.Min.Y + (v.r.Dy()-lh*len(lines))/2
		for _, l := range lines {
			rd.centered(dst, l, image.Rect(v.r.Min.X, y, v.r.Max.X, y+lh), v.size, v.bold, col)
			y += lh
		}
		return
	case "middle":
		if len(lines) > 0 {
			drawText(dst, lines[0], v.r.Min.X, v.r.Min.Y+v.r.Dy()/2+v.size*36/100, v.size, v.bold, col)
		}
		return
	}
	y := v.r.Min.Y + rd.dp(6)
	for _, l := range lines {
		drawText(dst, l, v.r.Min.X, y+v.size, v.size, v.bold, col)
		y += lh
	}
}

func (rd *renderer) centered(dst *image.RGBA, s string, r image.Rectangle, size int, bold bool, col color.RGBA) {
	w := measure(s, size, bold)
	drawText(dst, s, r.Min.X+(r.Dx()-w)/2, r.Min.Y+r.Dy()/2+size*36/100, size, bold, col)
}

func (rd *renderer) button(dst *image.RGBA, v *view) {
	r := v.r
	switch v.style {
	case "text", "appbar":
		col := v.bg
		if v.style == "appbar" {
			col = white
		}
		if v.disabled {
			col = textMuted
		}
		rd.centered(dst, v.text, r, v.size, true, col)
		return
	case "outline":
		fillRound(dst, r, r.Dy()/2, v.bg)
		fillRound(dst, r.Inset(rd.dp(1.5)), r.Dy()/2, surface(rd.dark))
		rd.centered(dst, v.text, r, v.size, true, v.bg)
		return
	}
	bg := v.bg
	if v.disabled {
		bg = color.RGBA{200, 200, 204, 255}
	}
	fillRound(dst, r, r.Dy()/2, bg)
	rd.centered(dst, v.text, r, v.size, true, white)
}

func (rd *renderer) field(dst *image.RGBA, v *view) {
	r := v.r
	border := color.RGBA{120, 120, 128, 255}
	width := rd.dp(1)
	if v.focused {
		border, width = v.bg, rd.dp(2)
	}
	fillRound(dst, r, rd.dp(6), border)
	fillRound(dst, r.Inset(width), rd.dp(5), surface(rd.dark))
	col := rd.fg(v)
	if v.hint {
		col = textMuted
	}
	x := r.Min.X + rd.dp(16)
	base := r.Min.Y + r.Dy()/2 + v.size*36/100
	drawText(dst, first(v.lines), x, base, v.size, false, col)
	if v.focused {
		cx := x
		if !v.hint {
			cx += measure(first(v.lines), v.size, false) + rd.dp(1)
		}
		fill(dst, image.Rect(cx, base-v.size, cx+rd.dp(2), base+v.size/4), v.bg)
	}
}

func (rd *renderer) toggle(dst *image.RGBA, v *view) {
	r := v.r
	col := rd.fg(v)
	if v.disabled {
		col = textMuted
	}
	midY := r.Min.Y + r.Dy()/2
	switch v.kind {
	case "switch":
		drawText(dst, v.text, r.Min.X, midY+v.size*36/100, v.size, false, col)
		tw, th := rd.dp(52), rd.dp(32)
		track := image.Rect(r.Max.X-tw, midY-th/2, r.Max.X, midY+th/2)
		knob := rd.dp(24)
		if v.checked {
			fillRound(dst, track, th/2, v.bg)
			fillRound(dst, image.Rect(track.Max.X-knob-rd.dp(4), midY-knob/2, track.Max.X-rd.dp(4), midY+knob/2), knob/2, white)
		} else {
			fillRound(dst, track, th/2, color.RGBA{120, 120, 128, 255})
			fillRound(dst, track.Inset(rd.dp(2)), th/2, color.RGBA{228, 226, 232, 255})
			k := rd.dp(16)
			fillRound(dst, image.Rect(track.Min.X+rd.dp(8), midY-k/2, track.Min.X+rd.dp(8)+k, midY+k/2), k/2, color.RGBA{120, 120, 128, 255})
		}
	default:
		s := rd.dp(20)
		box := image.Rect(r.Min.X+rd.dp(2), midY-s/2, r.Min.X+rd.dp(2)+s, midY+s/2)
		radius := rd.dp(3)
		if v.kind == "radio" {
			radius = s / 2
		}
		if v.checked {
			fillRound(dst, box, radius, v.bg)
			if v.kind == "radio" {
				fillRound(dst, box.Inset(rd.dp(3)), radius, surface(rd.dark))
				fillRound(dst, box.Inset(rd.dp(6)), radius, v.bg)
			} else {
				rd.centered(dst, "✓", box, rd.dp(16), true, white)
			}
		} else {
			fillRound(dst, box, radius, color.RGBA{96, 96, 104, 255})
			fillRound(dst, box.Inset(rd.dp(2)), radius, surface(rd.dark))
		}
		drawText(dst, v.text, box.Max.X+rd.dp(16), midY+v.size*36/100, v.size, false, col)
	}
}

func (rd *renderer) keyboard(k *keyboard) {
	fill(rd.dst, k.r, color.RGBA{232, 234, 237, 255})
	size := rd.dp(20)
	for _, key := range k.keys {
		kr := key.r.Inset(rd.dp(3))
		bg := white
		if key.text == "" {
			bg = color.RGBA{200, 204, 210, 255}
		}
		fillRound(rd.dst, kr, rd.dp(6), bg)
		s := size
		if len(key.label) > 3 {
			s = rd.dp(14)
		}
		rd.centered(rd.dst, key.label, kr, s, false, textDark)
	}
}

func surface(dark bool) color.RGBA {
	if dark {
		return darkBg
	}
	return white
}

func fill(dst *image.RGBA, r image.Rectangle, c color.RGBA) {
	// As draw.Draw with draw.Src and a uniform colour does, without
	// allocating the colour (a screenshot fills per band).
	if r = r.Intersect(dst.Rect); r.Empty() {
		return
	}
	fillRow(dst, r.Min.X, r.Max.X, r.Min.Y, c)
	first := dst.Pix[dst.PixOffset(r.Min.X, r.Min.Y):dst.PixOffset(r.Max.X, r.Min.Y)]
	for y := r.Min.Y + 1; y < r.Max.Y; y++ {
		copy(dst.Pix[dst.PixOffset(r.Min.X, y):], first)
	}
}

// fillRound fills a rounded rectangle row by row (no anti-aliasing: cheap,
// and flat colours keep the PNG small).
func fillRound(dst *image.RGBA, r image.Rectangle, radius int, c color.RGBA) {
	radius = min(radius, r.Dx()/2, r.Dy()/2)
	if radius <= 0 {
		fill(dst, r, c)
		return
	}
	b := dst.Bounds()
	for y := max(r.Min.Y, b.Min.Y); y < min(r.Max.Y, b.Max.Y); y++ {
		inset := 0
		dy := 0
		if y < r.Min.Y+radius {
			dy = r.Min.Y + radius - y
		} else if y >= r.Max.Y-radius {
			dy = y - (r.Max.Y - radius - 1)
		}
		if dy > 0 {
			dx := isqrt(radius*radius - dy*dy)
			inset = radius - dx
		}
		fillRow(dst, r.Min.X+inset, r.Max.X-inset, y, c)
	}
}

// fillRow sets the pixels from x0 to x1 of row y to c, as draw.Draw with
// draw.Src does, without its cost per call (a keyboard is ~5000 rows of
// rounded keys).
func fillRow(dst *image.RGBA, x0, x1, y int, c color.RGBA) {
	x0, x1 = max(x0, dst.Rect.Min.X), min(x1, dst.Rect.Max.X)
	if x0 >= x1 || y < dst.Rect.Min.Y || y >= dst.Rect.Max.Y {
		return
	}
	row := dst.Pix[dst.PixOffset(x0, y):dst.PixOffset(x1, y)]
	row[0], row[1], row[2], row[3] = c.R, c.G, c.B, c.A
	for n := 4; n < len(row); n *= 2 {
		copy(row[n:], row[:n])
	}
}

func isqrt(n int) int {
	if n <= 0 {
		return 0
	}
	x := n
	y := (x + 1) / 2
	for y < x {
		x = y
		y = (x + n/x) / 2
	}
	return x
}

// dim darkens r like a dialog's scrim.
func dim(dst *image.RGBA, r image.Rectangle) {
	r = r.Intersect(dst.Bounds())
	// A table of v*2/5 (in uint8, as the screen was always dimmed): a
	// scrim covers the whole screen of every frame a live preview draws
	// while a dialog is up, and the division was a fifth of its CPU.
	var scrim [256]uint8
	for v := range scrim {
		scrim[v] = uint8(v) * 2 / 5
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := dst.Pix[dst.PixOffset(r.Min.X, y):dst.PixOffset(r.Max.X, y)]
		for i := 0; i+3 < len(row); i += 4 {
			p := row[i : i+3 : i+3]
			p[0], p[1], p[2] = scrim[p[0]], scrim[p[1]], scrim[p[2]]
		}
	}
}

func darken(c color.RGBA) color.RGBA {
	return color.RGBA{uint8(int(c.R) * 3 / 4), uint8(int(c.G) * 3 / 4), uint8(int(c.B) * 3 / 4), 255}
}

func lighten(c color.RGBA) color.RGBA {
	return color.RGBA{uint8(255 - (255-int(c.R))/4), uint8(255 - (255-int(c.G))/4), uint8(255 - (255-int(c.B))/4), 255}
}

func first(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}

func firstRune(s string) string {
	for _, r := range s {
		return string(r)
	}
	return ""
}
