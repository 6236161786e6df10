package frame_test

import (
	"image"
	"image/color"
	"testing"

	"github.com/apexagent/apex/video/frame"
)

func TestScale(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for y := range 4 {
		for x := range 4 {
			src.Set(x, y, color.RGBA{uint8(40 * x), uint8(40 * y), 100, 255})
		}
	}
	for _, tc := range []struct {
		name string
		w, h int
	}{{"same", 4, 4}, {"half", 2, 2}, {"other", 3, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			got := frame.Scale(nil, src, tc.w, tc.h)
			if b := got.Bounds(); b.Dx() != tc.w || b.Dy() != tc.h {
				t.Fatalf("scaled to %v, want %dx%d", b, tc.w, tc.h)
			}
			if tc.name == "half" {
				// The top-left 2×2 block: x 0,40 and y 0,40 average to 20.
				if c := got.RGBAAt(0, 0); c != (color.RGBA{20, 20, 100, 255}) {
					t.Errorf("pixel 0,0 = %v, want the block's average", c)
				}
			}
		})
	}
	for _, tc := range []struct{ w, h, wantW, wantH int }{{1080, 2400, 540, 1200}, {720, 1280, 720, 1280}, {1171, 2533, 584, 1266}} {
		if w, h := frame.Size(tc.w, tc.h, 1280); w != tc.wantW || h != tc.wantH {
			t.Errorf("Size(%d, %d) = %d×%d, want %d×%d", tc.w, tc.h, w, h, tc.wantW, tc.wantH)
		}
	}
}
