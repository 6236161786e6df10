package adbd

import (
	"bytes"
	"context"
	"encoding/binary"
	"strconv"
	"strings"
	"time"
)

func init() {
	commands["input"] = cmdInput
	commands["uiautomator"] = cmdUiautomator
	commands["screencap"] = cmdScreencap
}

// inputSources may precede an input command (`input touchscreen tap …`).
var inputSources = map[string]bool{"keyboard": true, "mouse": true, "joystick": true, "touchnavigation": true,
	"touchpad": true, "trackball": true, "stylus": true, "dpad": true, "gesture": true, "touchscreen": true, "gamepad": true}

const keycodePaste = 279

func cmdInput(_ context.Context, c *Cmd) int {
	a := c.Args[1:]
	if len(a) > 0 && inputSources[a[0]] {
		a = a[1:]
	}
	if len(a) > 0 && a[0] == "-d" && len(a) > 1 {
		a = a[2:]
	}
	if len(a) == 0 {
		return inputUsage(c)
	}
	ph := c.phone()
	switch a[0] {
	case "tap":
		xy, ok := ints(a[1:], 2)
		if !ok {
			return inputUsage(c)
		}
		ph.Tap(xy[0], xy[1])
	case "swipe", "draganddrop":
		if len(a) != 5 && len(a) != 6 {
			return inputUsage(c)
		}
		pts, ok := ints(a[1:], len(a)-1)
		if !ok {
			return inputUsage(c)
		}
		d := 300
		if len(pts) == 5 {
			d = pts[4]
		}
		ph.Swipe(pts[0], pts[1], pts[2], pts[3], time.Duration(d)*time.Millisecond)
	case "text":
		if len(a) < 2 {
			return inputUsage(c)
		}
		text := strings.ReplaceAll(strings.Join(a[1:], " "), "%s", " ")
		for _, r := range text {
			if r > 0x7e || (r < 0x20 && r != '\n' && r != '\t') {
				// Android's `input text` maps characters through the virtual
				// keyboard's key map, which has no non-ASCII keys.
				return c.fail(1, "cannot type %q: `input text` carries ASCII only; use `am broadcast -a ADB_INPUT_B64 --es msg BASE64` (ADBKeyBoard)", string(r))
			}
		}
		ph.InputText(text)
	case "keyevent", "press":
		var codes []int
		for _, k := range a[1:] {
			if k == "--longpress" || k == "--doubletap" {
				continue
			}
			code, ok := keyCode(k)
			if !ok {
				return c.fail(1, "unknown key %q; use a KEYCODE_ name or a number", k)
			}
			codes = append(codes, code)
		}
		if a[0] == "press" {
			codes = []int{23}
		}
		if len(codes) == 0 {
			return inputUsage(c)
		}
		for _, code := range codes {
			c.s.mu.Lock()
			clip := c.s.clipboard
			c.s.mu.Unlock()
			if code == keycodePaste && clip != "" {
				ph.InputText(clip)
				continue
			}
			ph.KeyEvent(code)
		}
	case "keycombination":
		return keyCombination(c, a[1:])
	case "motionevent":
		return motionEvent(c, a[1:])
	default:
		return inputUsage(c)
	}
	return 0
}

// modifierKeys are held while the other keys of a keycombination are pressed.
var modifierKeys = map[int]string{57: "alt", 58: "alt", 59: "shift", 60: "shift", 113: "ctrl", 114: "ctrl", 117: "meta", 118: "meta"}

// shifted is what shift turns a typing key's character into (US layout).
var shifted = map[rune]rune{'1': '!', '2': '@', '3': '#', '4': '$', '5': '%', '6': '^', '7': '&', '8': '*', '9': '(', '0': ')',
	'-': '_', '=': '+', '[': '{', ']': '}', '\\': '|', ';': ':', '\'': '"', ',': '<', '.': '>', '/': '?', '`': '~'}

// keyCombination is `input keycombination [-t MS] KEY…`: the modifiers are
// held while the other keys are pressed. Shift types the shifted
// character, ctrl+V pastes the clipboard; other chords with ctrl, alt or
// meta type nothing (the simulated apps bind no shortcuts).
func keyCombination(c *Cmd, a []string) int {
	if len(a) > 1 && a[0] == "-t" {
		a = a[2:]
	}
	if len(a) < 2 {
		return inputUsage(c)
	}
	held := map[string]bool{}
	var keys []int
	for _, k := range a {
		code, ok := keyCode(k)
		if !ok {
			return c.fail(1, "unknown key %q; use a KEYCODE_ name or a number", k)
		}
		if m, ok := modifierKeys[code]; ok {
			held[m] = true
		} else {
			keys = append(keys, code)
		}
	}
	ph := c.phone()
	for _, code := range keys {
		r, typing := KeyChar(code)
		switch {
		case held["ctrl"] && code == 50: // KEYCODE_V
			c.s.mu.Lock()
			clip := c.s.clipboard
			c.s.mu.Unlock()
			ph.InputText(clip)
		case held["ctrl"] || held["alt"] || held["meta"]:
		case typing && held["shift"]:
			if s, ok := shifted[r]; ok {
				r = s
			}
			ph.InputText(strings.ToUpper(string(r)))
		default:
			ph.KeyEvent(code)
		}
	}
	return 0
}

// touchDown is a finger put down by `input motionevent DOWN`.
type touchDown struct {
	x, y int
	at   time.Time
}

