package sim

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
