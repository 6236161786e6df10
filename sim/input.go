package sim

import (
	"image"
	"math"
	"time"

	"github.com/apexagent/apex/sim/adbd"
)

// LongPressTimeout is how long a still touch must last to be a long press
// (Android's default).
const LongPressTimeout = 500 * time.Millisecond

// Tap touches the screen at (x, y).
func (p *Phone) Tap(x, y int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tap(x, y, false)
}

// Swipe drags from one point to another over d. A swipe that does not move
// is a tap, or a long press when d ≥ LongPressTimeout; a vertical drag
// scrolls the list under the finger; on the keyguard a swipe up unlocks.
func (p *Phone) Swipe(x1, y1, x2, y2 int, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if math.Hypot(float64(x2-x1), float64(y2-y1)) < float64(p.dpf(8)) {
		p.tap(x1, y1, d >= LongPressTimeout)
		return
	}
	if !p.awake {
		return
	}
	if p.locked {
		if y1-y2 > p.dpf(80) {
			p.unlock()
		}
		return
	}
	if p.ios && p.iosEdgeSwipe(x1, y1, x2, y2) {
		return
	}
	L := p.layout()
	if L.dialog != nil {
		return
	}
	if bar := p.h - p.dpf(iosHomeIndicator); p.ios && y1 >= bar {
		// An iPhone's scroll views run under the home indicator: a drag
		// that starts there (above the home gesture's strip) scrolls them.
		y1 = bar - 1
	}
	sv := L.app.hit(x1, y1, func(v *view) bool { return v.scrollKey != "" })
	if sv == nil {
		return
	}
	a := p.apps[p.fg]
	off := a.scroll[sv.scrollKey] + (y1 - y2)
	a.scroll[sv.scrollKey] = min(max(off, 0), sv.scrollMax)
	p.changed()
}

// The zoom an image with bind stays within.
const (
	MinZoom = 1.0
	MaxZoom = 10.0
)

// Pinch is a two-finger gesture centred on (cx, cy): the fingers start
// fromDist pixels apart and end toDist apart, over d. An image with bind
// under the centre zooms by toDist/fromDist (apart zooms in), within
// MinZoom and MaxZoom; elsewhere nothing happens, as in an app that does
// not zoom.
func (p *Phone) Pinch(cx, cy, fromDist, toDist int, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.awake || p.locked || fromDist <= 0 || toDist <= 0 {
		return
	}
	L := p.layout()
	root := L.app
	if L.dialog != nil {
		root = L.dialog
	}
	v := root.hit(cx, cy, func(v *view) bool { return v.pinch != nil })
	if v == nil {
		return
	}
	v.pinch(float64(toDist) / float64(fromDist))
	p.changed()
}

func (p *Phone) tap(x, y int, long bool) {
	if !p.awake || p.locked {
		return
	}
	L := p.layout()
	if L.keyboard != nil && image.Pt(x, y).In(L.keyboard.r) {
		if k := L.keyboard.keyAt(x, y); k != nil {
			switch {
			case k.text != "":
				p.typeText(L, k.text)
			case k.code > 0:
				p.key(L, k.code)
			}
		}
		return
	}
	if h := L.nav.hit(x, y, func(v *view) bool { return v.tap != nil }); h != nil {
		h.tap()
		return
	}
	if image.Pt(x, y).In(L.status.r) {
		return
	}
	a := p.apps[p.fg]
	root := L.app
	if L.dialog != nil {
		if !image.Pt(x, y).In(L.dialog.r) {
			if a.dialog.spec.Cancel {
				a.dialog = nil
				p.changed()
			}
			return
		}
		root = L.dialog
	}
	want := func(v *view) bool { return v.tap != nil }
	if long {
		want = func(v *view) bool { return v.longPress != nil || v.tap != nil }
	}
	h := root.hit(x, y, want)
	if h == nil {
		return
	}
	if long && h.longPress != nil {
		h.longPress()
	} else {
		h.tap()
	}
	p.changed()
}

// InputText types into the focused field; without one the text is lost,
// as on a real phone.
func (p *Phone) InputText(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.awake || p.locked {
		return
	}
	p.typeText(p.layout(), text)
}

