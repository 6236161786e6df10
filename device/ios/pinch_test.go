package ios_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
)

var pageRe = regexp.MustCompile(`name="page_view"[^>]*x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)"`)

// A URL launch goes through WebDriverAgent's /url: the simulated iPhone
// opens its Browser showing the address. A pinch there is one W3C action
// with two touch pointers, and the page zooms in and out.
func TestURLLaunchAndPinch(t *testing.T) {
	dev := startLab(t)
	d := openLab(t, dev, nil)
	must(t, d.LaunchApp(ctx(t), "https://example.com/photos"))
	fg, err := d.ForegroundApp(ctx(t))
	must(t, err)
	st, err := dev.Phone.State(fg)
	must(t, err)
	if st["url"] != "https://example.com/photos" {
		t.Fatalf("after launching the URL, %s is in front with url %v", fg, st["url"])
	}
	src, err := d.Source(ctx(t))
	must(t, err)
	m := pageRe.FindStringSubmatch(string(src.Data))
	if m == nil {
		t.Fatalf("no page_view in the source:\n%.3000s", src.Data)
	}
	n := make([]int, 4)
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	c := device.Point{X: n[0] + n[2]/2, Y: n[1] + n[3]/2} // the driver's source is in pixels
	for _, s := range []struct {
		from, to int
		want     float64
	}{{150, 600, 4}, {600, 300, 2}} {
		must(t, d.Pinch(ctx(t), c, s.from, s.to, 300*time.Millisecond))
		st, err := dev.Phone.State(fg)
		must(t, err)
		if st["zoom"] != s.want {
			t.Fatalf("pinch %d→%d px at %v: zoom %v, want %v", s.from, s.to, c, st["zoom"], s.want)
		}
	}
}
