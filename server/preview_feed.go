package server

import (
	"context"
	"net/http"
	"sync"
)

// previewHub runs one frame producer per preview size while anyone
// watches it.
type previewHub struct {
	mu    sync.Mutex
	feeds map[string]*hubFeed
}

type hubFeed struct {
	viewers int
	feed    *feed
	stop    context.CancelFunc
}

// previewSize is the size a preview request asks for: "full" or ""
// (the default, halved when tall).
func previewSize(r *http.Request) string {
	if r.URL.Query().Get("size") == "full" {
		return "full"
	}
	return ""
}

func (h *previewHub) join(s *Server, size string) *feed {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.feeds == nil {
		h.feeds = map[string]*hubFeed{}
	}
	hf := h.feeds[size]
	if hf == nil {
		hf = &hubFeed{}
		h.feeds[size] = hf
	}
	hf.viewers++
	if hf.feed == nil || hf.feed.isEnded() {
		ctx, stop := context.WithCancel(context.Background())
		hf.feed, hf.stop = newFeed(), stop
		go s.produce(ctx, hf.feed, size == "full")
	}
	return hf.feed
}

func (h *previewHub) leave(size string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hf := h.feeds[size]
	hf.viewers--
	if hf.viewers == 0 {
		hf.stop()
		delete(h.feeds, size)
	}
}

// feed is one producer's frames.
type feed struct {
	mu      sync.Mutex
	frame   []byte // JPEG
	seq     int
	changed chan struct{} // closed at the next frame or the end
	ended   bool
}

func newFeed() *feed { return &feed{changed: make(chan struct{})} }

func (f *feed) latest() ([]byte, int, <-chan struct{}, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frame, f.seq, f.changed, f.ended
}

func (f *feed) isEnded() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ended
}

func (f *feed) set(jpg []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frame, f.seq = jpg, f.seq+1
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *feed) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.ended {
		f.ended = true
		close(f.changed)
	}
}
