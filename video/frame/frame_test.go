package frame_test

import (
	"image"
	"image/color"
	"math/rand/v2"
	"testing"

	"github.com/apexagent/apex/video/frame"
)

// noise is a w×h opaque image of random pixels.
func noise(w, h int) *image.RGBA {
	r := rand.New(rand.NewPCG(1, 2))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.IntN(256))
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	return img
}

func TestScale(t *testing.T) {
	src := noise(6, 4)
	for _, tc := range []struct {
		name string
		w, h int
	}{{"same", 6, 4}, {"half", 3, 2}, {"other", 4, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			got := frame.Scale(nil, src, tc.w, tc.h)
			if b := got.Bounds(); b.Dx() != tc.w || b.Dy() != tc.h {
				t.Fatalf("scaled to %v, want %dx%d", b, tc.w, tc.h)
			}
			if tc.name != "half" {
				return
			}
			for y := range tc.h {
				for x := range tc.w {
					var want [3]int
					for _, p := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
						c := src.RGBAAt(2*x+p[0], 2*y+p[1])
						want[0], want[1], want[2] = want[0]+int(c.R), want[1]+int(c.G), want[2]+int(c.B)
					}
					w := color.RGBA{uint8((want[0] + 2) / 4), uint8((want[1] + 2) / 4), uint8((want[2] + 2) / 4), 255}
					if c := got.RGBAAt(x, y); c != w {
						t.Fatalf("pixel %d,%d = %v, want the block's average %v", x, y, c, w)
					}
				}
			}
		})
	}
}

// TestScaleSubImage halves a part of a larger image (its stride is not
// its width).
func TestScaleSubImage(t *testing.T) {
	big := noise(10, 8)
	sub := big.SubImage(image.Rect(2, 2, 6, 6)).(*image.RGBA)
	got := frame.Scale(nil, sub, 2, 2)
	whole := frame.Scale(nil, big, 5, 4)
	for y := range 2 {
		for x := range 2 {
			if g, w := got.RGBAAt(x, y), whole.RGBAAt(1+x, 1+y); g != w {
				t.Errorf("pixel %d,%d of the halved sub-image = %v, the whole image's block = %v", x, y, g, w)
			}
		}
	}
}

func TestSize(t *testing.T) {
	for _, tc := range []struct{ w, h, wantW, wantH int }{
		{1080, 2400, 540, 1200},
		{2400, 1080, 1200, 540}, // a rotated phone stays landscape
		{720, 1280, 720, 1280},
		{1171, 2533, 584, 1266},
	} {
		if w, h := frame.Size(tc.w, tc.h, 1280); w != tc.wantW || h != tc.wantH {
			t.Errorf("Size(%d, %d) = %d×%d, want %d×%d", tc.w, tc.h, w, h, tc.wantW, tc.wantH)
		}
	}
}

// TestI420 checks the planes against BT.601's formulas, pixel by pixel.
func TestI420(t *testing.T) {
	for _, tc := range []struct {
		name string
		img  *image.RGBA
	}{
		{"noise", noise(8, 6)},
		{"sub-image", noise(12, 10).SubImage(image.Rect(2, 2, 10, 8)).(*image.RGBA)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := tc.img
			b := img.Rect
			w, h := b.Dx(), b.Dy()
			got := frame.I420(nil, img)
			if len(got) != w*h*3/2 {
				t.Fatalf("%d bytes, want %d", len(got), w*h*3/2)
			}
			near := func(what string, x, y int, got uint8, want float64) {
				if d := float64(got) - want; d > 1 || d < -1 {
					t.Errorf("%s at %d,%d = %d, want %.1f", what, x, y, got, want)
				}
			}
			for y := range h {
				for x := range w {
					c := img.RGBAAt(b.Min.X+x, b.Min.Y+y)
					near("Y", x, y, got[y*w+x], 16+(65.738*float64(c.R)+129.057*float64(c.G)+25.064*float64(c.B))/256)
				}
			}
			for y := range h / 2 {
				for x := range w / 2 {
					var r, g, bl float64
					for _, p := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
						c := img.RGBAAt(b.Min.X+2*x+p[0], b.Min.Y+2*y+p[1])
						r, g, bl = r+float64(c.R)/4, g+float64(c.G)/4, bl+float64(c.B)/4
					}
					near("U", x, y, got[w*h+y*w/2+x], 128+(-37.945*r-74.494*g+112.439*bl)/256)
					near("V", x, y, got[w*h*5/4+y*w/2+x], 128+(112.439*r-94.154*g-18.285*bl)/256)
				}
			}
		})
	}
}

func BenchmarkHalve(b *testing.B) {
	src := noise(1080, 2400)
	var dst *image.RGBA
	for b.Loop() {
		dst = frame.Scale(dst, src, 540, 1200)
	}
}

func BenchmarkI420(b *testing.B) {
	src := noise(540, 1200)
	var dst []byte
	for b.Loop() {
		dst = frame.I420(dst, src)
	}
}

// TestRGBA: every kind of decoded image reads as the same RGBA pixels.
func TestRGBA(t *testing.T) {
	opaque := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	opaque.Set(0, 0, color.NRGBA{10, 20, 30, 255})
	opaque.Set(1, 0, color.NRGBA{40, 50, 60, 255})
	clear := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	clear.Set(0, 0, color.NRGBA{200, 100, 50, 128})
	gray := image.NewGray(image.Rect(0, 0, 2, 1))
	gray.Set(0, 0, color.Gray{77})
	for _, tc := range []struct {
		name string
		img  image.Image
		same bool // the same pixel bytes, not a copy
	}{
		{"rgba", noise(2, 1), true},
		{"opaque nrgba", opaque, true},
		{"translucent nrgba", clear, false},
		{"gray", gray, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := frame.RGBA(tc.img)
			for x := range 2 {
				if g, w := got.At(x, 0), color.RGBAModel.Convert(tc.img.At(x, 0)); g != w {
					t.Errorf("pixel %d = %v, want %v", x, g, w)
				}
			}
			if shared := &got.Pix[0] == &pixOf(tc.img)[0]; shared != tc.same {
				t.Errorf("shares the image's bytes: %v, want %v", shared, tc.same)
			}
		})
	}
}

func pixOf(img image.Image) []uint8 {
	switch m := img.(type) {
	case *image.RGBA:
		return m.Pix
	case *image.NRGBA:
		return m.Pix
	case *image.Gray:
		return m.Pix
	}
	return nil
}

// TestScaleI420 gives the bytes of Scale then I420, at half size (one
// pass) and at another size.
func TestScaleI420(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  *image.RGBA
		w, h int
	}{
		{"half", noise(16, 12), 8, 6},
		{"half of a sub-image", noise(20, 16).SubImage(image.Rect(2, 2, 18, 14)).(*image.RGBA), 8, 6},
		{"other", noise(16, 12), 6, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := frame.I420(nil, frame.Scale(nil, tc.src, tc.w, tc.h))
			got := frame.ScaleI420(nil, tc.src, tc.w, tc.h)
			if string(got) != string(want) {
				t.Errorf("ScaleI420 differs from I420 of Scale:\n got %v\nwant %v", got, want)
			}
		})
	}
}

func BenchmarkScaleI420(b *testing.B) {
	src := noise(1080, 2400)
	var dst []byte
	for b.Loop() {
		dst = frame.ScaleI420(dst, src, 540, 1200)
	}
}
