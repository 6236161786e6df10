package llm

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"
)

// TestPicture pins the pictures models get: scaled down to at most
// MaxImageSide and MaxImageTokens, never up, JPEG, and counted by
// ImageTokens and MessageTokens.
func TestPicture(t *testing.T) {
	for _, tt := range []struct {
		name       string
		w, h       int
		wantW      int
		wantH      int
		wantTokens int
	}{
		{"phone screenshot", 1080, 2400, 460, 1024, 629},
		{"tablet: the token bound decides", 2048, 1536, 1000, 750, 1000},
		{"small crop kept as it is", 300, 120, 300, 120, 85},
		{"iPhone", 1170, 2532, 473, 1024, 646},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := image.NewRGBA(image.Rect(0, 0, tt.w, tt.h))
			src.Set(tt.w/2, tt.h/2, color.RGBA{255, 0, 0, 255})
			out, err := Picture(src)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("not a JPEG: %v", err)
			}
			if cfg.Width != tt.wantW || cfg.Height != tt.wantH {
				t.Errorf("%dx%d, want %dx%d", cfg.Width, cfg.Height, tt.wantW, tt.wantH)
			}
			if got := ImageTokens(out); got != tt.wantTokens || got > MaxImageTokens {
				t.Errorf("ImageTokens = %d, want %d (at most %d)", got, tt.wantTokens, MaxImageTokens)
			}
			text := []Message{User("Is the dot red?")}
			with := []Message{User("Is the dot red?", out)}
			if d := MessageTokens(with) - MessageTokens(text); d != tt.wantTokens {
				t.Errorf("the image adds %d tokens to MessageTokens, want %d", d, tt.wantTokens)
			}
		})
	}
	var p bytes.Buffer
	if err := png.Encode(&p, image.NewGray(image.Rect(0, 0, 1500, 1500))); err != nil {
		t.Fatal(err)
	}
	if got := ImageTokens(p.Bytes()); got != 3000 {
		t.Errorf("ImageTokens of a 1500x1500 PNG = %d, want 3000", got)
	}
	if got := ImageTokens([]byte("not an image")); got != MaxImageTokens {
		t.Errorf("ImageTokens of garbage = %d, want %d", got, MaxImageTokens)
	}
	if _, err := Picture(image.NewRGBA(image.Rect(0, 0, 0, 10))); err == nil {
		t.Error("an empty picture encoded")
	}
}
