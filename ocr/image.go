package ocr

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // screenshots may come as JPEG
	_ "image/png"
	"math"

	"golang.org/x/image/draw"
)

// pad is the border added around a cropped region: Tesseract misses text
// that touches the image's edge.
const pad = 12

// input is an image made ready for an engine, with the way back from the
// engine's pixels to the full image's.
type input struct {
	data   []byte          // encoded image the engine reads
	full   image.Rectangle // bounds of the original image
	region image.Rectangle // part of the original that was read
	scale  float64         // engine pixels per original pixel
	offset int             // border added on each side, in engine pixels
}

// prepare decodes the image, crops the region, enlarges it when small,
// pads it, and hands the engine a normalised grey image (see normalize).
func prepare(data []byte, region image.Rectangle, scale float64) (*input, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadImage, err)
	}
	full := image.Rect(0, 0, cfg.Width, cfg.Height)
	if full.Empty() {
		return nil, fmt.Errorf("%w: image is %dx%d", ErrBadImage, cfg.Width, cfg.Height)
	}
	whole := region == (image.Rectangle{})
	if whole {
		region = full
	} else {
		clipped := region.Intersect(full)
		if clipped.Empty() {
			return nil, fmt.Errorf("ocr: region %v lies outside the %dx%d image or is empty", region, cfg.Width, cfg.Height)
		}
		region = clipped
		whole = region == full
	}
	if scale == 0 {
		scale = autoScale(region, whole)
	}
	if scale < 0 || scale > 8 || math.IsNaN(scale) {
		return nil, fmt.Errorf("ocr: scale %v out of range (0 for automatic, up to 8)", scale)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadImage, err)
	}
	w := int(math.Round(float64(region.Dx()) * scale))
	h := int(math.Round(float64(region.Dy()) * scale))
	off := pad
	if whole {
		off = 0 // a screen's edges are bars and margins, not text
	}
	g := normalize(img, region)
	dst := image.NewGray(image.Rect(0, 0, w+2*off, h+2*off))
	bg := g.GrayAt(g.Rect.Min.X, g.Rect.Min.Y)
	if off > 0 {
		draw.Draw(dst, dst.Bounds(), image.NewUniform(bg), image.Point{}, draw.Src)
	}
	inner := image.Rect(off, off, off+w, off+h)
	if scale == 1 {
		draw.Draw(dst, inner, g, g.Rect.Min, draw.Src)
	} else {
		draw.CatmullRom.Scale(dst, inner, g, g.Rect, draw.Src, nil)
	}
	return &input{data: encodePGM(dst), full: full, region: region, scale: scale, offset: off}, nil
}

// normalize turns the region into dark text on white, whatever the
// colours: Tesseract binarises a page with one threshold and misses light
// text on a coloured button or a dark bar. Around every pixel (a 91-pixel
// square) the background is light unless nearly two thirds of the square
// is dark (a button, a bar; a dense Chinese glyph never is); a pixel is
// ink when it stands out from the neighbourhood's mean away from the
// background. Flat fills vanish, so buttons read like any label.
//
// Pixel loops over memory the call owns: not instrumented under -race,
// which made them ten times slower.
//
//go:norace
func normalize(img image.Image, r image.Rectangle) *image.Gray {
	w, h := r.Dx(), r.Dy()
	g := image.NewGray(image.Rect(0, 0, w, h))
	grey(g, img, r)
	const (
		rad    = 45
		margin = 24 // ink stands out from the local mean by about this much
	)
	// Integral images of the grey values and of the dark pixels.
	stride := w + 1
	sum := make([]int32, stride*(h+1))
	dark := make([]int32, stride*(h+1))
	for y := range h {
		var rs, rd int32
		src := g.Pix[y*g.Stride : y*g.Stride+w]
		above, cur := sum[y*stride:], sum[(y+1)*stride:]
		aboveD, curD := dark[y*stride:], dark[(y+1)*stride:]
		for x, v := range src {
			rs += int32(v)
			if v < 128 {
				rd++
			}
			cur[x+1] = above[x+1] + rs
			curD[x+1] = aboveD[x+1] + rd
		}
	}
	out := make([]uint8, len(g.Pix))
	for y := range h {
		y0, y1 := max(y-rad, 0), min(y+rad+1, h)
		for x := range w {
			x0, x1 := max(x-rad, 0), min(x+rad+1, w)
			n := int32((y1 - y0) * (x1 - x0))
			s := sum[y1*stride+x1] - sum[y0*stride+x1] - sum[y1*stride+x0] + sum[y0*stride+x0]
			d := dark[y1*stride+x1] - dark[y0*stride+x1] - dark[y1*stride+x0] + dark[y0*stride+x0]
			v := int32(g.Pix[y*g.Stride+x])
			diff := s/n - v  // darker than around: text on light
			if 20*d > 13*n { // mostly dark: a dense glyph never fills 65% of the window
				diff = v - s/n // lighter than around: text on dark
			}
			// Keep the glyphs' anti-aliased edges as grey: thin CJK
			// strokes vanish when cut to black and white.
			out[y*g.Stride+x] = uint8(255 - min(max((diff-margin/2)*4, 0), 255))
		}
	}
	// Long horizontal rules (a button's outline, a divider, an underline)
	// go: Tesseract skips text it finds boxed in.
	const longRun = 160
	for y := range h {
		row := out[y*g.Stride : y*g.Stride+w]
		for x := 0; x < w; {
			if row[x] >= 128 {
				x++
				continue
			}
			end := x
			for end < w && row[end] < 128 {
				end++
			}
			if end-x >= longRun {
				for i := x; i < end; i++ {
					row[i] = 255
				}
			}
			x = end
		}
	}
	g.Pix = out
	return g
}

