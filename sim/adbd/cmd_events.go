package adbd

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

func init() {
	commands["getevent"] = cmdGetevent
	commands["sendevent"] = cmdSendevent
}

// Linux input event types and codes (linux/input-event-codes.h).
const (
	evSyn = 0
	evKey = 1
	evAbs = 3

	synReport = 0

	keyVolumeDown = 114
	keyVolumeUp   = 115
	keyPower      = 116
	btnTouch      = 0x14a

	absMTSlot       = 0x2f
	absMTTouchMajor = 0x30
	absMTPositionX  = 0x35
	absMTPositionY  = 0x36
	absMTTrackingID = 0x39
	absMTPressure   = 0x3a
)

// The input devices: the buttons and a multitouch panel (protocol B, ten
// slots). The panel's axes run 0–panelMax whatever the display's size, as
// many touch controllers' do, so a client must scale screen pixels to
// them (getevent -p gives the ranges).
const (
	keysDevice  = "/dev/input/event0"
	touchDevice = "/dev/input/event1"
	panelMax    = 4095
	touchSlots  = 10
)

// eventKeycodes maps the button device's keys to Android key codes.
var eventKeycodes = map[int]int{keyVolumeDown: 25, keyVolumeUp: 24, keyPower: 26}

type absAxis struct {
	code     int
	name     string
	min, max int
}

var touchAxes = []absAxis{
	{absMTSlot, "ABS_MT_SLOT", 0, touchSlots - 1},
	{absMTTouchMajor, "ABS_MT_TOUCH_MAJOR", 0, 255},
	{absMTPositionX, "ABS_MT_POSITION_X", 0, panelMax},
	{absMTPositionY, "ABS_MT_POSITION_Y", 0, panelMax},
	{absMTTrackingID, "ABS_MT_TRACKING_ID", 0, 65535},
	{absMTPressure, "ABS_MT_PRESSURE", 0, 255},
}

// cmdGetevent is `getevent [-p] [-l] [-q] [DEVICE]`: with -p it lists the
// devices and what they report, as tools read the touch panel's ranges;
// without, it lists them and then streams nothing until stopped (the
// simulated phone's input does not come from a panel).
func cmdGetevent(ctx context.Context, c *Cmd) int {
	props, labels, quiet, only := false, false, false, ""
	for _, a := range c.Args[1:] {
		switch {
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for _, f := range a[1:] {
				switch f {
				case 'p', 'i':
					props = true
				case 'l':
					labels = true
				case 'q':
					quiet = true
				case 't', 'n', 's', 'S', 'v', 'd', 'r':
				case 'c':
				default:
					c.printf("Usage: getevent [-t] [-n] [-s switchmask] [-S] [-v [mask]] [-d] [-p] [-i] [-l] [-q] [-c count] [-r] [device]\n")
					return 1
				}
			}
		default:
			only = a
		}
	}
	if only != "" && only != keysDevice && only != touchDevice {
		return c.fail(1, "could not open %s, No such file or directory", only)
	}
	code := func(n int, name string) string {
		if labels {
			return fmt.Sprintf("%-20s", name)
		}
		return fmt.Sprintf("%04x", n)
	}
	if only == "" {
		c.printf("add device 1: %s\n", touchDevice)
	}
	if only == "" || only == touchDevice {
		if !quiet {
			if only != "" {
				c.printf("add device 1: %s\n", touchDevice)
			}
			c.printf("  name:     \"apex_touchscreen\"\n")
		}
		if props {
			c.printf("  events:\n    KEY (0001): %s\n", code(btnTouch, "BTN_TOUCH"))
			for i, ax := range touchAxes {
				lead := "    ABS (0003): "
				if i > 0 {
					lead = "                "
				}
				c.printf("%s%s : value 0, min %d, max %d, fuzz 0, flat 0, resolution 0\n", lead, code(ax.code, ax.name), ax.min, ax.max)
			}
			c.printf("  input props:\n    INPUT_PROP_DIRECT\n")
		}
	}
	if only == "" || only == keysDevice {
		c.printf("add device 2: %s\n", keysDevice)
		if !quiet {
			c.printf("  name:     \"gpio-keys\"\n")
		}
		if props {
			c.printf("  events:\n    KEY (0001): %s %s %s\n", code(keyVolumeDown, "KEY_VOLUMEDOWN"), code(keyVolumeUp, "KEY_VOLUMEUP"), code(keyPower, "KEY_POWER"))
			c.printf("  input props:\n    <none>\n")
		}
	}
	if props {
		return 0
	}
	<-ctx.Done()
	return 130
}

