package sim

import (
	"strconv"

	"github.com/apexagent/apex/sim/adbd"
)

var _ adbd.StaleTreeSetter = (*Phone)(nil)

// staleTree is the stale-tree mode: real devices sometimes keep answering
// `uiautomator dump` with the screen they showed before a navigation
// (the accessibility tree lags behind the window). While it is on, DumpUI
// returns the last dump of the screen shown when the mode went on, or of
// the last screen dumped before a navigation, until the phone shows that
// screen again or the mode goes off. Changes within one screen (typing, a
// toggle) still show. Screenshots always show the truth.
type staleTree struct {
	on   bool
	key  string // the screen the kept dump shows
	dump []byte
}

// SetStaleTree switches stale-tree mode on or off; over adb,
// `setprop debug.apex.stale_tree 1` (adbd.StaleTreeProp) does the same.
func (p *Phone) SetStaleTree(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stale = staleTree{on: on}
	if on {
		p.stale.key, p.stale.dump = p.screenKey(), p.dumpLocked()
	}
	p.log.Info("sim: stale-tree mode", "on", on)
}

// StaleTree reports whether stale-tree mode is on.
func (p *Phone) StaleTree() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stale.on
}

// staleDump returns what DumpUI reports given the fresh dump.
func (p *Phone) staleDump(fresh []byte) []byte {
	if !p.stale.on {
		return fresh
	}
	if key := p.screenKey(); key == p.stale.key {
		p.stale.dump = fresh
		return fresh
	}
	return p.stale.dump
}

// screenKey names what is on screen at the level of navigation: the
// foreground app, its top screen and back stack depth, an open dialog,
// the keyguard and the overview.
func (p *Phone) screenKey() string {
	key := p.fg
	if a := p.apps[p.fg]; a != nil {
		if top := a.top(); top != nil {
			key += "/" + top.spec.ID + "#" + strconv.Itoa(len(a.stack))
		}
		if a.dialog != nil {
			key += "+" + a.dialog.spec.ID
		}
	}
	if p.locked {
		key += " locked"
	}
	if p.inOverview {
		key += " overview"
	}
	return key
}
