package android

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/internal/lazy"
)

// Android's `input` has no two-finger gesture (`input motionevent` moves
// one pointer), so Pinch writes the touch panel's own multitouch events
// (protocol B) with `sendevent`, as the kernel driver would. That needs
// the shell to write /dev/input/event* (it is in the input group on stock
// builds; some vendor builds deny it, and Pinch then fails with the
// device's message), and a panel whose axes follow the display's natural
// orientation (a panel mounted turned needs its own mapping).

// panelProbe asks for the input devices and the display's rotation in one
// round trip.
const panelProbe = `getevent -pl 2>&1; echo @@rotation; dumpsys input 2>/dev/null | grep SurfaceOrientation`

// touchPanel is a multitouch input device and the ranges of its axes.
type touchPanel struct {
	path                   string
	minX, maxX, minY, maxY int
	maxID                  int
	pressure, major        bool // the panel reports them: send a value
}

var (
	addDeviceRe = lazy.Regexp(`^add device \d+: (\S+)`)
	absAxisRe   = lazy.Regexp(`(ABS_MT_[A-Z_]+)\s*: value -?\d+, min (-?\d+), max (-?\d+)`)
	rotationRe  = lazy.Regexp(`SurfaceOrientation:\s*(\d)`)
)

// parsePanel finds the first device of `getevent -pl` with multitouch
// slots and positions, and the rotation dumpsys reports after it.
func parsePanel(out string) (touchPanel, int, error) {
	devices, rest, _ := strings.Cut(out, "@@rotation")
	var cur, found touchPanel
	axes := map[string]bool{}
	done := func() bool {
		if axes["ABS_MT_SLOT"] && axes["ABS_MT_POSITION_X"] && axes["ABS_MT_POSITION_Y"] && axes["ABS_MT_TRACKING_ID"] {
			found = cur
			return true
		}
		return false
	}
	for _, line := range strings.Split(devices, "\n") {
		if m := addDeviceRe().FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			if done() {
				break
			}
			cur, axes = touchPanel{path: m[1]}, map[string]bool{}
			continue
		}
		m := absAxisRe().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		lo, _ := strconv.Atoi(m[2])
		hi, _ := strconv.Atoi(m[3])
		axes[m[1]] = true
		switch m[1] {
		case "ABS_MT_POSITION_X":
			cur.minX, cur.maxX = lo, hi
		case "ABS_MT_POSITION_Y":
			cur.minY, cur.maxY = lo, hi
		case "ABS_MT_TRACKING_ID":
			cur.maxID = hi
		case "ABS_MT_PRESSURE":
			cur.pressure = true
		case "ABS_MT_TOUCH_MAJOR":
			cur.major = true
		}
	}
	if found.path == "" && !done() {
		return touchPanel{}, 0, fmt.Errorf("no multitouch panel in `getevent -pl` (a device with ABS_MT_SLOT and ABS_MT_POSITION_X/Y): %w", device.ErrUnsupported)
	}
	if found.maxX <= found.minX || found.maxY <= found.minY {
		return touchPanel{}, 0, fmt.Errorf("touch panel %s reports empty axes (x %d–%d, y %d–%d)", found.path, found.minX, found.maxX, found.minY, found.maxY)
	}
	rot := 0
	if m := rotationRe().FindStringSubmatch(rest); m != nil {
		rot, _ = strconv.Atoi(m[1])
	}
	return found, rot, nil
}

// toPanel maps a screen pixel (the display turned by rot) to panel units;
// w and h are the display's natural (portrait) size.
func (p touchPanel) toPanel(x, y, w, h, rot int) (int, int) {
	nx, ny := x, y
	switch rot {
	case 1:
		nx, ny = w-1-y, x
	case 2:
		nx, ny = w-1-x, h-1-y
	case 3:
		nx, ny = y, h-1-x
	}
	return p.minX + nx*(p.maxX-p.minX+1)/w, p.minY + ny*(p.maxY-p.minY+1)/h
}

// pinchSteps is how many moves a pinch makes between down and up.
const pinchSteps = 10

// pinchScript is the shell line that puts two fingers down on a
// horizontal line through center, moves them from `from` pixels apart to
// `to` apart in pinchSteps over d, and lifts them.
func (p touchPanel) pinchScript(center device.Point, from, to, w, h, rot int, d time.Duration) string {
	var b strings.Builder
	ev := func(typ, code, value int) {
		fmt.Fprintf(&b, "sendevent %s %d %d %d; ", p.path, typ, code, value)
	}
	const (
		evSyn, evKey, evAbs                           = 0, 1, 3
		slot, major, posX, posY, trackingID, pressure = 0x2f, 0x30, 0x35, 0x36, 0x39, 0x3a
		btnTouch                                      = 0x14a
	)
	id := 1000
	if p.maxID < id+1 {
		id = 0
	}
	place := func(span int, first bool) {
		for i, dx := range []int{-span / 2, span - span/2} {
			x, y := p.toPanel(center.X+dx, center.Y, w, h, rot)
			ev(evAbs, slot, i)
			if first {
				ev(evAbs, trackingID, id+i)
				if p.major {
					ev(evAbs, major, 6)
				}
				if p.pressure {
					ev(evAbs, pressure, 60)
				}
			}
			ev(evAbs, posX, x)
			ev(evAbs, posY, y)
		}
		if first {
			ev(evKey, btnTouch, 1)
		}
		ev(evSyn, 0, 0)
	}
	pause := fmt.Sprintf("sleep %.3f; ", (d / pinchSteps).Seconds())
	place(from, true)
	for i := 1; i <= pinchSteps; i++ {
		b.WriteString(pause)
		place(from+(to-from)*i/pinchSteps, false)
	}
	for i := range 2 {
		ev(evAbs, slot, i)
		ev(evAbs, trackingID, -1)
	}
	ev(evKey, btnTouch, 0)
	ev(evSyn, 0, 0)
	return strings.TrimSuffix(b.String(), "; ")
}

// Pinch puts two fingers on a horizontal line through center, from pixels
// apart, and moves them to `to` apart over dur (default 500 ms): apart
// zooms in, together zooms out.
func (d *Driver) Pinch(ctx context.Context, center device.Point, from, to int, dur time.Duration) error {
	if dur <= 0 {
		dur = 500 * time.Millisecond
	}
	info, err := d.Info(ctx)
	if err != nil {
		return err
	}
	var panel touchPanel
	var rot int
	err = d.call(ctx, "find touch panel", true, d.opts.Timeout, func(ctx context.Context) error {
		out, err := d.shell(ctx, panelProbe)
		if err != nil {
			return err
		}
		panel, rot, err = parsePanel(out)
		return err
	})
	if err != nil {
		return fmt.Errorf("android %s: pinch: %w", d.serial, err)
	}
	script := panel.pinchScript(center, from, to, info.Width, info.Height, rot, dur)
	return d.call(ctx, "pinch", false, d.opts.Timeout+dur, func(ctx context.Context) error {
		// set -e stops at the first event the device refuses.
		out, err := d.shell(ctx, "(set -e; "+script+") 2>&1; echo @@exit=$?")
		if err != nil {
			return err
		}
		if !strings.Contains(out, "@@exit=0") {
			return fmt.Errorf("sendevent to %s failed: %s (the shell may not write input devices on this build)", panel.path, strings.TrimSpace(strings.Split(out, "@@exit")[0]))
		}
		return nil
	})
}
