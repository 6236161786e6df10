package sim

import "image"

// ScreenChanged returns a channel closed at the next change of what is on
// screen: what a live preview or `screenrecord` waits on instead of
// polling. Changes that come with time alone (a toast running out, a
// delayed element appearing) show at the next look at the screen, so a
// watcher also looks now and then.
func (p *Phone) ScreenChanged() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.watch == nil {
		p.watch = make(chan struct{})
	}
	return p.watch
}

// notifyWatchers wakes the ScreenChanged waiters (p.mu held).
func (p *Phone) notifyWatchers() {
	if p.watch != nil {
		close(p.watch)
		p.watch = nil
	}
}

// FrameInto draws the current screen into dst and returns it; into a new
// image when dst is nil or not the screen's size. A live stream reuses
// one image instead of allocating a frame (10 MB at 1080×2400) each time.
func (p *Phone) FrameInto(dst *image.RGBA) *image.RGBA {
	p.mu.Lock()
	defer p.mu.Unlock()
	if dst == nil || dst.Rect != image.Rect(0, 0, p.w, p.h) {
		dst = image.NewRGBA(image.Rect(0, 0, p.w, p.h))
	}
	p.draw(dst, p.layout())
	return dst
}
