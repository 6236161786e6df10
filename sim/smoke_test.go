package sim

import (
	"bytes"
	"image/png"
	"testing"
)

func TestLauncherStartsShop(t *testing.T) {
	p, _ := newTestPhone(t, 1)
	if pkg, _ := p.Foreground(); pkg != Launcher {
		t.Fatalf("foreground after boot = %q, want the launcher", pkg)
	}
	tapOn(t, p, "Shop")
	if pkg, act := p.Foreground(); pkg != "com.apex.shop" || act != ".MainActivity" {
		t.Fatalf("foreground = %s/%s, want com.apex.shop/.MainActivity", pkg, act)
	}
	d := dumpOf(t, p)
	if n := d.must("search"); n.Text != "Search" || n.Class != "android.widget.EditText" {
		t.Errorf("search field = %+v", n)
	}
	data, err := p.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	w, h, _ := p.Display()
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("screenshot %v, display %dx%d", b, w, h)
	}
}
