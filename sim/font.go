package sim

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// CJKFontPath is where Debian's fonts-noto-cjk puts the CJK collection.
// Without it, CJK text is drawn as boxes (the tree still carries the text).
const CJKFontPath = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"

// fontSet holds the parsed fonts, shared by every phone in the process.
type fontSet struct {
	regular, bold *opentype.Font
	cjk           *opentype.Font // nil when not installed
}

var loadFonts = sync.OnceValue(func() *fontSet {
	fs := &fontSet{}
	fs.regular, _ = opentype.Parse(goregular.TTF)
	fs.bold, _ = opentype.Parse(gobold.TTF)
	fs.cjk = loadCJK(CJKFontPath)
	return fs
})

func loadCJK(path string) *opentype.Font {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	coll, err := opentype.ParseCollection(data)
	if err != nil {
		return nil
	}
	var first *opentype.Font
	for i := range coll.NumFonts() {
		f, err := coll.Font(i)
		if err != nil {
			continue
		}
		if first == nil {
			first = f
		}
		// Prefer the Simplified Chinese cut for the Chinese app.
		if name, err := f.Name(nil, sfnt.NameIDFamily); err == nil && strings.HasSuffix(name, " SC") {
			return f
		}
	}
	return first
}

// CJKAvailable reports whether CJK glyphs can be drawn.
func CJKAvailable() bool { return loadFonts().cjk != nil }

type faceKey struct {
	font *opentype.Font
	size int
}

type glyphKey struct {
	bold bool
	size int
	r    rune
}

// glyph is a rasterised rune: an alpha mask placed at off from the pen
// position on the baseline.
type glyph struct {
	mask *image.Alpha
	off  image.Point
	adv  int
}

// glyphCache rasterises each (font, size, rune) once per process. Faces are
// not safe for concurrent use, so all rasterising happens under mu; drawing
// cached masks needs no lock.
type glyphCache struct {
	mu     sync.Mutex
	faces  map[faceKey]font.Face
	glyphs map[glyphKey]*glyph
	buf    sfnt.Buffer
}

var glyphs = &glyphCache{faces: map[faceKey]font.Face{}, glyphs: map[glyphKey]*glyph{}}

