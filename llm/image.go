package llm

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"math"

	_ "image/png" // ImageTokens reads PNG sizes

	"github.com/apexagent/apex/video/frame"
)

// Pictures for models: a screenshot is sent downscaled and as JPEG, so it
// costs a bounded, known number of prompt tokens.
const (
	// MaxImageSide is the longest side, in pixels, of a Picture.
	MaxImageSide = 1024
	// MaxImageTokens is the most a Picture costs by ImageTokens.
	MaxImageTokens = 1000
	// minImageTokens is what any image costs: OpenAI bills 85 tokens for
	// an image however small.
	minImageTokens = 85
	// pixelsPerToken is Anthropic's rate (tokens = width×height/750);
	// OpenAI's tiles cost less at these sizes, so the estimate errs high.
	pixelsPerToken = 750
)

// Picture scales img down (never up) until its longest side is at most
// MaxImageSide and it costs at most MaxImageTokens, and encodes it as
// JPEG.
func Picture(img image.Image) ([]byte, error) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 {
		return nil, fmt.Errorf("llm: picture of %dx%d pixels: nothing to send", w, h)
	}
	scale := math.Min(1, float64(MaxImageSide)/float64(max(w, h)))
	if area := float64(w) * float64(h) * scale * scale; area > MaxImageTokens*pixelsPerToken {
		scale *= math.Sqrt(MaxImageTokens * pixelsPerToken / area)
	}
	if scale < 1 {
		nw, nh := max(1, int(float64(w)*scale)), max(1, int(float64(h)*scale))
		img = frame.Scale(nil, frame.RGBA(img), nw, nh)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
		return nil, fmt.Errorf("llm: encode picture: %w", err)
	}
	return buf.Bytes(), nil
}

// ImageTokens estimates the prompt tokens an encoded PNG or JPEG image
// costs a model: width×height/750, at least 85. An image whose size cannot
// be read counts as MaxImageTokens.
func ImageTokens(img []byte) int {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		return MaxImageTokens
	}
	return max(minImageTokens, (cfg.Width*cfg.Height+pixelsPerToken-1)/pixelsPerToken)
}
