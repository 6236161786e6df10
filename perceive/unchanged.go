package perceive

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"image"
)

// Pixel hash grid: cells across and down the screenshot below the status
// bar. A difference hash compares each cell's mean luminance with its
// right neighbour's, so a uniform change of brightness keeps the hash and
// anything drawn differently (a badge, a picture, a canvas the tree does
// not describe) changes it.
const (
	hashCols = 16
	hashRows = 32
	// lumaMargin is how much brighter a cell must be than its neighbour
	// to set its bit: flat areas (equal neighbours) give stable zeros,
	// whatever the rounding of their means.
	lumaMargin = 1
)

// PixelHash is a perceptual hash of s's screenshot outside the status bar
// (whose clock and icons change on their own): hex of hashRows × hashCols
// bits. It needs the screenshot (Perceiver.Shoot).
func (s *Screen) PixelHash() (string, error) {
	if s.PNG == nil {
		return "", fmt.Errorf("pixel hash: the screen has no screenshot")
	}
	img, _, err := image.Decode(bytes.NewReader(s.PNG))
	if err != nil {
		return "", fmt.Errorf("pixel hash: decode the screenshot: %w", err)
	}
	b := img.Bounds()
	top := b.Min.Y + statusBarRows(s, b.Dy())
	if top >= b.Max.Y-hashRows {
		top = b.Min.Y
	}
	var grid [hashRows][hashCols + 1]float64
	cw, ch := float64(b.Dx())/(hashCols+1), float64(b.Max.Y-top)/hashRows
	for r := range hashRows {
		y0, y1 := top+int(float64(r)*ch), top+int(float64(r+1)*ch)
		for c := range hashCols + 1 {
			x0, x1 := b.Min.X+int(float64(c)*cw), b.Min.X+int(float64(c+1)*cw)
			grid[r][c] = meanLuma(img, x0, y0, max(x1, x0+1), max(y1, y0+1))
		}
	}
	bits := make([]byte, hashRows*hashCols/8)
	for r := range hashRows {
		for c := range hashCols {
			if grid[r][c] > grid[r][c+1]+lumaMargin {
				i := r*hashCols + c
				bits[i/8] |= 1 << (i % 8)
			}
		}
	}
	return hex.EncodeToString(bits), nil
}

// statusBarRows is how many pixel rows of an image h rows high the status
// bar takes: the bottom of the system-bar elements in the top tenth of the
// screen, scaled from Scene units to pixels; a source without them (an
// app window's dump) leaves out defaultStatusBar of the height.
func statusBarRows(s *Screen, h int) int {
	sc := s.Tree
	if sc == nil {
		sc = s.Scene
	}
	if sc == nil || sc.Height <= 0 {
		return int(float64(h) * defaultStatusBar)
	}
	bottom := 0
	for _, e := range sc.Elements {
		if e.System && e.Bounds.Y0 < sc.Height/10 {
			bottom = max(bottom, e.Bounds.Y1)
		}
	}
	if bottom == 0 {
		return int(float64(h) * defaultStatusBar)
	}
	return bottom * h / sc.Height
}

// defaultStatusBar is the share of the screen's height a status bar takes
// at most (Android's 24 dp are ~3 %, an iPhone's ~6 %).
const defaultStatusBar = 0.06

// meanLuma is the mean luminance (0–255) of the rectangle, every other
// pixel in each direction.
func meanLuma(img image.Image, x0, y0, x1, y1 int) float64 {
	var sum, n float64
	if rgba, ok := img.(*image.NRGBA); ok {
		for y := y0; y < y1; y += 2 {
			row := rgba.Pix[(y-rgba.Rect.Min.Y)*rgba.Stride:]
			for x := x0; x < x1; x += 2 {
				p := row[(x-rgba.Rect.Min.X)*4:]
				sum += luma(uint32(p[0]), uint32(p[1]), uint32(p[2]))
				n++
			}
		}
		return sum / max(n, 1)
	}
	for y := y0; y < y1; y += 2 {
		for x := x0; x < x1; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			sum += luma(r>>8, g>>8, b>>8)
			n++
		}
	}
	return sum / max(n, 1)
}

// luma is the luminance of an 8-bit colour, in whole steps, so every
// image type gives the same value.
func luma(r, g, b uint32) float64 { return float64((299*r + 587*g + 114*b) / 1000) }

// Unchanged reports whether after shows the screen before showed in every
// respect an action's effect could show in: the UI tree (elements, texts
// of fields, checked and focused states, the soft keyboard: the tree's
// fingerprint) and the pixels outside the status bar (PixelHash). Both
// screens need screenshots. The evidence says what differed, or what was
// compared; a screen whose pixels cannot be read is never unchanged.
func Unchanged(before, after *Screen) (bool, string) {
	if before == nil || after == nil {
		return false, "no screen to compare"
	}
	if before.FP != after.FP {
		return false, fmt.Sprintf("the UI tree changed (fingerprint %s → %s)", short(before.FP), short(after.FP))
	}
	hb, err := before.PixelHash()
	if err != nil {
		return false, "before: " + err.Error()
	}
	ha, err := after.PixelHash()
	if err != nil {
		return false, "after: " + err.Error()
	}
	if hb != ha {
		return false, fmt.Sprintf("the UI tree is the same (fingerprint %s) but the pixels outside the status bar changed (hash %s → %s)", short(before.FP), short(hb), short(ha))
	}
	return true, fmt.Sprintf("the UI tree (fingerprint %s: elements, field texts, checked and focused states, keyboard) and the pixels outside the status bar (hash %s) are the same", short(before.FP), short(hb))
}

func short(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}
