package adbd

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

func init() {
	commands["app_process"] = cmdAppProcess
}

// Pincher is a phone with a two-finger gesture, for yadb's -pinch: the
// fingers move apart (zoom in) or together from one distance between them
// to another, centred on a point, over d.
type Pincher interface {
	Pinch(cx, cy, fromDist, toDist int, d time.Duration)
}

// javaHelpers are the app_process entry classes the simulated phone
// serves, by class name.
var javaHelpers = map[string]func(ctx context.Context, c *Cmd, args []string) int{
	"com.ysbing.yadb.Main": yadb,
}

// refusedHelpers are well-known helpers the simulated phone recognises and
// does not run, with why.
var refusedHelpers = map[string]string{
	"com.mobilenext.mobilecli.DeviceServer": "mobilecli's device server",
	"com.mobilenext.mobilecli.MjpegServer":  "mobilecli's MJPEG server",
	"com.mobilenext.mobilecli.AvcServer":    "mobilecli's H.264 server",
	"com.genymobile.scrcpy.Server":          "scrcpy's server",
}

// cmdAppProcess is `app_process [-d DISPLAY] [VM-OPTIONS] DIR CLASS ARGS…`,
// how tools start the Java helpers they push (yadb, mobilecli, scrcpy). The
// class path comes from -Djava.class.path= or $CLASSPATH and must exist on
// the phone, as a real runtime needs the jar or dex there.
func cmdAppProcess(ctx context.Context, c *Cmd) int {
	a := c.Args[1:]
	classPath := c.env("CLASSPATH")
	for len(a) > 0 && strings.HasPrefix(a[0], "-") {
		switch {
		case a[0] == "-d" && len(a) > 1:
			a = a[1:]
		case strings.HasPrefix(a[0], "-Djava.class.path="):
			classPath = strings.TrimPrefix(a[0], "-Djava.class.path=")
		}
		a = a[1:]
	}
	if len(a) < 2 {
		c.printf("Usage: app_process [java-options] cmd-dir start-class-name [options]\n")
		return 1
	}
	class, args := a[1], a[2:]
	var missing []string
	for _, p := range strings.Split(classPath, ":") {
		if _, err := c.fs().Stat(c.path(p)); p != "" && err != nil {
			missing = append(missing, p)
		}
	}
	run, served := javaHelpers[class]
	if classPath == "" || len(missing) > 0 || (!served && refusedHelpers[class] == "") {
		fmt.Fprintf(c.Stderr, "Exception in thread \"main\" java.lang.ClassNotFoundException: Didn't find class \"%s\" on path: DexPathList[[zip file \"%s\"],nativeLibraryDirectories=[/system/lib64, /system_ext/lib64]]\n", class, classPath)
		if len(missing) > 0 {
			fmt.Fprintf(c.Stderr, "(%s is not on the phone: push it first)\n", strings.Join(missing, ", "))
		}
		return 1
	}
	if !served {
		fmt.Fprintf(c.Stderr, "app_process: the simulated phone recognises %s (%s) but does not run it; see docs/sim-apps.md for the helpers it serves\n", refusedHelpers[class], class)
		return 1
	}
	return run(ctx, c, args)
}

// yadb serves the commands of yadb (github.com/ysbing/YADB), which
// Midscene pushes to type any text and to take screenshots and dumps.
func yadb(_ context.Context, c *Cmd, a []string) int {
	if len(a) == 0 {
		return c.fail(1, "yadb: no command (-keyboard TEXT, -keyboardClear, -layout [FILE], -screenshot [FILE], -touch X Y [MS], -pinch X Y FROM TO MS)")
	}
	ph := c.phone()
	switch a[0] {
	case "-keyboard":
		if len(a) < 2 {
			return c.fail(1, "yadb: -keyboard needs the text")
		}
		ph.InputText(strings.Join(a[1:], " "))
	case "-keyboardClear":
		for range focusedTextLen(ph) {
			ph.KeyEvent(67) // KEYCODE_DEL
		}
	case "-layout":
		file := "/data/local/tmp/yadb_layout_dump.xml"
		if len(a) > 1 {
			file = a[1]
		}
		xml, err := ph.DumpUI()
		if err != nil {
			return c.fail(1, "yadb: layout: %v", err)
		}
		if err := c.fs().WriteFile(c.path(file), xml, 0o644); err != nil {
			return c.fail(1, "yadb: layout: %s: %s", file, failMessage(err))
		}
	case "-screenshot":
		file := "/data/local/tmp/yadb_screenshot.png"
		if len(a) > 1 {
			file = a[1]
		}
		png, err := ph.Screenshot()
		if err != nil {
			return c.fail(1, "yadb: screenshot: %v", err)
		}
		if err := c.fs().WriteFile(c.path(file), png, 0o644); err != nil {
			return c.fail(1, "yadb: screenshot: %s: %s", file, failMessage(err))
		}
	case "-touch":
		n, ok := ints(a[1:min(len(a), 4)], min(len(a)-1, 3))
		if !ok || len(n) < 2 {
			return c.fail(1, "yadb: -touch X Y [MS]")
		}
		d := 1000
		if len(n) == 3 {
			d = n[2]
		}
		ph.Swipe(n[0], n[1], n[0], n[1], time.Duration(d)*time.Millisecond)
	case "-pinch":
		n, ok := ints(a[1:], 5)
		if !ok {
			return c.fail(1, "yadb: -pinch CENTER_X CENTER_Y FROM_DISTANCE TO_DISTANCE MS")
		}
		p, ok := ph.(Pincher)
		if !ok {
			return c.fail(1, "yadb: -pinch: this simulated phone has no two-finger gestures")
		}
		p.Pinch(n[0], n[1], n[2], n[3], time.Duration(n[4])*time.Millisecond)
	default:
		return c.fail(1, "yadb: unknown command %s", a[0])
	}
	return 0
}

// focusedTextLen is the length in characters of the focused field's text,
// read from the UI dump as yadb reads it through accessibility.
func focusedTextLen(ph Phone) int {
	dump, err := ph.DumpUI()
	if err != nil {
		return 0
	}
	d := xml.NewDecoder(bytes.NewReader(dump))
	for {
		tok, err := d.Token()
		if err == io.EOF || err != nil {
			return 0
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		attr := map[string]string{}
		for _, at := range se.Attr {
			attr[at.Name.Local] = at.Value
		}
		if attr["focused"] == "true" && strings.HasSuffix(attr["class"], "EditText") {
			n, _ := strconv.Atoi(attr["text-length"])
			if n == 0 {
				n = len([]rune(attr["text"]))
			}
			return n
		}
	}
}