// motionEvent is `input motionevent DOWN|MOVE|UP|CANCEL X Y`: one finger;
// the gesture is delivered when it lifts, as a swipe from where it went
// down to where it came up (a tap or long press when it did not move).
func motionEvent(c *Cmd, a []string) int {
	if len(a) != 3 {
		return inputUsage(c)
	}
	xy, ok := ints(a[1:], 2)
	if !ok {
		return inputUsage(c)
	}
	c.s.mu.Lock()
	t := c.s.touch
	switch strings.ToUpper(a[0]) {
	case "DOWN":
		c.s.touch = &touchDown{x: xy[0], y: xy[1], at: time.Now()}
	case "MOVE": // the path between is not modelled
	case "CANCEL", "UP":
		c.s.touch = nil
	default:
		c.s.mu.Unlock()
		return inputUsage(c)
	}
	c.s.mu.Unlock()
	if strings.EqualFold(a[0], "UP") && t != nil {
		c.phone().Swipe(t.x, t.y, xy[0], xy[1], time.Since(t.at))
	}
	return 0
}

func inputUsage(c *Cmd) int {
	c.printf("Usage: input [<source>] <command> [<arg>...]\n\nThe commands and default sources are:\n")
	c.printf("      text <string> (Default: touchscreen)\n      keyevent [--longpress] <key code number or name> ... (Default: keyboard)\n")
	c.printf("      tap <x> <y> (Default: touchscreen)\n      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n")
	c.printf("      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n      press (Default: trackball)\n")
	c.printf("      keycombination [-t duration(ms)] <key code 1> <key code 2> ... (Default: keyboard)\n")
	c.printf("      motionevent <DOWN|UP|MOVE|CANCEL> <x> <y> (Default: touchscreen)\n")
	return 1
}

// ints parses exactly n integers (floats are truncated, as input does).
func ints(a []string, n int) ([]int, bool) {
	if len(a) != n {
		return nil, false
	}
	out := make([]int, n)
	for i, s := range a {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, false
		}
		out[i] = int(f)
	}
	return out, true
}

func cmdUiautomator(_ context.Context, c *Cmd) int {
	a := c.Args[1:]
	if len(a) == 0 || a[0] != "dump" {
		c.printf("Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\nhelp: displays help message\n\ndump: creates an XML dump of current UI hierarchy\n")
		if len(a) > 0 && a[0] == "help" {
			return 0
		}
		return 1
	}
	file, windows := "/sdcard/window_dump.xml", false
	for _, x := range a[1:] {
		switch {
		case x == "--windows":
			windows = true
		case !strings.HasPrefix(x, "-"):
			file = x
		}
	}
	xml, err := c.phone().DumpUI()
	if err != nil {
		c.printf("ERROR: null root node returned by UiTestAutomationBridge.\n")
		return 1
	}
	if !windows {
		pkg, _ := c.phone().Foreground()
		xml = activeWindow(xml, pkg)
	}
	switch file {
	case "/dev/tty", "/dev/stdout":
		c.Stdout.Write(xml)
	default:
		if err := c.fs().WriteFile(c.path(file), xml, 0o644); err != nil {
			c.printf("ERROR: could not write %s: %s\n", file, failMessage(err))
			return 1
		}
	}
	c.printf("UI hierchary dumped to: %s\n", file)
	return 0
}

// Raw screencap pixel format (android.graphics.PixelFormat.RGBA_8888) and
// the sRGB dataspace Android 9+ writes after it.
const (
	pixelFormatRGBA8888 = 1
	dataspaceSRGB       = 0x8C20000
)

// physicalDisplayID is the one display's id, as SurfaceFlinger reports it.
const physicalDisplayID = "4619827259835644672"

// validDisplayID accepts the display's physical id, its logical id 0, and
// "null", which Midscene sends when no display was chosen (screencap reads
// it as 0).
func validDisplayID(id string) bool {
	return id == physicalDisplayID || id == "0" || id == "null"
}

func cmdScreencap(_ context.Context, c *Cmd) int {
	png, file := false, ""
	a := c.Args[1:]
	for i := 0; i < len(a); i++ {
		switch a[i] {
		case "-p":
			png = true
		case "-d":
			i++
			if i < len(a) && !validDisplayID(a[i]) {
				return c.fail(1, "Display ID %s is not valid. Valid display IDs are: %s (0 is accepted too)", a[i], physicalDisplayID)
			}
		case "-h":
			c.printf("usage: screencap [-hp] [-d display-id] [FILENAME]\n   -h: this message\n   -p: save the file as a png.\n   -d: specify the physical display ID to capture\n")
			return 0
		default:
			file = a[i]
		}
	}
	if strings.HasSuffix(file, ".png") {
		png = true
	}
	var out []byte
	if png {
		b, err := c.phone().Screenshot()
		if err != nil {
			return c.fail(1, "Failed to take screenshot: %v", err)
		}
		out = b
	} else {
		img, err := c.phone().Frame()
		if err != nil {
			return c.fail(1, "Failed to take screenshot: %v", err)
		}
		w, h := img.Rect.Dx(), img.Rect.Dy()
		var buf bytes.Buffer
		hdr := []uint32{uint32(w), uint32(h), pixelFormatRGBA8888}
		if sdk, _ := strconv.Atoi(c.s.props()["ro.build.version.sdk"]); sdk >= 28 || sdk == 0 {
			hdr = append(hdr, dataspaceSRGB)
		}
		binary.Write(&buf, binary.LittleEndian, hdr)
		for y := 0; y < h; y++ {
			off := img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y)
			buf.Write(img.Pix[off : off+4*w])
		}
		out = buf.Bytes()
	}
	if file == "" {
		c.Stdout.Write(out)
		return 0
	}
	if err := c.fs().WriteFile(c.path(file), out, 0o644); err != nil {
		return c.fail(1, "Error opening file: %s (%s)", file, failMessage(err))
	}
	return 0
}
