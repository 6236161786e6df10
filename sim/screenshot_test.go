package sim

import (
	"bytes"
	"image"
	"image/png"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestScreenshotPixels: every screenshot, however much of it was reused
// from the one before, decodes to exactly the frame the renderer draws, and
// is byte for byte the PNG a fresh encode of that frame gives.
func TestScreenshotPixels(t *testing.T) {
	p, err := NewPhone(Options{Seed: 1, Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"launch", func() { p.Launch("com.apex.shop") }},
		{"focus the search field", func() { p.Tap(540, 400) }},
		{"type a character", func() { p.InputText("a") }},
		{"type another", func() { p.InputText("b") }},
		{"scroll", func() { p.Swipe(540, 1500, 540, 1000, 50*time.Millisecond) }},
		{"hide the keyboard", func() { p.KeyEvent(KeycodeEscape) }},
		{"another app", func() { p.Launch("com.android.settings") }},
		{"lock", func() { p.Lock() }},
	}
	for _, st := range steps {
		st.do()
		got, err := p.Screenshot()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		frame, err := p.Frame()
		if err != nil {
			t.Fatal(err)
		}
		fresh, _, _, err := encodeFrame(frame, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, fresh) {
			t.Errorf("%s: the screenshot (%d bytes) differs from a fresh encode of the frame (%d bytes)", st.name, len(got), len(fresh))
		}
		checkZlib(t, got)
		samePixels(t, st.name, got, frame)
	}
}

// TestScreenshotReusesBands: a typed character compresses a few bands
// again, not the screen; an unchanged frame compresses none, nor does
// another phone's frame with the same pixels.
func TestScreenshotReusesBands(t *testing.T) {
	p, err := NewPhone(Options{Seed: 1, Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	p.Launch("com.apex.shop")
	p.Tap(540, 400)
	f1, _ := p.Frame()
	sharedBands.clear()
	_, bands, n1, err := encodeFrame(f1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n1 != len(bands) || n1 != (f1.Rect.Dy()+bandRows-1)/bandRows {
		t.Fatalf("first frame: %d of %d bands compressed; want all", n1, len(bands))
	}
	if _, _, n, _ := encodeFrame(f1, bands); n != 0 {
		t.Errorf("the same frame again: %d bands compressed; want 0", n)
	}
	if png, _, n, _ := encodeFrame(f1, nil); n != 0 {
		t.Errorf("the same pixels on another phone: %d bands compressed; want 0", n)
	} else {
		samePixels(t, "shared", png, f1)
	}
	p.InputText("a")
	f2, _ := p.Frame()
	png2, _, n2, err := encodeFrame(f2, bands)
	if err != nil {
		t.Fatal(err)
	}
	if n2 == 0 || n2 > len(bands)/4 {
		t.Errorf("one character typed: %d of %d bands compressed; want a few", n2, len(bands))
	}
	samePixels(t, "typed", png2, f2)
}

// samePixels fails unless data decodes to frame's pixels (alpha aside:
// frames are opaque).
func samePixels(t *testing.T, name string, data []byte, frame *image.RGBA) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: decode: %v", name, err)
	}
	if img.Bounds() != frame.Bounds() {
		t.Fatalf("%s: decoded %v; want %v", name, img.Bounds(), frame.Bounds())
	}
	for y := frame.Rect.Min.Y; y < frame.Rect.Max.Y; y++ {
		for x := frame.Rect.Min.X; x < frame.Rect.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if want := frame.RGBAAt(x, y); uint8(r>>8) != want.R || uint8(g>>8) != want.G || uint8(b>>8) != want.B {
				t.Fatalf("%s: pixel (%d,%d) = %d %d %d; want %v", name, x, y, r>>8, g>>8, b>>8, want)
			}
		}
	}
}

// TestScreenshotSharesPaintedBands: a phone showing what another phone
// showed a moment before draws none of it, and one that differs by a
// typed character draws only the bands painted otherwise; each screenshot
// is byte for byte a fresh encode of its own frame.
func TestScreenshotSharesPaintedBands(t *testing.T) {
	newShop := func() *Phone {
		p, err := NewPhone(Options{Seed: 1, Clock: newFakeClock()})
		if err != nil {
			t.Fatal(err)
		}
		p.Launch("com.apex.shop")
		p.Tap(540, 400)
		return p
	}
	a, b := newShop(), newShop()
	sharedBands.clear()
	if _, err := a.Screenshot(); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	painted := a.paintKeys(a.layout())
	a.mu.Unlock()
	for _, tc := range []struct {
		name string
		do   func()
	}{
		{"the same screen", func() {}},
		{"another character typed", func() { b.InputText("z") }},
	} {
		tc.do()
		b.mu.Lock()
		L := b.layout()
		paint := b.paintKeys(L)
		var mu sync.Mutex
		var drawn []int
		got, _, _, err := encodeBands(image.Rect(0, 0, b.w, b.h), func(buf *image.RGBA, i int) *image.RGBA {
			mu.Lock()
			drawn = append(drawn, i)
			mu.Unlock()
			b.draw(buf, L)
			return buf
		}, nil, paint)
		b.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		var want []int
		for i := range paint {
			if paint[i] != painted[i] {
				want = append(want, i)
			}
		}
		slices.Sort(drawn)
		if !slices.Equal(drawn, want) {
			t.Errorf("%s: bands %v drawn; want %v (of %d)", tc.name, drawn, want, len(paint))
		}
		frame, _ := b.Frame()
		if fresh, _, _, _ := encodeFrame(frame, nil); !bytes.Equal(got, fresh) {
			t.Errorf("%s: the screenshot differs from a fresh encode of the frame", tc.name)
		}
	}
}
