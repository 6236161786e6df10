package scene

import (
	"image"
	"slices"
	"strings"
)

// Why a Scene's tree cannot be trusted alone (Distrust.Reasons).
const (
	// ReasonStale: after an action the screenshot changed clearly but the
	// tree's fingerprint did not; the tree describes a screen that is gone.
	ReasonStale = "stale"
	// ReasonSystemOnly: the tree holds nothing but system windows (games,
	// Flutter and some vendor ROMs).
	ReasonSystemOnly = "system-only"
	// ReasonTextInPixels: a large region has no text nodes but its pixels
	// hold text (a canvas, a WebView the tree does not expose).
	ReasonTextInPixels = "text-in-pixels"
)

// Distrust says why a Scene's tree should be completed by OCR. The zero
// value trusts the tree.
type Distrust struct {
	Reasons []string `json:"reasons,omitempty"`
	// Regions are the large regions without text nodes whose pixels hold
	// text, in the Scene's units; only those need reading when the tree is
	// otherwise sound.
	Regions []Rect `json:"regions,omitempty"`
}

// Any reports whether the tree needs OCR at all.
func (d Distrust) Any() bool { return len(d.Reasons) > 0 }

// WholeScreen reports whether the whole screen must be read: the tree is
// stale or empty, so no part of it can be relied on.
func (d Distrust) WholeScreen() bool {
	return slices.Contains(d.Reasons, ReasonStale) || slices.Contains(d.Reasons, ReasonSystemOnly)
}

// Stale reports whether the tree describes a screen that is gone.
func (d Distrust) Stale() bool { return slices.Contains(d.Reasons, ReasonStale) }

func (d Distrust) String() string {
	if !d.Any() {
		return "trusted"
	}
	return strings.Join(d.Reasons, ", ")
}

// Screen is one observation for Assess: the Scene built from the tree,
// the tree itself when the caller kept it (nil: the Scene stands in for
// it) and the screenshot taken with it (nil when none was taken).
type Screen struct {
	Scene *Scene
	Tree  *Tree
	Image image.Image
}

// Suspects returns the regions whose text the tree may not give: with a
// tree, its blind nodes (see Blind); without, the Scene's uncovered
// regions (see Uncovered), a coarser guess that also flags blank space.
func (sc Screen) Suspects() []Rect {
	if sc.Tree != nil {
		return Blind(sc.Tree)
	}
	return Uncovered(sc.Scene)
}

// Blind returns the large nodes that show something the tree does not
// describe: leaves (no child with bounds) of at least a tenth of the
// screen, without text or description — a canvas, a WebView, a
// SurfaceView, a FlutterView, a big image. Blank space inside a layout
// that has children is not blind: the children say what is there. Only
// the tree is read.
func Blind(t *Tree) []Rect {
	if t == nil || t.Root == nil || t.Width <= 0 || t.Height <= 0 {
		return nil
	}
	screen := Rect{0, 0, t.Width, t.Height}
	var out []Rect
	t.Root.Walk(func(n *Node) bool {
		if !n.HasBounds() {
			return true
		}
		for _, c := range n.Children {
			if c.HasBounds() {
				return true
			}
		}
		b := intersect(n.Bounds, screen)
		if n.Text == "" && n.Desc == "" && b.area()*10 >= screen.area() && !strings.Contains(n.Package, "systemui") {
			out = append(out, b)
		}
		return true
	})
	return out
}

// Assess decides whether cur's tree can be trusted. prev is the screen an
// action was performed on (nil when cur follows no action). The cost is
// in pixels, never OCR: the tree is read first, and pixels only where the
// tree leaves doubt (an unchanged fingerprint after an action, suspect
// regions: see Screen.Suspects); cur.Image may be nil, which skips the
// pixel checks that need it.
func Assess(prev *Screen, cur Screen) Distrust {
	var d Distrust
	s := cur.Scene
	if s.Empty {
		d.Reasons = append(d.Reasons, ReasonSystemOnly)
	}
	if prev != nil && prev.Image != nil && cur.Image != nil && prev.Scene != nil &&
		prev.Scene.Fingerprint() == s.Fingerprint() &&
		Changed(prev.Image, cur.Image, s) >= ChangedClearly {
		d.Reasons = append(d.Reasons, ReasonStale)
	}
	if cur.Image != nil && !d.WholeScreen() {
		for _, r := range cur.Suspects() {
			if TextLike(cur.Image, toPixels(r, s, cur.Image.Bounds())) {
				d.Regions = append(d.Regions, r)
			}
		}
		if len(d.Regions) > 0 {
			d.Reasons = append(d.Reasons, ReasonTextInPixels)
		}
	}
	return d
}

