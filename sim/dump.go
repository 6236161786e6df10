package sim

import (
	"bytes"
	"image"
	"strconv"
)

// DumpUI returns the screen as `uiautomator dump` writes it: the app window
// (or keyguard), a dialog window, a toast, then the system bars.
func (p *Phone) DumpUI() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.staleDump(p.dumpLocked()), nil
}

// dumpLocked writes the current screen's dump; p.mu is held.
func (p *Phone) dumpLocked() []byte {
	L := p.layout()
	var b bytes.Buffer
	b.Grow(16 << 10)
	b.WriteString(`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">`)
	screen := image.Rect(0, 0, p.w, p.h)
	if L.off {
		// With the screen off uiautomator still answers, with the keyguard
		// window that is about to show.
		L = &screenLayout{app: p.keyguard(p.clock.Now(), p.dpf(24), p.dpf(48))}
	}
	index := 0
	for _, v := range []*view{L.app, L.dialog, L.toast, L.status, L.nav} {
		if v == nil {
			continue
		}
		writeNode(&b, v, index, screen)
		index++
	}
	b.WriteString(`</hierarchy>`)
	return b.Bytes()
}

func writeNode(b *bytes.Buffer, v *view, index int, clip image.Rectangle) {
	r := v.r.Intersect(clip)
	if r.Empty() {
		return
	}
	if v.clip != nil {
		clip = clip.Intersect(*v.clip)
	}
	b.WriteString(`<node index="`)
	b.WriteString(strconv.Itoa(index))
	b.WriteString(`" text="`)
	escape(b, v.text)
	b.WriteString(`" resource-id="`)
	escape(b, v.resID)
	b.WriteString(`" class="`)
	b.WriteString(v.class)
	b.WriteString(`" package="`)
	b.WriteString(v.pkg)
	b.WriteString(`" content-desc="`)
	escape(b, v.desc)
	attr := func(name string, on bool) {
		b.WriteString(`" `)
		b.WriteString(name)
		if on {
			b.WriteString(`="true`)
		} else {
			b.WriteString(`="false`)
		}
	}
	attr("checkable", v.checkable)
	attr("checked", v.checked)
	attr("clickable", v.clickable)
	attr("enabled", !v.disabled)
	attr("focusable", v.focusable)
	attr("focused", v.focused)
	attr("scrollable", v.scrollable)
	attr("long-clickable", v.longClickable)
	attr("password", v.password)
	attr("selected", v.selected)
	b.WriteString(`" bounds="[`)
	b.WriteString(strconv.Itoa(r.Min.X))
	b.WriteByte(',')
	b.WriteString(strconv.Itoa(r.Min.Y))
	b.WriteString(`][`)
	b.WriteString(strconv.Itoa(r.Max.X))
	b.WriteByte(',')
	b.WriteString(strconv.Itoa(r.Max.Y))
	b.WriteString(`]"`)
	n := 0
	for _, c := range v.children {
		if !c.noNode && !c.r.Intersect(clip).Empty() {
			n++
		}
	}
	if n == 0 {
		b.WriteString(` />`)
		return
	}
	b.WriteString(`>`)
	i := 0
	for _, c := range v.children {
		if c.noNode || c.r.Intersect(clip).Empty() {
			continue
		}
		writeNode(b, c, i, clip)
		i++
	}
	b.WriteString(`</node>`)
}

// escape writes s as XML attribute text, the way uiautomator does
// (&amp; &lt; &gt; &quot; &apos; and numeric references for controls).
func escape(b *bytes.Buffer, s string) {
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		case '\n':
			b.WriteString("&#10;")
		case '\t':
			b.WriteString("&#9;")
		case '\r':
			b.WriteString("&#13;")
		default:
			if r < 0x20 || r == 0xFFFE || r == 0xFFFF || (r >= 0xD800 && r <= 0xDFFF) {
				continue
			}
			b.WriteRune(r)
		}
	}
}
