package sim

import (
	"fmt"
	"image"
	"image/color"
	"time"
)

// Platforms a phone can be.
const (
	PlatformAndroid = "android"
	PlatformIOS     = "ios"
)

// An iPhone 14: 390×844 points at scale 3.
const (
	IOSScale         = 3
	iosWidth         = 1170
	iosHeight        = 2532
	iosStatusBar     = 47 // points
	iosHomeIndicator = 34 // points
	iosNavBar        = 44 // points
)

// SpringBoard is the home screen's bundle id on iOS; the launcher app plays
// it.
const SpringBoard = "com.apple.springboard"

var (
	iosBlue      = color.RGBA{0, 122, 255, 255}
	iosGreen     = color.RGBA{52, 199, 89, 255}
	iosBarBg     = color.RGBA{248, 248, 248, 255}
	iosSeparator = color.RGBA{198, 198, 200, 255}
	iosFieldBg   = color.RGBA{238, 238, 240, 255}
	iosLabel     = color.RGBA{0, 0, 0, 255}
	iosGrey      = color.RGBA{142, 142, 147, 255}
	iosWallTop   = color.RGBA{38, 72, 140, 255}
	iosWallEnd   = color.RGBA{120, 64, 150, 255}
)

// applyPlatform sets the defaults of a platform. An iPhone's density is
// 480 dpi so that one Android dp is one iOS point (scale 3).
func (p *Phone) applyPlatform(platform string) error {
	switch platform {
	case "", PlatformAndroid:
		return nil
	case PlatformIOS:
	default:
		return fmt.Errorf("sim: new phone: platform %q: use %q or %q", platform, PlatformAndroid, PlatformIOS)
	}
	p.ios = true
	if p.w == 0 && p.h == 0 {
		p.w, p.h = iosWidth, iosHeight
	}
	if p.density == 0 {
		p.density = 160 * IOSScale
	}
	if p.model == "" {
		p.model = "iPhone 14 (Apex Sim)"
	}
	if p.serial == "" {
		p.serial = "00008110-APEXSIM00001"
	}
	return nil
}

// Platform is "android" or "ios".
func (p *Phone) Platform() string {
	if p.ios {
		return PlatformIOS
	}
	return PlatformAndroid
}

// Model is the phone's model name.
func (p *Phone) Model() string { return p.model }

// iosify turns an Android layout into an iPhone's: a status bar that shows
// through, a home indicator instead of the navigation bar, navigation bars
// with a centred title and a "Back" button whenever a screen can go back.
func (p *Phone) iosify(L *screenLayout, now time.Time) {
	if L.off {
		return
	}
	L.status = &view{class: "XCUIElementTypeStatusBar", pkg: SpringBoard, r: L.status.r, kind: "iosstatus",
		text: now.Format("15:04"), size: p.dpf(17), bold: true, noNode: true}
	L.nav = &view{class: "XCUIElementTypeOther", pkg: SpringBoard, r: L.nav.r, kind: "homeindicator", noNode: true}
	if L.keyboard != nil {
		for i := range L.keyboard.keys {
			if k := &L.keyboard.keys[i]; k.label == "OK" {
				k.label = "return"
			}
		}
	}
	if p.locked {
		L.app.kind = "wallpaper"
		L.app.walk(func(v *view) bool {
			if v.text == "Swipe up to unlock" {
				v.text, v.lines = "Swipe up to open", []string{"Swipe up to open"}
			}
			return true
		})
		return
	}
	if L.app == nil || p.inOverview {
		return
	}
	a := p.apps[p.fg]
	if p.fg == Launcher {
		L.app.kind = "wallpaper"
		L.app.walk(func(v *view) bool {
			v.fg = white
			return true
		})
	}
	L.app.walk(func(v *view) bool {
		if v.kind != "appbar" {
			return true
		}
		v.kind = "iosnav"
		hasBack := false
		for _, c := range v.children {
			switch {
			case c.desc == "Navigate up":
				c.desc, c.text, c.kind, c.fg = "", "Back", "iosback", c.bg
				hasBack = true
			case c.kind == "text" && c.style == "middle":
				c.style, c.fg = "center", iosLabel
				c.size = p.dpf(17)
				c.r = image.Rect(v.r.Min.X+p.dpf(90), v.r.Min.Y, v.r.Max.X-p.dpf(90), v.r.Max.Y)
				c.lines = []string{ellipsize(c.text, c.size, true, c.r.Dx())}
			case c.kind == "button" || c.kind == "icon":
				c.fg = v.bg
				c.style = "iosbar"
				c.r.Min.Y, c.r.Max.Y = v.r.Min.Y+p.dpf(4), v.r.Max.Y-p.dpf(4)
			}
		}
		if !hasBack && a != nil && len(a.stack) > 1 {
			back := &view{class: "android.widget.ImageButton", pkg: v.pkg, text: "Back", r: image.Rect(v.r.Min.X, v.r.Min.Y, v.r.Min.X+p.dpf(88), v.r.Max.Y),
				clickable: true, focusable: true, kind: "iosback", size: p.dpf(17), fg: v.bg}
			back.tap = func() { p.back() }
			v.children = append([]*view{back}, v.children...)
		}
		return false
	})
}