// ChangedClearly is the share of the app's pixels that must differ for a
// screen to count as changed: more than a cursor blink or a ripple, less
// than the text of one new screen.
const ChangedClearly = 0.01

// Changed returns the share (0..1) of the screen's pixels outside the
// system bars that differ clearly between a and b, sampling every 4th
// pixel of every 4th row. Images of different sizes differ entirely.
//
// Pixel loops over memory the call owns: not instrumented under -race,
// which made them ten times slower.
//
//go:norace
func Changed(a, b image.Image, s *Scene) float64 {
	ab, bb := a.Bounds(), b.Bounds()
	if ab.Size() != bb.Size() {
		return 1
	}
	var skip []image.Rectangle
	if s != nil {
		for _, e := range s.Elements {
			if e.System {
				r := toPixels(e.Bounds, s, ab)
				skip = append(skip, image.Rect(ab.Min.X, r.Min.Y, ab.Max.X, r.Max.Y))
			}
		}
	}
	const step = 4
	total, diff := 0, 0
	for y := ab.Min.Y; y < ab.Max.Y; y += step {
		if inBands(skip, y) {
			continue
		}
		for x := ab.Min.X; x < ab.Max.X; x += step {
			total++
			if colorDist(a, b, x, y, bb.Min.X-ab.Min.X, bb.Min.Y-ab.Min.Y) > 60 {
				diff++
			}
		}
	}
	if total == 0 {
		return 0
	}
	return float64(diff) / float64(total)
}

func inBands(bands []image.Rectangle, y int) bool {
	for _, b := range bands {
		if y >= b.Min.Y && y < b.Max.Y {
			return true
		}
	}
	return false
}

// rgbAt reads a pixel's red, green and blue, without an allocation for
// the image types screenshots decode to.
func rgbAt(img image.Image, x, y int) (r, g, b int) {
	switch m := img.(type) {
	case *image.RGBA:
		i := m.PixOffset(x, y)
		return int(m.Pix[i]), int(m.Pix[i+1]), int(m.Pix[i+2])
	case *image.NRGBA:
		i := m.PixOffset(x, y)
		return int(m.Pix[i]), int(m.Pix[i+1]), int(m.Pix[i+2])
	case *image.Gray:
		v := int(m.Pix[m.PixOffset(x, y)])
		return v, v, v
	}
	r32, g32, b32, _ := img.At(x, y).RGBA()
	return int(r32 >> 8), int(g32 >> 8), int(b32 >> 8)
}

