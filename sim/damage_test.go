package sim

import (
	"bytes"
	"fmt"
	"image"
	"math/rand/v2"
	"testing"
	"time"
)

// TestScreenshotDamage walks the built-in apps on an Android phone and an
// iPhone, light and dark, with taps, typing, scrolls, keys, a rotation and
// the lock screen; after each step:
//   - no view draws outside the rows paintKeys counts it in (so a band
//     whose key did not change cannot have changed);
//   - the screenshot, drawn and compressed only where paintKeys changed,
//     is byte for byte the PNG of a whole frame drawn afresh.
func TestScreenshotDamage(t *testing.T) {
	apps := []string{"com.apex.shop", "com.android.settings", "com.apex.login", "com.apex.notes",
		"com.apex.zhongwen", "com.android.browser", "com.apex.launcher"}
	steps := 4
	cases := []struct {
		platform string
		dark     bool
	}{{"android", false}, {"android", true}, {"ios", false}, {"ios", true}}
	if raceEnabled {
		// Drawing is ~10× slower and nothing here runs concurrently: one
		// phone, one step per app, no paint rows check.
		steps, cases = 1, cases[3:]
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s dark=%v", tc.platform, tc.dark), func(t *testing.T) {
			p, err := NewPhone(Options{Seed: 1, Clock: newFakeClock(), Platform: tc.platform})
			if err != nil {
				t.Fatal(err)
			}
			p.SetNightMode(tc.dark)
			rng := rand.New(rand.NewPCG(1, uint64(len(tc.platform))))
			w, h, _ := p.Display()
			check := func(name string) {
				t.Helper()
				if !raceEnabled {
					checkPaintRows(t, p, name)
				}
				got, err := p.Screenshot()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				frame, _ := p.Frame()
				fresh, _, _, err := encodeFrame(frame, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, fresh) {
					samePixels(t, name, got, frame)
					t.Fatalf("%s: the screenshot differs from a fresh encode of the frame", name)
				}
			}
			check("boot")
			for _, app := range apps {
				if err := p.Launch(app); err != nil {
					continue // not on this platform
				}
				check(app)
				for i := range steps {
					var name string
					switch k := rng.IntN(8); {
					case k < 4:
						x, y := rng.IntN(w), rng.IntN(h)
						p.Tap(x, y)
						name = fmt.Sprintf("tap %d,%d", x, y)
					case k == 4:
						p.InputText("ab")
						name = "type"
					case k == 5:
						p.Swipe(w/2, h*3/4, w/2, h/4, 50*time.Millisecond)
						name = "scroll"
					case k == 6:
						p.KeyEvent(KeycodeBack)
						name = "back"
					default:
						p.KeyEvent(KeycodeEscape)
						name = "escape"
					}
					check(fmt.Sprintf("%s step %d: %s", app, i, name))
				}
			}
			p.SetRotation(1)
			check("rotated")
			p.SetRotation(0)
			p.Lock()
			check("locked")
			p.Unlock()
			check("unlocked")
		})
	}
}

// checkPaintRows draws each view paintKeys counts, alone, on a clear
// canvas, and fails if it draws in rows paintKeys does not count it in;
// the same for the keyboard and the iPhone's bars.
func checkPaintRows(t *testing.T, p *Phone, name string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	L := p.layout()
	if L.off {
		return
	}
	frame := image.Rect(0, 0, p.w, p.h)
	canvas := image.NewRGBA(frame)
	pk := &painter{p: p}
	rd := p.renderer(canvas, L)
	blank := make([]byte, 4*p.w)
	// drawn checks that draw, given a canvas of rows and an eighth of the
	// screen around them, paints only within rows.
	drawn := func(what string, rows image.Rectangle, draw func(canvas *image.RGBA)) {
		t.Helper()
		around := image.Rect(0, rows.Min.Y-p.h/8, p.w, rows.Max.Y+p.h/8).Intersect(frame)
		draw(canvas.SubImage(around).(*image.RGBA))
		for y := around.Min.Y; y < around.Max.Y; y++ {
			row := canvas.Pix[canvas.PixOffset(0, y):canvas.PixOffset(p.w, y)]
			if (y < rows.Min.Y || y >= rows.Max.Y) && !bytes.Equal(row, blank) {
				t.Fatalf("%s: %s draws in row %d, outside rows %d–%d", name, what, y, rows.Min.Y, rows.Max.Y)
			}
			clear(row)
		}
	}
	pk.visit = func(v *view, clip image.Rectangle) {
		drawn(fmt.Sprintf("%s %q %v", v.kind, v.text, v.r), pk.paintRows(v).Intersect(clip), func(c *image.RGBA) {
			rd.drawSelf(c.SubImage(clip).(*image.RGBA), v)
		})
	}
	pk.keysOf(L)
	if L.keyboard != nil {
		drawn("the keyboard", L.keyboard.r, func(c *image.RGBA) {
			rd.dst = c
			rd.keyboard(L.keyboard)
		})
	}
	if p.ios {
		drawn("the status bar", pk.grow(L.status.r, L.status.size), func(c *image.RGBA) {
			rd.iosChrome(c.SubImage(image.Rect(0, 0, p.w, L.nav.r.Min.Y)).(*image.RGBA), L)
		})
	}
}
