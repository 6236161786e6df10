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
	default:
		return inputUsage(c)
	}
	return 0
}

func inputUsage(c *Cmd) int {
	c.printf("Usage: input [<source>] <command> [<arg>...]\n\nThe commands and default sources are:\n")
	c.printf("      text <string> (Default: touchscreen)\n      keyevent [--longpress] <key code number or name> ... (Default: keyboard)\n")
	c.printf("      tap <x> <y> (Default: touchscreen)\n      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n")
	c.printf("      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n      press (Default: trackball)\n")
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

func cmdScreencap(_ context.Context, c *Cmd) int {
	png, file := false, ""
	a := c.Args[1:]
	for i := 0; i < len(a); i++ {
		switch a[i] {
		case "-p":
			png = true
		case "-d":
			i++ // one display; an id (even "null", which Midscene sends) selects it
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
