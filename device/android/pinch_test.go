package android_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/sim/lab"
)

var pageBounds = regexp.MustCompile(`resource-id="com.android.browser:id/page_view"[^>]*bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"`)

// pageCenter is the middle of the Browser's page, read from the dump.
func pageCenter(t *testing.T, d *android.Driver) device.Point {
	t.Helper()
	src, err := d.Source(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	m := pageBounds.FindStringSubmatch(string(src.Data))
	if m == nil {
		t.Fatalf("no page_view in the dump:\n%s", src.Data)
	}
	n := make([]int, 4)
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	return device.Point{X: (n[0] + n[2]) / 2, Y: (n[1] + n[3]) / 2}
}

// Pinch goes through the touch panel's multitouch events (getevent -p for
// its ranges, sendevent for each finger): the simulated Browser's page
// zooms in when the fingers spread and out when they close, upright and
// turned to landscape, over a direct connection and through Debian's adb.
func TestPinchZoomsThePage(t *testing.T) {
	for _, tt := range []struct {
		name string
		open func(testing.TB, *lab.Device, *android.Options) *android.Driver
	}{{"direct", openDirect}, {"adb server", openServer}} {
		t.Run(tt.name, func(t *testing.T) {
			dev := startLab(t)
			d := tt.open(t, dev, nil)
			if err := d.LaunchApp(ctx(t), "https://example.com/map"); err != nil {
				t.Fatal(err)
			}
			steps := []struct {
				rotation string
				from, to int
				want     float64
			}{
				{"0", 200, 500, 2.5},
				{"0", 400, 200, 1.25},
				{"1", 200, 400, 2.5},
				{"1", 300, 10, 1}, // no further out than the whole page
			}
			for _, s := range steps {
				if _, err := d.Shell(ctx(t), "settings put system user_rotation "+s.rotation); err != nil {
					t.Fatal(err)
				}
				c := pageCenter(t, d)
				if err := d.Pinch(ctx(t), c, s.from, s.to, 200*time.Millisecond); err != nil {
					t.Fatal(err)
				}
				st, err := dev.Phone.State("com.android.browser")
				if err != nil {
					t.Fatal(err)
				}
				if got, _ := st["zoom"].(float64); got != s.want {
					t.Fatalf("rotation %s, pinch %d→%d px at %v: zoom %v, want %v", s.rotation, s.from, s.to, c, st["zoom"], s.want)
				}
				src, err := d.Source(ctx(t))
				if err != nil {
					t.Fatal(err)
				}
				want := "Page, zoom " + strconv.Itoa(int(s.want*100+0.5)) + "%"
				if !regexp.MustCompile(regexp.QuoteMeta(want)).Match(src.Data) {
					t.Errorf("the dump does not say %q", want)
				}
			}
		})
	}
}