func colorDist(a, b image.Image, x, y, dx, dy int) int {
	r1, g1, b1 := rgbAt(a, x, y)
	r2, g2, b2 := rgbAt(b, x+dx, y+dy)
	return abs(r1-r2) + abs(g1-g2) + abs(b1-b2)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// Uncovered returns the large regions of the screen (at least a tenth of
// it, outside the system bars, or where bars usually are when the Scene
// has none) that hold no element with text or
// description and no small element: where the tree says nothing about
// what is drawn. A big element without text (a canvas, a WebView, a list)
// does not cover what is inside it.
func Uncovered(s *Scene) []Rect {
	if s.Width <= 0 || s.Height <= 0 {
		return nil
	}
	const cols, rows = 12, 32
	cw, ch := (s.Width+cols-1)/cols, (s.Height+rows-1)/rows
	var covered [rows][cols]bool
	screen := s.Width * s.Height
	hasSystem := false
	for i := range s.Elements {
		e := &s.Elements[i]
		hasSystem = hasSystem || e.System
		big := e.Bounds.area()*6 > screen
		if !e.System && big && e.Text == "" && e.Desc == "" {
			continue
		}
		b := e.Bounds
		if e.System {
			b.X0, b.X1 = 0, s.Width // a bar spans the screen
		}
		for r := max(b.Y0/ch, 0); r < rows && r*ch < b.Y1; r++ {
			for c := max(b.X0/cw, 0); c < cols && c*cw < b.X1; c++ {
				covered[r][c] = true
			}
		}
	}
	if !hasSystem {
		// A dump of the app window alone (uiautomator's default) has no
		// bars: leave their usual places out rather than read the clock.
		for r := range rows {
			if (r+1)*ch <= s.Height*3/100+ch || r*ch >= s.Height*94/100-ch {
				covered[r] = [cols]bool{true, true, true, true, true, true, true, true, true, true, true, true}
			}
		}
	}
	// Grow rectangles of uncovered cells row by row (largest first), so a
	// canvas below a title reads as one region.
	var out []Rect
	var used [rows][cols]bool
	for r := range rows {
		for c := range cols {
			if covered[r][c] || used[r][c] {
				continue
			}
			c1 := c
			for c1 < cols && !covered[r][c1] && !used[r][c1] {
				c1++
			}
			r1 := r + 1
			for r1 < rows && free(&covered, &used, r1, c, c1) {
				r1++
			}
			for y := r; y < r1; y++ {
				for x := c; x < c1; x++ {
					used[y][x] = true
				}
			}
			rect := Rect{c * cw, r * ch, min(c1*cw, s.Width), min(r1*ch, s.Height)}
			if rect.area()*10 >= screen && r1-r >= 2 {
				out = append(out, rect)
			}
		}
	}
	return out
}

func free(covered, used *[32][12]bool, r, c0, c1 int) bool {
	for c := c0; c < c1; c++ {
		if covered[r][c] || used[r][c] {
			return false
		}
	}
	return true
}

// TextLike reports whether the pixels of r look like they hold text: at
// least one band of rows as tall as small print in which many rows cross
// sharp light-dark edges, the way glyph strokes do. Blank areas, flat
// colours and soft gradients do not; photos with hard edges may, which
// only costs an OCR that finds nothing.
//
// Pixel loops over memory the call owns: not instrumented under -race,
// which made them ten times slower.
//
//go:norace
func TextLike(img image.Image, r image.Rectangle) bool {
	r = r.Intersect(img.Bounds())
	if r.Dx() < 16 || r.Dy() < 8 {
		return false
	}
	minEdges := max(4, r.Dx()/200)
	row := make([]int, r.Dx())
	run := 0
	// Every other row: a line of small print still spans four of them.
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		lumRow(img, r.Min.X, y, row)
		edges := 0
		for x := 1; x < len(row) && edges < minEdges; x++ {
			if d := row[x] - row[x-1]; d > 70 || d < -70 {
				edges++
			}
		}
		if edges >= minEdges {
			run++
			if run >= 4 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// lumRow writes the luminance of len(row) pixels from (x, y).
//
//go:norace
func lumRow(img image.Image, x, y int, row []int) {
	var pix []uint8
	switch m := img.(type) {
	case *image.RGBA:
		pix = m.Pix[m.PixOffset(x, y):]
	case *image.NRGBA:
		pix = m.Pix[m.PixOffset(x, y):]
	default:
		for i := range row {
			row[i] = lum(img, x+i, y)
		}
		return
	}
	for i := range row {
		p := pix[4*i : 4*i+3 : 4*i+3]
		row[i] = (299*int(p[0]) + 587*int(p[1]) + 114*int(p[2])) / 1000
	}
}

func lum(img image.Image, x, y int) int {
	r, g, b := rgbAt(img, x, y)
	return (299*r + 587*g + 114*b) / 1000
}

// toPixels maps a rectangle in the Scene's units to the screenshot's pixels.
func toPixels(r Rect, s *Scene, px image.Rectangle) image.Rectangle {
	if s == nil || s.Width <= 0 || s.Height <= 0 {
		return image.Rect(r.X0, r.Y0, r.X1, r.Y1).Add(px.Min)
	}
	sx := float64(px.Dx()) / float64(s.Width)
	sy := float64(px.Dy()) / float64(s.Height)
	return image.Rect(int(float64(r.X0)*sx), int(float64(r.Y0)*sy),
		int(float64(r.X1)*sx+0.999), int(float64(r.Y1)*sy+0.999)).Add(px.Min)
}

// ToPixels maps a rectangle of a Scene to screenshot pixels of the given
// size (an iPhone's Scene is in points); OCR regions are asked for in
// pixels.
func (s *Scene) ToPixels(r Rect, width, height int) image.Rectangle {
	return toPixels(r, s, image.Rect(0, 0, width, height))
}
