package server

import (
	"image"
	"image/color"
	"testing"
)

func TestShrink(t *testing.T) {
	small := image.NewRGBA(image.Rect(0, 0, 4, previewMaxHeight))
	if shrink(small) != image.Image(small) {
		t.Errorf("an image %d high was shrunk", previewMaxHeight)
	}
	src := image.NewNRGBA(image.Rect(0, 0, 4, previewMaxHeight+2))
	src.Set(0, 0, color.NRGBA{100, 0, 255, 255})
	src.Set(1, 0, color.NRGBA{101, 0, 255, 255})
	src.Set(0, 1, color.NRGBA{102, 0, 255, 255})
	src.Set(1, 1, color.NRGBA{103, 0, 0, 255})
	got := shrink(src)
	if b := got.Bounds(); b.Dx() != 2 || b.Dy() != previewMaxHeight/2+1 {
		t.Fatalf("shrunk to %v", b)
	}
	if c := got.At(0, 0).(color.RGBA); c != (color.RGBA{102, 0, 191, 255}) {
		t.Errorf("2×2 average = %v, want {102 0 191 255}", c)
	}
	if c := got.At(1, 0).(color.RGBA); c != (color.RGBA{0, 0, 0, 255}) {
		t.Errorf("a transparent block = %v, want opaque black", c)
	}
}
