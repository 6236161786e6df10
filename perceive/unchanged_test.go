package perceive_test

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strings"
	"testing"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/perceive"
)

// A tap whose effect nothing on screen shows (the Settings app's build
// number counts taps) leaves the screen unchanged in every respect; a
// picture drawn below the status bar changes it although the tree is the
// same; the status bar alone does not.
func TestUnchanged(t *testing.T) {
	dev, d, p, ctx := onApp(t, "com.apex.settings")
	look := func() *perceive.Screen {
		t.Helper()
		s := settled(t, ctx, p, "a look")
		if err := p.Shoot(ctx, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	tap := func(s *perceive.Screen, text string) {
		t.Helper()
		x, y := centre(t, s.Scene, text)
		if err := d.Tap(ctx, device.Point{X: x, Y: y}); err != nil {
			t.Fatal(err)
		}
	}
	tap(look(), "About phone")
	before := look()
	tap(before, "UQ1A.240205.004")
	after := look()
	st, err := dev.Phone.State("com.apex.settings")
	if err != nil || st["build_taps"] != 1.0 && st["build_taps"] != 1 {
		t.Fatalf("build_taps = %v (%v): the tap did not land", st["build_taps"], err)
	}
	if same, why := perceive.Unchanged(before, after); !same {
		t.Fatalf("a tap with a hidden effect: judged changed: %s", why)
	}

	paint := func(s *perceive.Screen, r image.Rectangle) *perceive.Screen {
		t.Helper()
		img, err := png.Decode(bytes.NewReader(s.PNG))
		if err != nil {
			t.Fatal(err)
		}
		m := image.NewNRGBA(img.Bounds())
		draw.Draw(m, m.Bounds(), img, image.Point{}, draw.Src)
		draw.Draw(m, r, image.NewUniform(color.NRGBA{200, 30, 30, 255}), image.Point{}, draw.Src)
		var buf bytes.Buffer
		if err := png.Encode(&buf, m); err != nil {
			t.Fatal(err)
		}
		c := *s
		c.PNG = buf.Bytes()
		return &c
	}
	w := before.Scene.Width
	if same, why := perceive.Unchanged(before, paint(after, image.Rect(w/3, 1000, w/2, 1100))); same || !strings.Contains(why, "pixels") {
		t.Fatalf("a picture drawn below the status bar: same=%v, %s", same, why)
	}
	if same, why := perceive.Unchanged(before, paint(after, image.Rect(0, 0, w/4, 40))); !same {
		t.Fatalf("only the status bar changed: judged changed: %s", why)
	}
	if same, why := perceive.Unchanged(before, look()); !same {
		t.Fatalf("the same screen looked at again: %s", why)
	}
	if err := d.PressKey(ctx, device.KeyBack); err != nil {
		t.Fatal(err)
	}
	if same, why := perceive.Unchanged(before, look()); same || !strings.Contains(why, "tree") {
		t.Fatalf("another page: same=%v, %s", same, why)
	}
}
