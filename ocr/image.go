package ocr

import (
	"bytes"
	"fmt"
	"image"
	_ "image/jpeg" // screenshots may come as JPEG
	"image/png"
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

// prepare decodes as little as it must: a whole image without scaling goes
// to the engine as it came; a region is cropped, enlarged and padded.
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
	if whole && scale == 1 {
		return &input{data: data, full: full, region: full, scale: 1}, nil
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadImage, err)
	}
	w := int(math.Round(float64(region.Dx()) * scale))
	h := int(math.Round(float64(region.Dy()) * scale))
	dst := image.NewRGBA(image.Rect(0, 0, w+2*pad, h+2*pad))
	bg := img.At(region.Min.X, region.Min.Y)
	draw.Draw(dst, dst.Bounds(), image.NewUniform(bg), image.Point{}, draw.Src)
	inner := image.Rect(pad, pad, pad+w, pad+h)
	if scale == 1 {
		draw.Draw(dst, inner, img, region.Min, draw.Src)
	} else {
		draw.CatmullRom.Scale(dst, inner, img, region, draw.Src, nil)
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, dst); err != nil {
		return nil, fmt.Errorf("ocr: encode region %v: %w", region, err)
	}
	return &input{data: buf.Bytes(), full: full, region: region, scale: scale, offset: pad}, nil
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