// grey writes the luminance of img's region r into g.
//
// Pixel loops over memory the call owns: not instrumented under -race,
// which made them ten times slower.
//
//go:norace
func grey(g *image.Gray, img image.Image, r image.Rectangle) {
	w, h := r.Dx(), r.Dy()
	var pix []uint8
	var stride int
	switch src := img.(type) {
	case *image.RGBA:
		pix, stride = src.Pix[src.PixOffset(r.Min.X, r.Min.Y):], src.Stride
	case *image.NRGBA:
		pix, stride = src.Pix[src.PixOffset(r.Min.X, r.Min.Y):], src.Stride
	default:
		for y := range h {
			for x := range w {
				g.Pix[y*g.Stride+x] = color.GrayModel.Convert(img.At(r.Min.X+x, r.Min.Y+y)).(color.Gray).Y
			}
		}
		return
	}
	for y := range h {
		row := pix[y*stride : y*stride+4*w]
		out := g.Pix[y*g.Stride : y*g.Stride+w]
		for x := range out {
			p := row[4*x : 4*x+3 : 4*x+3]
			out[x] = uint8((299*int(p[0]) + 587*int(p[1]) + 114*int(p[2])) / 1000)
		}
	}
}

// encodePGM writes a binary PGM, which Tesseract's image library reads
// with no decompression (PNG encoding a screen costs more than reading it).
func encodePGM(g *image.Gray) []byte {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	head := fmt.Sprintf("P5\n%d %d\n255\n", w, h)
	out := make([]byte, 0, len(head)+w*h)
	out = append(out, head...)
	for y := range h {
		out = append(out, g.Pix[y*g.Stride:y*g.Stride+w]...)
	}
	return out
}

// autoScale enlarges short regions, whose text is usually a single label
// that Tesseract reads better taller; whole screens are read as they are.
func autoScale(r image.Rectangle, whole bool) float64 {
	switch {
	case whole:
		return 1
	case r.Dy() <= 80:
		return 3
	case r.Dy() <= 200:
		return 2
	default:
		return 1
	}
}

// toFull maps a box in engine pixels back to the original image, clipped
// to the region that was read.
func (in *input) toFull(b image.Rectangle) image.Rectangle {
	conv := func(v, origin int, round func(float64) float64) int {
		return origin + int(round(float64(v-in.offset)/in.scale))
	}
	r := image.Rect(
		conv(b.Min.X, in.region.Min.X, math.Floor), conv(b.Min.Y, in.region.Min.Y, math.Floor),
		conv(b.Max.X, in.region.Min.X, math.Ceil), conv(b.Max.Y, in.region.Min.Y, math.Ceil))
	return r.Intersect(in.region)
}

// mapLines moves every box of lines into full-image coordinates, dropping
// words that fall entirely in the padding.
func (in *input) mapLines(lines []Line) []Line {
	out := lines[:0]
	for _, l := range lines {
		words := l.Words[:0]
		for _, w := range l.Words {
			w.Box = in.toFull(w.Box)
			if !w.Box.Empty() {
				words = append(words, w)
			}
		}
		if len(words) > 0 {
			out = append(out, NewLine(words))
		}
	}
	return out
}