func (c *glyphCache) face(f *opentype.Font, size int) font.Face {
	k := faceKey{f, size}
	if fc, ok := c.faces[k]; ok {
		return fc
	}
	fc, err := opentype.NewFace(f, &opentype.FaceOptions{Size: float64(size), DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return nil
	}
	c.faces[k] = fc
	return fc
}

func (c *glyphCache) get(r rune, size int, bold bool) *glyph {
	k := glyphKey{bold, size, r}
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.glyphs[k]; ok {
		return g
	}
	fs := loadFonts()
	f := fs.regular
	if bold {
		f = fs.bold
	}
	if idx, err := f.GlyphIndex(&c.buf, r); err != nil || idx == 0 {
		f = nil
		if fs.cjk != nil {
			if idx, err := fs.cjk.GlyphIndex(&c.buf, r); err == nil && idx != 0 {
				f = fs.cjk
			}
		}
	}
	g := &glyph{}
	if f == nil {
		g = shapeGlyph(r, size)
	} else if fc := c.face(f, size); fc != nil {
		dr, mask, mp, adv, ok := fc.Glyph(fixed.Point26_6{}, r)
		g.adv = adv.Round()
		if ok && !dr.Empty() {
			a := image.NewAlpha(image.Rect(0, 0, dr.Dx(), dr.Dy()))
			draw.Draw(a, a.Bounds(), mask, mp, draw.Src)
			g.mask = a
			g.off = dr.Min
		}
	}
	c.glyphs[k] = g
	return g
}

// shapeGlyph draws the symbols apps use that the Go fonts lack (★ and ☆ in
// ratings) when no fallback font has them; other runes are tofu.
func shapeGlyph(r rune, size int) *glyph {
	if r != '★' && r != '☆' {
		return tofu(size)
	}
	w := size * 8 / 10
	star := func(z *vector.Rasterizer, scale float64, reverse bool) {
		cx, cy, outer := float64(w)/2, float64(w)/2+float64(w)*0.04, float64(w)/2*scale
		var pts [][2]float32
		for i := range 10 {
			rad := outer
			if i%2 == 1 {
				rad = outer * 0.4
			}
			a := math.Pi/2 + float64(i)*math.Pi/5
			pts = append(pts, [2]float32{float32(cx + rad*math.Cos(a)), float32(cy - rad*math.Sin(a))})
		}
		if reverse {
			slices.Reverse(pts)
		}
		z.MoveTo(pts[0][0], pts[0][1])
		for _, p := range pts[1:] {
			z.LineTo(p[0], p[1])
		}
		z.ClosePath()
	}
	z := vector.NewRasterizer(w, w)
	star(z, 1, false)
	if r == '☆' {
		star(z, 0.72, true) // the hole: the opposite winding cancels the fill
	}
	a := image.NewAlpha(image.Rect(0, 0, w, w))
	z.Draw(a, a.Bounds(), image.Opaque, image.Point{})
	return &glyph{mask: a, off: image.Pt(size/10, -w+size/12), adv: w + size/5}
}

// tofu is the box drawn for a rune no installed font has.
func tofu(size int) *glyph {
	w, h := size*6/10, size*7/10
	a := image.NewAlpha(image.Rect(0, 0, w, h))
	for x := range w {
		a.SetAlpha(x, 0, color.Alpha{255})
		a.SetAlpha(x, h-1, color.Alpha{255})
	}
	for y := range h {
		a.SetAlpha(0, y, color.Alpha{255})
		a.SetAlpha(w-1, y, color.Alpha{255})
	}
	return &glyph{mask: a, off: image.Pt(1, -h), adv: w + 2}
}

// measure returns the width of s in pixels.
func measure(s string, size int, bold bool) int {
	w := 0
	for _, r := range s {
		w += glyphs.get(r, size, bold).adv
	}
	return w
}

// drawText draws s with its baseline at y, starting at x.
func drawText(dst *image.RGBA, s string, x, y, size int, bold bool, c color.RGBA) {
	clip := dst.Bounds()
	// No glyph reaches 2 sizes above its baseline or one below (tofu and
	// the drawn stars are a size high): a line outside dst's rows (most
	// lines, when a screenshot draws a band of rows) looks up no glyph.
	if y-2*size >= clip.Max.Y || y+size <= clip.Min.Y {
		return
	}
	var src *image.Uniform
	for _, r := range s {
		g := glyphs.get(r, size, bold)
		if g.mask != nil {
			b := g.mask.Bounds().Add(image.Pt(x, y).Add(g.off))
			if b.Overlaps(clip) {
				if src == nil {
					src = image.NewUniform(c)
				}
				draw.DrawMask(dst, b, src, image.Point{}, g.mask, image.Point{}, draw.Over)
			}
		}
		x += g.adv
		if x > clip.Max.X {
			return
		}
	}
}

// wrap breaks s into lines no wider than width: at spaces for Latin text,
// anywhere between CJK characters.
func wrap(s string, size int, bold bool, width int, maxLines int) []string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line, lineW := "", 0
		for _, word := range splitWords(para) {
			ww := measure(word, size, bold)
			if line != "" && lineW+ww > width {
				lines = append(lines, strings.TrimRight(line, " "))
				line, lineW = "", 0
				word = strings.TrimLeft(word, " ")
				ww = measure(word, size, bold)
			}
			line += word
			lineW += ww
		}
		lines = append(lines, strings.TrimRight(line, " "))
	}
	if maxLines > 0 && len(lines) > maxLines {
		lines = lines[:maxLines]
		lines[maxLines-1] = ellipsize(lines[maxLines-1]+"…", size, bold, width)
	}
	return lines
}

// splitWords keeps a word's trailing space with it and makes each CJK rune
// its own word.
func splitWords(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		switch {
		case r >= 0x2E80:
			if i > start {
				out = append(out, s[start:i])
			}
			out = append(out, string(r))
			start = i + len(string(r))
		case r == ' ':
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func ellipsize(s string, size int, bold bool, width int) string {
	if measure(s, size, bold) <= width {
		return s
	}
	rs := []rune(strings.TrimSuffix(s, "…"))
	for len(rs) > 0 {
		rs = rs[:len(rs)-1]
		t := string(rs) + "…"
		if measure(t, size, bold) <= width {
			return t
		}
	}
	return ""
}
