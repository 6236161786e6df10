package ocr

import (
	"context"
	"errors"
	"image"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// countingEngine is a fake engine that records its calls and can hold
// them until released.
type countingEngine struct {
	calls   atomic.Int64
	release chan struct{} // nil: answer at once
	err     error
}

func (e *countingEngine) Recognize(ctx context.Context, img []byte, opts *Options) (*Result, error) {
	e.calls.Add(1)
	if e.release != nil {
		select {
		case <-e.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if e.err != nil {
		return nil, e.err
	}
	w := Word{Text: string(img), Box: image.Rect(0, 0, 10, 10), Confidence: 0.9}
	return &Result{Words: []Word{w}, Lines: []Line{NewLine([]Word{w})}}, nil
}

func TestCacheSharesConcurrentCalls(t *testing.T) {
	e := &countingEngine{release: make(chan struct{})}
	c := NewCache(e, 4)
	var wg sync.WaitGroup
	results := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			res, err := c.Recognize(context.Background(), []byte("same"), nil)
			if err != nil {
				t.Error(err)
				return
			}
			results <- res.Text()
		})
	}
	for e.calls.Load() == 0 { // wait until the leader is inside the engine
		runtime.Gosched()
	}
	close(e.release)
	wg.Wait()
	close(results)
	for r := range results {
		if r != "same" {
			t.Errorf("result %q, want %q", r, "same")
		}
	}
	if n := e.calls.Load(); n != 1 {
		t.Errorf("engine ran %d times for 8 concurrent identical calls, want 1", n)
	}
}

func TestCacheEvictsLeastRecent(t *testing.T) {
	e := &countingEngine{}
	c := NewCache(e, 2)
	ctx := context.Background()
	for _, img := range []string{"a", "b", "a", "c", "a", "b"} {
		if _, err := c.Recognize(ctx, []byte(img), nil); err != nil {
			t.Fatal(err)
		}
	}
	// a, b miss; a hits; c misses and evicts b; a hits; b misses again.
	if s := c.Stats(); s.Hits != 2 || s.Misses != 4 || s.Entries != 2 {
		t.Errorf("stats %+v, want 2 hits, 4 misses, 2 entries", s)
	}
}

func TestCacheKeepsNoErrorsAndCopies(t *testing.T) {
	e := &countingEngine{err: errors.New("boom")}
	c := NewCache(e, 2)
	ctx := context.Background()
	for range 2 {
		if _, err := c.Recognize(ctx, []byte("x"), nil); err == nil {
			t.Fatal("want the engine's error")
		}
	}
	if n := e.calls.Load(); n != 2 {
		t.Errorf("failed calls were cached: engine ran %d times, want 2", n)
	}
	e.err = nil
	first, _ := c.Recognize(ctx, []byte("y"), nil)
	first.Words[0].Text = "changed"
	second, _ := c.Recognize(ctx, []byte("y"), nil)
	if second.Words[0].Text != "y" {
		t.Errorf("a caller's change leaked into the cache: %q", second.Words[0].Text)
	}
}