// iosChrome draws the status bar over the app and the home indicator.
func (rd *renderer) iosChrome(dst *image.RGBA, L *screenLayout) {
	light := L.app != nil && L.app.kind == "wallpaper" || L.dark
	fg := iosLabel
	if light {
		fg = white
	}
	s := L.status
	if !light {
		bg := iosBarBg
		if L.dialog != nil {
			bg = color.RGBA{99, 99, 99, 255}
		}
		fill(dst, s.r, bg)
	}
	cx := rd.dp(72)
	w := measure(s.text, s.size, true)
	drawText(dst, s.text, cx-w/2, s.r.Min.Y+s.r.Dy()/2+s.size*40/100+rd.dp(2), s.size, true, fg)
	// Signal bars, Wi-Fi wedge and a battery on the right, as shapes.
	mid := s.r.Min.Y + s.r.Dy()/2 + rd.dp(2)
	x := s.r.Max.X - rd.dp(100)
	for i := range 4 {
		h := rd.dp(float64(4 + 2*i))
		fill(dst, image.Rect(x+i*rd.dp(5), mid+rd.dp(6)-h, x+i*rd.dp(5)+rd.dp(3), mid+rd.dp(6)), fg)
	}
	x += rd.dp(26)
	for i := range 3 {
		w := rd.dp(float64(4 + 5*i))
		fill(dst, image.Rect(x+rd.dp(8)-w/2, mid+rd.dp(4)-rd.dp(float64(4*i)), x+rd.dp(8)+w/2, mid+rd.dp(6)-rd.dp(float64(4*i))), fg)
	}
	x += rd.dp(26)
	batt := image.Rect(x, mid-rd.dp(6), x+rd.dp(25), mid+rd.dp(6))
	fillRound(dst, batt, rd.dp(3), fg)
	inner := iosBarBg
	if light {
		inner = iosWallTop
	}
	fillRound(dst, batt.Inset(rd.dp(1)), rd.dp(3), inner)
	fillRound(dst, batt.Inset(rd.dp(2)), rd.dp(2), fg)
	fill(dst, image.Rect(batt.Max.X+rd.dp(1), mid-rd.dp(2), batt.Max.X+rd.dp(2.5), mid+rd.dp(2)), fg)
	n := L.nav.r
	bar := image.Rect(n.Min.X+n.Dx()/2-rd.dp(67), n.Max.Y-rd.dp(13), n.Min.X+n.Dx()/2+rd.dp(67), n.Max.Y-rd.dp(8))
	fillRound(dst, bar, bar.Dy()/2, fg)
}

