package ocr

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// TestLazy: nothing starts until the first recognition; concurrent first
// calls share one Tesseract; Close stops it and later calls fail clearly.
func TestLazy(t *testing.T) {
	img, _ := canvasScreen(t)
	l := NewLazy(nil)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	texts := make([]string, 4)
	for i := range errs {
		wg.Go(func() {
			res, err := l.Recognize(context.Background(), img, nil)
			errs[i] = err
			if err == nil {
				texts[i] = res.Text()
			}
		})
	}
	wg.Wait()
	if errors.Is(errs[0], ErrNotInstalled) {
		t.Skip("tesseract is not installed (make deps-apt installs it)")
	}
	for i, err := range errs {
		if err != nil || texts[i] != texts[0] {
			t.Fatalf("call %d: %q, %v; want what call 0 read (%q)", i, texts[i], err, texts[0])
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Recognize(context.Background(), img, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Recognize after Close: %v, want ErrClosed", err)
	}
}
