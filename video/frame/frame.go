// Package frame is the project's one image scaler: live preview frames,
// screenshots sent to MCP clients and pictures for models are all scaled
// here (a box average at half size, a phone's usual preview; bilinear
// otherwise). It also converts frames to the planar YUV 4:2:0 that video
// encoders take.
package frame

import (
	"encoding/binary"
	"image"

	"golang.org/x/image/draw"
)

// RGBA returns img's pixels as RGBA: img itself when it is RGBA, a view
// of the same bytes when it is an opaque NRGBA image (a decoded
// screenshot: the two read alike without alpha), a converted copy
// otherwise.
func RGBA(img image.Image) *image.RGBA {
	switch m := img.(type) {
	case *image.RGBA:
		return m
	case *image.NRGBA:
		if m.Opaque() {
			return &image.RGBA{Pix: m.Pix, Stride: m.Stride, Rect: m.Rect}
		}
	}
	dst := image.NewRGBA(img.Bounds())
	draw.Draw(dst, dst.Rect, img, img.Bounds().Min, draw.Src)
	return dst
}

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

const lanes = 0x00ff00ff00ff00ff // every other byte of a uint64

// halve averages each 2×2 block of src into one pixel of dst. Screens are
// opaque, so alpha is set, not averaged. Two pixels of a row are read as
// one uint64 and summed four 16-bit lanes at a time (R and B, then G):
// a live preview halves every frame, so this is its hottest loop.
func halve(dst, src *image.RGBA) {
	w, h := dst.Rect.Dx(), dst.Rect.Dy()
	for y := range h {
		o := src.PixOffset(src.Rect.Min.X, src.Rect.Min.Y+2*y)
		r0 := src.Pix[o : o+8*w]
		r1 := src.Pix[o+src.Stride : o+src.Stride+8*w]
		d := dst.Pix[y*dst.Stride : y*dst.Stride+4*w]
		for x := range w {
			a := binary.LittleEndian.Uint64(r0[8*x:])
			b := binary.LittleEndian.Uint64(r1[8*x:])
			rb := a&lanes + b&lanes // R0 B0 R1 B1 of both rows
			g := a>>8&lanes + b>>8&lanes
			rb = (rb + rb>>32 + 0x0002_0002) >> 2 & 0x00ff_00ff
			g = (g + g>>32 + 2) >> 2 & 0xff
			binary.LittleEndian.PutUint32(d[4*x:], uint32(rb)|uint32(g)<<8|0xff00_0000)
		}
	}
}

// Size is the preview size of a w×h screen: half of it when its long
// side is longer than maxLong, else the screen's own; even, as video
// encoders need. A landscape screen (a rotated phone) gets a landscape
// size.
func Size(w, h, maxLong int) (int, int) {
	if max(w, h) > maxLong {
		w, h = w/2, h/2
	}
	return w &^ 1, h &^ 1
}

// ScaleI420 is I420 of src scaled to w×h, both even: at half size (a
// phone's preview) in one pass over src, with the same bytes as Scale
// then I420, without the scaled image's memory traffic. dst is grown as
// needed.
func ScaleI420(dst []byte, src *image.RGBA, w, h int) []byte {
	b := src.Rect
	if b.Dx()/2 != w || b.Dy()/2 != h {
		return I420(dst, Scale(nil, src, w, h))
	}
	n := w * h
	if cap(dst) < n+n/2 {
		dst = make([]byte, n+n/2)
	}
	dst = dst[:n+n/2]
	yp, up, vp := dst[:n], dst[n:n+n/4], dst[n+n/4:]
	row := func(y int) []byte {
		o := src.PixOffset(b.Min.X, b.Min.Y+y)
		return src.Pix[o : o+8*w]
	}
	for y := 0; y < h; y += 2 {
		s0, s1, s2, s3 := row(2*y), row(2*y+1), row(2*y+2), row(2*y+3)
		y0, y1 := yp[y*w:y*w+w], yp[(y+1)*w:(y+1)*w+w]
		u, v := up[y/2*(w/2):], vp[y/2*(w/2):]
		for x := 0; x < w; x += 2 {
			p00, p01 := average(s0, s1, x), average(s0, s1, x+1)
			p10, p11 := average(s2, s3, x), average(s2, s3, x+1)
			y0[x], y0[x+1], y1[x], y1[x+1] = luma(p00), luma(p01), luma(p10), luma(p11)
			u[x/2], v[x/2] = chroma(uint64(p00)|uint64(p01)<<32, uint64(p10)|uint64(p11)<<32)
		}
	}
	return dst
}

// average is pixel x of the halved rows r0 and r1, packed as in RGBA
// (alpha 0).
func average(r0, r1 []byte, x int) uint32 {
	a := binary.LittleEndian.Uint64(r0[8*x:])
	b := binary.LittleEndian.Uint64(r1[8*x:])
	rb := a&lanes + b&lanes
	g := a>>8&lanes + b>>8&lanes
	rb = (rb + rb>>32 + 0x0002_0002) >> 2 & 0x00ff_00ff
	g = (g + g>>32 + 2) >> 2 & 0xff
	return uint32(rb) | uint32(g)<<8
}

// luma is BT.601's limited-range Y of an RGBA pixel.
func luma(p uint32) uint8 {
	r, g, b := int32(p&0xff), int32(p>>8&0xff), int32(p>>16&0xff)
	return uint8((66*r+129*g+25*b+128)>>8 + 16)
}

// chroma is U and V of a 2×2 block: two pixels of a row in a and the two
// below them in b, as RGBA.
func chroma(a, b uint64) (uint8, uint8) {
	rb := a&lanes + b&lanes
	g := a>>8&lanes + b>>8&lanes
	rb += rb >> 32
	r, bl, gg := int32(rb&0xffff), int32(rb>>16&0xffff), int32((g+g>>32)&0xffff)
	// The sums are of four pixels: the shifts divide by 4 too.
	return uint8((-38*r-74*gg+112*bl+512)>>10 + 128), uint8((112*r-94*gg-18*bl+512)>>10 + 128)
}

// I420 converts src, of even width and height, to planar YUV 4:2:0 (Y,
// then U and V at half size each way; BT.601 limited range, ffmpeg's
// yuv420p) in dst, grown as needed, and returns it.
func I420(dst []byte, src *image.RGBA) []byte {
	w, h := src.Rect.Dx(), src.Rect.Dy()
	n := w * h
	if cap(dst) < n+n/2 {
		dst = make([]byte, n+n/2)
	}
	dst = dst[:n+n/2]
	yp, up, vp := dst[:n], dst[n:n+n/4], dst[n+n/4:]
	for y := 0; y < h; y += 2 {
		o := src.PixOffset(src.Rect.Min.X, src.Rect.Min.Y+y)
		s0 := src.Pix[o : o+4*w]
		s1 := src.Pix[o+src.Stride : o+src.Stride+4*w]
		y0, y1 := yp[y*w:y*w+w], yp[(y+1)*w:(y+1)*w+w]
		u, v := up[y/2*(w/2):], vp[y/2*(w/2):]
		for x := 0; x < w; x += 2 {
			a := binary.LittleEndian.Uint64(s0[4*x:])
			b := binary.LittleEndian.Uint64(s1[4*x:])
			y0[x], y0[x+1] = luma(uint32(a)), luma(uint32(a>>32))
			y1[x], y1[x+1] = luma(uint32(b)), luma(uint32(b>>32))
			u[x/2], v[x/2] = chroma(a, b)
		}
	}
	return dst
}
