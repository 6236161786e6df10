// Package frame scales screen frames for live previews: a box average at
// half size (a phone's usual preview), bilinear otherwise.
package frame

import (
	"image"

	"golang.org/x/image/draw"
)

// Scale returns src scaled to w×h; src itself when it is that size
// already. dst is reused when it is w×h (nil allocates).
func Scale(dst, src *image.RGBA, w, h int) *image.RGBA {
	b := src.Bounds()
	if b.Dx() == w && b.Dy() == h {
		return src
	}
	if dst == nil || dst.Rect.Dx() != w || dst.Rect.Dy() != h {
		dst = image.NewRGBA(image.Rect(0, 0, w, h))
	}
	if b.Dx() == 2*w && b.Dy() == 2*h {
		halve(dst, src)
		return dst
	}
	draw.ApproxBiLinear.Scale(dst, dst.Rect, src, b, draw.Src, nil)
	return dst
}

// halve averages each 2×2 block of src into one pixel of dst. Screens are
// opaque, so alpha is set, not averaged.
func halve(dst, src *image.RGBA) {
	w, h := dst.Rect.Dx(), dst.Rect.Dy()
	for y := range h {
		r0 := src.Pix[src.PixOffset(src.Rect.Min.X, src.Rect.Min.Y+2*y):]
		r1 := r0[src.Stride:]
		d := dst.Pix[y*dst.Stride:]
		for x := range w {
			i := 8 * x
			for c := range 3 {
				sum := uint(r0[i+c]) + uint(r0[i+4+c]) + uint(r1[i+c]) + uint(r1[i+4+c])
				d[4*x+c] = uint8((sum + 2) / 4)
			}
			d[4*x+3] = 255
		}
	}
}

// Size is the preview size of a w×h screen: half of it when it is taller
// than maxHeight, else the screen's own; even, as video encoders need.
func Size(w, h, maxHeight int) (int, int) {
	if h > maxHeight {
		w, h = w/2, h/2
	}
	return w &^ 1, h &^ 1
}
