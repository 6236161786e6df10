package mcp

import (
	"bytes"
	"context"
	"fmt"
	"image/png"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/video/frame"
)

// maxImageSize bounds the maxSize a caller may ask for.
const maxImageSize = 4096

// checkMaxSize refuses a screenshot size out of range.
func checkMaxSize(n int) error {
	if n < 0 || n > maxImageSize {
		return fmt.Errorf("maxSize %d: give 1 to %d pixels, or leave it out for %d", n, maxImageSize, DefaultImageSize)
	}
	return nil
}

// shot is a screenshot as sent to a client.
type shot struct {
	png          []byte
	w, h         int // sent size
	origW, origH int
}

func (s shot) caption(id string) string {
	if s.w == s.origW && s.h == s.origH {
		return fmt.Sprintf("screenshot of %s, %dx%d", id, s.w, s.h)
	}
	return fmt.Sprintf("screenshot of %s, %dx%d scaled from %dx%d: multiply image coordinates by %.4g for device pixels", id, s.w, s.h, s.origW, s.origH, float64(s.origW)/float64(s.w))
}

// screenshot takes a PNG from d and scales it so its longest side is at
// most maxSize pixels (0: DefaultImageSize). It never scales up.
func screenshot(ctx context.Context, d device.Driver, maxSize int) (shot, error) {
	raw, err := d.Screenshot(ctx)
	if err != nil {
		return shot{}, fmt.Errorf("screenshot: %w", err)
	}
	return scalePNG(raw, maxSize)
}

func scalePNG(raw []byte, maxSize int) (shot, error) {
	if maxSize <= 0 {
		maxSize = DefaultImageSize
	}
	src, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return shot{}, fmt.Errorf("screenshot is not a PNG: %w", err)
	}
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	out := shot{png: raw, w: w, h: h, origW: w, origH: h}
	long := max(w, h)
	if long <= maxSize {
		return out, nil
	}
	out.w, out.h = max(1, w*maxSize/long), max(1, h*maxSize/long)
	dst := frame.Scale(nil, frame.RGBA(src), out.w, out.h)
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, dst); err != nil {
		return shot{}, fmt.Errorf("encode screenshot: %w", err)
	}
	out.png = buf.Bytes()
	return out, nil
}