func (p *Phone) typeText(L *screenLayout, text string) {
	f := focusedField(L)
	if f == nil {
		return
	}
	p.setFieldText(f, f.text()+text)
}

func focusedField(L *screenLayout) *fieldRef {
	var found *fieldRef
	for _, root := range []*view{L.dialog, L.app} {
		if root == nil || found != nil {
			continue
		}
		root.walk(func(v *view) bool {
			if v.field != nil && v.focused {
				found = v.field
				return false
			}
			return true
		})
	}
	return found
}

func (f *fieldRef) text() string {
	if f.bind != "" {
		return toStr(f.app.read(f.bind, f.scope))
	}
	return f.app.fields[f.key]
}

func (p *Phone) setFieldText(f *fieldRef, text string) {
	if f.bind != "" {
		_ = f.app.assign(f.bind, text, f.scope)
	} else {
		f.app.fields[f.key] = text
	}
	p.run(f.app, f.el.OnChange, f.scope)
	p.changed()
}

// KeyEvent presses an Android key code.
func (p *Phone) KeyEvent(code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch code {
	case KeycodePower:
		if p.awake {
			p.sleep()
		} else {
			p.awake = true
			p.changed()
		}
		return
	case KeycodeWakeup:
		p.wake()
		return
	case KeycodeSleep:
		p.sleep()
		return
	}
	if !p.awake {
		return
	}
	if p.locked {
		if code == KeycodeMenu {
			p.unlock()
		}
		return
	}
	p.key(p.layout(), code)
}

func (p *Phone) keyEvent(code int) { p.key(p.layout(), code) }

func (p *Phone) key(L *screenLayout, code int) {
	a := p.apps[p.fg]
	switch code {
	case KeycodeHome:
		p.home()
	case KeycodeBack:
		p.back()
	case KeycodeAppSwitch:
		p.overview()
	case KeycodeEscape:
		if p.keyboardShown() {
			p.hideIME(a)
		}
	case KeycodeDel:
		if f := focusedField(L); f != nil {
			r := []rune(f.text())
			if len(r) > 0 {
				p.setFieldText(f, string(r[:len(r)-1]))
			}
		}
	case KeycodeEnter:
		if f := focusedField(L); f != nil {
			a.focus = ""
			p.run(f.app, f.el.OnSubmit, f.scope)
			p.changed()
		}
	case KeycodeTab:
		p.focusNext(L)
	case KeycodeVolumeUp, KeycodeVolumeDown:
		p.logcat.add(1000, "I", "AudioService", "adjustStreamVolume() stream=3, dir="+map[int]string{KeycodeVolumeUp: "1", KeycodeVolumeDown: "-1"}[code])
	default:
		if r, ok := adbd.KeyChar(code); ok {
			p.typeText(L, string(r))
		}
	}
}

// focusNext moves focus to the next field, as TAB does.
func (p *Phone) focusNext(L *screenLayout) {
	a := p.apps[p.fg]
	var keys []string
	root := L.app
	if L.dialog != nil {
		root = L.dialog
	}
	root.walk(func(v *view) bool {
		if v.field != nil {
			keys = append(keys, v.field.key)
		}
		return true
	})
	if len(keys) == 0 {
		return
	}
	next := keys[0]
	for i, k := range keys {
		if k == a.focus && i+1 < len(keys) {
			next = keys[i+1]
		}
	}
	a.setFocus(next)
	p.changed()
}

func (p *Phone) sleep() {
	if p.awake {
		p.awake = false
		p.locked = true
		if a := p.apps[p.fg]; a != nil {
			a.focus = ""
		}
		p.changed()
	}
}

func (p *Phone) unlock() {
	p.locked = false
	p.logcat.add(1000, "I", "KeyguardViewMediator", "keyguard dismissed")
	p.changed()
}

// Lock turns the screen off and arms the keyguard.
func (p *Phone) Lock() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sleep()
}

// Unlock wakes the screen and dismisses the keyguard.
func (p *Phone) Unlock() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wake()
	p.unlock()
}
