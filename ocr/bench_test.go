package ocr

import (
	"context"
	"testing"
)

// BenchmarkFullScreen reads a whole 1080x2400 screen (eng+chi_sim) with a
// warm resident tesseract process. Floor: 1.5 s.
func BenchmarkFullScreen(b *testing.B) {
	e := testEngine(b)
	img, _ := canvasScreen(b)
	ctx := context.Background()
	if _, err := e.Recognize(ctx, img, nil); err != nil { // start the process
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Recognize(ctx, img, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRegion reads one label's region (a button) of the same screen.
// Floor: 200 ms.
func BenchmarkRegion(b *testing.B) {
	e := testEngine(b)
	img, words := canvasScreen(b)
	ctx := context.Background()
	opts := &Options{Region: words[5].box.Inset(-24)}
	if _, err := e.Recognize(ctx, img, opts); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Recognize(ctx, img, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCacheHit is a repeated read of an unchanged screen.
func BenchmarkCacheHit(b *testing.B) {
	c := NewCache(testEngine(b), 8)
	img, _ := canvasScreen(b)
	ctx := context.Background()
	if _, err := c.Recognize(ctx, img, nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Recognize(ctx, img, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFullScreenEnglish reads the whole screen in English only.
func BenchmarkFullScreenEnglish(b *testing.B) {
	e := testEngine(b)
	img, _ := canvasScreen(b)
	ctx := context.Background()
	opts := &Options{Languages: []string{"eng"}}
	if _, err := e.Recognize(ctx, img, opts); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Recognize(ctx, img, opts); err != nil {
			b.Fatal(err)
		}
	}
}
