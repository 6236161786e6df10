package sim

import (
	"encoding/binary"
	"hash/maphash"
	"image"
	"image/color"
	"math/bits"
)

// paintKeys returns, for each band of the frame (bandRows rows, see
// pngfast.go), a hash of everything the renderer paints into the band's
// rows and the row above it, in drawing order: where a band's key is the
// one of the last screenshot, its pixels are too, and the band is neither
// drawn nor compressed again. It follows draw (render.go) step by step.
//
// Each view counts in the rows its drawing can reach (paintRows), cut by
// the clips above it; a view the renderer skips (outside its parent's
// clip) counts nowhere. TestScreenshotDamage checks that no view of the
// built-in apps draws outside its rows.
func (p *Phone) paintKeys(L *screenLayout) []uint64 {
	return (&painter{p: p}).keysOf(L)
}

func (pk *painter) keysOf(L *screenLayout) []uint64 {
	p := pk.p
	pk.keys = make([]uint64, (p.h+bandRows-1)/bandRows)
	frame := image.Rect(0, 0, p.w, p.h)
	var g maphash.Hash
	g.SetSeed(hashSeed)
	pk.ints(&g, p.w, p.h, p.density, flag(L.off), flag(L.dark), flag(p.ios), flag(p.locked), flag(p.inOverview))
	g.WriteString(p.fg)
	pk.colors(&g, p.primary())
	pk.add(frame, g.Sum64())
	if L.off {
		return pk.keys
	}
	pk.tree(L.app, frame)
	if L.dialog != nil {
		var h maphash.Hash
		h.SetSeed(hashSeed)
		h.WriteString("scrim")
		pk.rect(&h, L.dialog.scrimR)
		pk.add(L.dialog.scrimR, h.Sum64())
		pk.tree(L.dialog, frame)
	}
	if k := L.keyboard; k != nil {
		var h maphash.Hash
		h.SetSeed(hashSeed)
		pk.rect(&h, k.r)
		for _, key := range k.keys {
			pk.rect(&h, key.r)
			h.WriteString(key.label)
			h.WriteByte(0)
			h.WriteString(key.text)
			h.WriteByte(0)
		}
		pk.add(k.r, h.Sum64())
	}
	if L.toast != nil {
		pk.tree(L.toast, frame)
	}
	if p.ios {
		// iosChrome: the status bar (light over the wallpaper or in the
		// dark, grey behind a dialog) and the home indicator.
		var h maphash.Hash
		h.SetSeed(hashSeed)
		light := L.app != nil && L.app.kind == "wallpaper" || L.dark
		pk.ints(&h, flag(light), flag(L.dialog != nil), L.status.size)
		pk.rect(&h, L.status.r)
		pk.rect(&h, L.nav.r)
		h.WriteString(L.status.text)
		pk.add(pk.grow(L.status.r, L.status.size), h.Sum64())
		pk.add(L.nav.r, h.Sum64())
		return pk.keys
	}
	pk.tree(L.status, frame)
	pk.tree(L.nav, frame)
	return pk.keys
}

// painter gathers paintKeys.
type painter struct {
	p    *Phone
	keys []uint64
	// visit, when set, sees each view counted, with the clip it is drawn
	// in (TestPaintRows).
	visit func(v *view, clip image.Rectangle)
}

// add mixes h into the keys of the bands whose rows (and the row above)
// meet r's rows.
func (pk *painter) add(r image.Rectangle, h uint64) {
	if r.Empty() {
		return
	}
	b0 := max(r.Min.Y, 0) / bandRows
	b1 := min(max(r.Max.Y, 0)/bandRows, len(pk.keys)-1)
	for b := b0; b <= b1; b++ {
		pk.keys[b] = (bits.RotateLeft64(pk.keys[b], 17) ^ h) * 0x9e3779b97f4a7c15
	}
}

// tree adds v and the views under it, as rd.view draws them within clip.
func (pk *painter) tree(v *view, clip image.Rectangle) {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	h.WriteString(v.kind)
	h.WriteByte(0)
	h.WriteString(v.style)
	h.WriteByte(0)
	h.WriteString(v.text)
	h.WriteByte(0)
	for _, l := range v.lines {
		h.WriteString(l)
		h.WriteByte(0)
	}
	pk.rect(&h, v.r)
	// The clip matters only where v draws: a window's content growing
	// when the keyboard goes is no change for the views above it.
	rows := pk.paintRows(v)
	pk.rect(&h, image.Rect(clip.Min.X, max(clip.Min.Y, rows.Min.Y), clip.Max.X, min(clip.Max.Y, rows.Max.Y)))
	pk.ints(&h, len(v.lines), v.size, flag(v.bold), flag(v.checked), flag(v.focused), flag(v.selected), flag(v.disabled), flag(v.hint))
	pk.colors(&h, v.fg, v.bg)
	pk.add(rows.Intersect(clip), h.Sum64())
	if pk.visit != nil {
		pk.visit(v, clip)
	}
	if len(v.children) == 0 {
		return
	}
	if v.clip != nil {
		clip = v.clip.Intersect(clip)
		if clip.Empty() {
			return
		}
	}
	for _, c := range v.children {
		if c.r.Overlaps(clip) {
			pk.tree(c, clip)
		}
	}
}

// paintRows bounds where drawing v (drawSelf) can reach: its rectangle,
// with room above and below for text and shapes centred on a line (a
// switch's track, an icon's glyph) and the lines of wrapped text that do
// not fit.
func (pk *painter) paintRows(v *view) image.Rectangle {
	r := pk.grow(v.r, v.size)
	if n := len(v.lines); n > 1 {
		m, block := pk.margin(v.size), n*v.size*135/100
		r.Min.Y = min(r.Min.Y, v.r.Min.Y+(v.r.Dy()-block)/2-m) // centred
		r.Max.Y = max(r.Max.Y, v.r.Min.Y+pk.p.dpf(6)+block+m)  // top down
	}
	return r
}

// grow widens r by the margin for text of size px.
func (pk *painter) grow(r image.Rectangle, size int) image.Rectangle {
	m := pk.margin(size)
	return image.Rect(r.Min.X, r.Min.Y-m, r.Max.X, r.Max.Y+m)
}

// margin is how far past its rectangle a view's drawing may reach: a
// glyph's height (the largest the renderer draws inside a view is 32 dp,
// the iPhone's back chevron) and 8 dp.
func (pk *painter) margin(size int) int {
	return max(size, pk.p.dpf(32)) + pk.p.dpf(8)
}

func (pk *painter) rect(h *maphash.Hash, r image.Rectangle) {
	pk.ints(h, r.Min.X, r.Min.Y, r.Max.X, r.Max.Y)
}

func (pk *painter) colors(h *maphash.Hash, cs ...color.RGBA) {
	for _, c := range cs {
		h.Write([]byte{c.R, c.G, c.B, c.A})
	}
}

func (pk *painter) ints(h *maphash.Hash, vs ...int) {
	var b [8]byte
	for _, v := range vs {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
}

func flag(on bool) int {
	if on {
		return 1
	}
	return 0
}