// cmdSendevent is `sendevent DEVICE TYPE CODE VALUE`: one input event
// written to a device, as a client with the shell's input group may.
func cmdSendevent(_ context.Context, c *Cmd) int {
	a := c.Args[1:]
	if len(a) != 4 {
		return c.fail(1, "usage: sendevent DEVICE TYPE CODE VALUE\n\nSends a Linux input event.")
	}
	var n [3]int64
	for i, s := range a[1:] {
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return c.fail(1, "sendevent: bad %s '%s'", [3]string{"type", "code", "value"}[i], s)
		}
		n[i] = v
	}
	typ, code, value := int(n[0]), int(n[1]), int32(uint32(n[2])) // 4294967295 is -1, as the kernel reads it
	switch a[0] {
	case keysDevice:
		if k, ok := eventKeycodes[code]; ok && typ == evKey && value == 0 {
			c.phone().KeyEvent(k) // on release, as the framework delivers a press
		}
	case touchDevice:
		c.s.mu.Lock()
		if c.s.panel == nil {
			c.s.panel = &panel{}
		}
		g := c.s.panel.event(typ, code, int(value), time.Now())
		c.s.mu.Unlock()
		if g != nil {
			g.deliver(c)
		}
	default:
		return c.fail(1, "could not open %s, No such file or directory", a[0])
	}
	return 0
}

// panel follows the multitouch protocol B events written to the touch
// device. A gesture is delivered when the last finger lifts: one finger
// is a swipe (or tap, or long press) from where it went down to where it
// came up; two or more are a pinch of the first two.
type panel struct {
	slot    int
	fingers [touchSlots]*finger
	done    []finger // lifted fingers of the gesture in progress
}

type finger struct {
	x, y         int // panel units, as written
	fromX, fromY int
	down         time.Time
	lifted       time.Time
	placed       bool // its first SYN_REPORT has fixed where it went down
	up           bool // its tracking id went to -1
}

// gesture is what lifting the last finger delivers.
type gesture struct{ strokes []finger }

func (p *panel) event(typ, code, value int, now time.Time) *gesture {
	switch typ {
	case evAbs:
		switch code {
		case absMTSlot:
			if value >= 0 && value < touchSlots {
				p.slot = value
			}
		case absMTTrackingID:
			switch {
			case value < 0 && p.fingers[p.slot] != nil:
				p.fingers[p.slot].up = true
			case value >= 0 && p.fingers[p.slot] == nil:
				p.fingers[p.slot] = &finger{down: now}
			}
		case absMTPositionX, absMTPositionY:
			if f := p.fingers[p.slot]; f != nil {
				if code == absMTPositionX {
					f.x = value
				} else {
					f.y = value
				}
			}
		}
	case evSyn:
		if code != synReport {
			return nil
		}
		down := 0
		for i, f := range p.fingers {
			if f == nil {
				continue
			}
			if !f.placed {
				f.fromX, f.fromY, f.placed = f.x, f.y, true
			}
			if f.up {
				f.lifted = now
				p.done = append(p.done, *f)
				p.fingers[i] = nil
				continue
			}
			down++
		}
		if down == 0 && len(p.done) > 0 {
			g := &gesture{strokes: p.done}
			p.done = nil
			return g
		}
	}
	return nil
}

// deliver hands the gesture to the phone in screen pixels.
func (g *gesture) deliver(c *Cmd) {
	ph := c.phone()
	w, h, _ := ph.Display()
	rot := ph.Rotation()
	at := func(px, py int) (int, int) { return panelToScreen(px, py, w, h, rot) }
	a := g.strokes[0]
	x0, y0 := at(a.fromX, a.fromY)
	x1, y1 := at(a.x, a.y)
	if len(g.strokes) == 1 {
		ph.Swipe(x0, y0, x1, y1, a.lifted.Sub(a.down))
		return
	}
	b := g.strokes[1]
	u0, v0 := at(b.fromX, b.fromY)
	u1, v1 := at(b.x, b.y)
	from := int(math.Round(math.Hypot(float64(u0-x0), float64(v0-y0))))
	to := int(math.Round(math.Hypot(float64(u1-x1), float64(v1-y1))))
	if p, ok := ph.(Pincher); ok && from > 0 && to > 0 {
		start, end := a.down, a.lifted
		if b.down.Before(start) {
			start = b.down
		}
		if b.lifted.After(end) {
			end = b.lifted
		}
		p.Pinch((x0+u0)/2, (y0+v0)/2, from, to, end.Sub(start))
	}
}

// panelToScreen maps panel units to screen pixels: the panel is fixed to
// the phone's natural (portrait) w×h, and the screen turns with the
// rotation (Surface.ROTATION_90 puts the natural top edge on the left).
func panelToScreen(px, py, w, h, rot int) (int, int) {
	nx := px * w / (panelMax + 1)
	ny := py * h / (panelMax + 1)
	switch rot {
	case 1:
		return ny, w - 1 - nx
	case 2:
		return w - 1 - nx, h - 1 - ny
	case 3:
		return h - 1 - ny, nx
	}
	return nx, ny
}