// iosSelf draws the views that look different on an iPhone; it reports
// false for the rest, which are drawn as on Android.
func (rd *renderer) iosSelf(dst *image.RGBA, v *view) bool {
	r := v.r
	switch v.kind {
	case "wallpaper":
		for y := r.Min.Y; y < r.Max.Y; y++ {
			t := float64(y-r.Min.Y) / float64(max(1, r.Dy()))
			c := color.RGBA{mix(iosWallTop.R, iosWallEnd.R, t), mix(iosWallTop.G, iosWallEnd.G, t), mix(iosWallTop.B, iosWallEnd.B, t), 255}
			fill(dst, image.Rect(r.Min.X, y, r.Max.X, y+1), c)
		}
	case "iosnav":
		fill(dst, r, iosBarBg)
		fill(dst, image.Rect(r.Min.X, r.Max.Y-1, r.Max.X, r.Max.Y), iosSeparator)
	case "iosback":
		col := pick(v.fg, iosBlue)
		drawText(dst, "‹", r.Min.X+rd.dp(8), r.Min.Y+r.Dy()/2+rd.dp(10), rd.dp(32), false, col)
		drawText(dst, v.text, r.Min.X+rd.dp(26), r.Min.Y+r.Dy()/2+v.size*36/100, v.size, false, col)
	case "button":
		if v.style == "iosbar" || v.style == "text" || v.style == "appbar" {
			col := pick(v.fg, iosBlue)
			if v.style == "text" {
				col = pick(v.bg, iosBlue)
			}
			if v.disabled {
				col = iosGrey
			}
			rd.centered(dst, v.text, r, rd.dp(17), v.style != "text", col)
			return true
		}
		if v.style == "outline" {
			return false
		}
		bg := pick(v.bg, iosBlue)
		if v.disabled {
			bg = color.RGBA{210, 210, 214, 255}
		}
		fillRound(dst, r, rd.dp(12), bg)
		rd.centered(dst, v.text, r, rd.dp(17), true, white)
	case "icon":
		if v.style == "iosbar" {
			rd.centered(dst, first(v.lines), r, v.size, false, pick(v.fg, iosBlue))
			return true
		}
		return false
	case "field":
		fillRound(dst, r, rd.dp(10), iosFieldBg)
		col := rd.fg(v)
		if v.hint {
			col = iosGrey
		}
		x := r.Min.X + rd.dp(12)
		base := r.Min.Y + r.Dy()/2 + v.size*36/100
		drawText(dst, first(v.lines), x, base, v.size, false, col)
		if v.focused {
			cx := x
			if !v.hint {
				cx += measure(first(v.lines), v.size, false) + rd.dp(1)
			}
			fill(dst, image.Rect(cx, base-v.size, cx+rd.dp(2), base+v.size/4), iosBlue)
		}
	case "switch", "checkbox":
		col := rd.fg(v)
		if v.disabled {
			col = iosGrey
		}
		midY := r.Min.Y + r.Dy()/2
		drawText(dst, v.text, r.Min.X, midY+v.size*36/100, v.size, false, col)
		track := image.Rect(r.Max.X-rd.dp(51), midY-rd.dp(15.5), r.Max.X, midY+rd.dp(15.5))
		knob := rd.dp(27)
		if v.checked {
			fillRound(dst, track, track.Dy()/2, iosGreen)
			fillRound(dst, image.Rect(track.Max.X-knob-rd.dp(2), midY-knob/2, track.Max.X-rd.dp(2), midY+knob/2), knob/2, white)
		} else {
			fillRound(dst, track, track.Dy()/2, color.RGBA{229, 229, 234, 255})
			fillRound(dst, image.Rect(track.Min.X+rd.dp(2), midY-knob/2, track.Min.X+rd.dp(2)+knob, midY+knob/2), knob/2, white)
		}
	case "dialog":
		fillRound(dst, r, rd.dp(14), color.RGBA{242, 242, 247, 255})
	case "appicon":
		d := rd.dp(60)
		cx := r.Min.X + r.Dx()/2
		sq := image.Rect(cx-d/2, r.Min.Y+rd.dp(8), cx+d/2, r.Min.Y+rd.dp(8)+d)
		fillRound(dst, sq, rd.dp(13), v.bg)
		rd.centered(dst, first(v.lines), sq, rd.dp(26), true, white)
		rd.centered(dst, ellipsize(v.text, rd.dp(12), false, r.Dx()-rd.dp(4)), image.Rect(r.Min.X, sq.Max.Y+rd.dp(4), r.Max.X, sq.Max.Y+rd.dp(22)), rd.dp(12), false, white)
	default:
		return false
	}
	return true
}

// HomeGesturePoints is the strip at the bottom edge where the home and app
// switcher gestures start: narrower than the 34-point home indicator, as on
// an iPhone, where a swipe starting 21 points above the edge (webdriverio's
// default swipe) scrolls the app.
const HomeGesturePoints = 20

// iosEdgeSwipe handles an iPhone's edge gestures: up from the home
// indicator goes home; right from the left edge goes back a screen. It
// reports whether the swipe was one.
func (p *Phone) iosEdgeSwipe(x1, y1, x2, y2 int) bool {
	dx, dy := x2-x1, y1-y2
	switch {
	case y1 >= p.h-p.dpf(HomeGesturePoints) && dy >= p.h/8:
		p.home()
		return true
	case x1 <= p.dpf(20) && dx >= p.w/4 && abs(dy) < dx/2:
		if a := p.apps[p.fg]; a != nil && len(a.stack) > 1 && a.dialog == nil {
			p.back()
			return true
		}
	}
	return false
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// appBarHeight is the height of an app's title bar in dp (points on iOS).
func (p *Phone) appBarHeight() float64 {
	if p.ios {
		return iosNavBar
	}
	return 64
}

func mix(a, b uint8, t float64) uint8 { return uint8(float64(a) + (float64(b)-float64(a))*t + 0.5) }
