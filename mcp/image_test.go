package mcp

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

func TestScalePNG(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 150, 300))
	for y := range 300 {
		for x := range 150 {
			src.Set(x, y, color.RGBA{uint8(x), uint8(y), 0, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, src); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		max, w, h int
		caption   string
	}{
		{0, 150, 300, "150x300"}, // under the default: sent as is
		{100, 50, 100, "50x100 scaled from 150x300: multiply image coordinates by 3"},
		{299, 149, 299, "scaled from 150x300"},
		{300, 150, 300, "150x300"},
		{4000, 150, 300, "150x300"}, // never scaled up
	} {
		s, err := scalePNG(buf.Bytes(), tc.max)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(s.png))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != tc.w || b.Dy() != tc.h || s.w != tc.w || s.h != tc.h {
			t.Errorf("scalePNG(max %d) = %v (%dx%d), want %dx%d", tc.max, b, s.w, s.h, tc.w, tc.h)
		}
		if c := s.caption("d"); !strings.Contains(c, tc.caption) {
			t.Errorf("caption %q lacks %q", c, tc.caption)
		}
	}
	if _, err := scalePNG([]byte("GIF89a"), 0); err == nil || !strings.Contains(err.Error(), "not a PNG") {
		t.Errorf("a GIF: %v", err)
	}
}

// BenchmarkScalePNG scales a phone-sized PNG (1080x2400) to the default
// 1024 px: decode, bilinear scale, encode.
func BenchmarkScalePNG(b *testing.B) {
	src := image.NewRGBA(image.Rect(0, 0, 1080, 2400))
	for y := range 2400 {
		for x := range 1080 {
			src.Set(x, y, color.RGBA{uint8(x / 40 * 9), uint8(y / 60 * 7), uint8((x + y) / 100), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, src); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := scalePNG(buf.Bytes(), 0); err != nil {
			b.Fatal(err)
		}
	}
}
