package lab

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/sim/adbd/adbdtest"
)

// npmClient returns node and the script's path in test/npm, skipping the
// test when either is missing.
func npmClient(t *testing.T, pkg, script string) (node, path string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	dir, _ := filepath.Abs("../../test/npm")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg)); err != nil {
		t.Skipf("test/npm/node_modules/%s missing: run `make deps-npm`", pkg)
	}
	return node, filepath.Join(dir, script)
}

// TestMidsceneAndroidDevice drives a simulated phone with Midscene's
// device API (@midscene/android, pinned in test/npm) through Google's adb:
// connect, screenshot, launch by name and by URL, typing text that needs
// yadb, clearInput and keyboardPress.
func TestMidsceneAndroidDevice(t *testing.T) {
	d, adb, serial, next, reply := midsceneOn(t, "midscene-android-client.mjs")
	login := func(key string) any {
		st, _ := d.Phone.State("com.apex.login")
		return st[key]
	}

	m := next("connected")
	if size, _ := m["size"].(map[string]any); size["width"] == nil || m["png"] != true || m["shot"].(float64) < 10000 {
		t.Fatalf("connect/size/screenshot: %v", m)
	}
	reply(nil)
	next("launched Settings")
	if fg, _ := d.Phone.Foreground(); fg != "com.android.settings" {
		t.Fatalf("launch('Settings') opened %q", fg)
	}
	reply(nil)
	next("launched a URL")
	st, _ := d.Phone.State("com.android.browser")
	if fg, _ := d.Phone.Foreground(); fg != "com.android.browser" || st["url"] != "https://example.com/midscene" {
		t.Fatalf("launch(url): foreground %q, browser url %v", fg, st["url"])
	}
	reply(nil)
	next("launched Login")
	field := find(dump(t, adb, serial).Root, "Username")
	if field == nil {
		t.Fatal("no Username field on the Login screen")
	}
	x, y := field.Bounds.Center()
	w, _, _ := d.Phone.Display()
	reply(map[string]int{"x": x, "y": y, "width": w})
	next("typed")
	if got := login("username"); got != "中文 $HOME `x` \"q\"" {
		t.Fatalf("keyboardType typed %q", got)
	}
	reply(nil)
	next("cleared")
	if got := login("username"); got != "" {
		t.Fatalf("after clearInput the field holds %q", got)
	}
	reply(nil)
	next("pressed a")
	if got := login("username"); got != "a" {
		t.Fatalf("keyboardPress('a') typed %q", got)
	}
	reply(nil)
	m = next("hid the keyboard")
	focused := find(dump(t, adb, serial).Root, "a")
	if m["hid"] != true || d.Phone.KeyboardShown() || focused == nil || !focused.Focused {
		t.Fatalf("hideKeyboard: said %v, keyboard up %v, the field %+v (it keeps its focus)", m["hid"], d.Phone.KeyboardShown(), focused)
	}
	reply(nil)
	next("back")
	if fg, _ := d.Phone.Foreground(); fg == "com.apex.login" {
		t.Fatal("back() after the keyboard was hidden stayed on the login screen")
	}
	reply(nil)
	next("launched the map")
	page := find(dump(t, adb, serial).Root, "Page, zoom 100%")
	if page == nil {
		t.Fatal("no page in the Browser")
	}
	px, py := page.Bounds.Center()
	reply(map[string]int{"x": px, "y": py, "width": w})
	next("pinched")
	if st, _ := d.Phone.State("com.android.browser"); st["zoom"] != 2.0 {
		t.Fatalf("Pinch out: zoom %v, want 2", st["zoom"])
	}
	reply(nil)
	next("home")
	if fg, _ := d.Phone.Foreground(); fg != "com.apex.launcher" {
		t.Fatalf("home(): %s in front", fg)
	}
	reply(nil)
	next("recent apps")
	if find(dump(t, adb, serial).Root, "Clear all") == nil {
		t.Fatal("recentApps() did not open the overview")
	}
	reply(nil)
}

// midsceneOn starts a simulated phone, Google's adb connected to it as
// serial, and the Midscene client script (in test/npm) driving it. It
// returns next, which reads the client's next step (skipping Midscene's
// own log lines) and fails unless it is want, and reply, which answers it:
// the client waits for the reply before going on.
func midsceneOn(t *testing.T, script string) (d *Device, adb *adbdtest.ADB, serial string, next func(want string) map[string]any, reply func(any)) {
	t.Helper()
	node, script := npmClient(t, "@midscene/android", script)
	adb = adbdtest.Start(t)
	d = startLab(t, Options{}).Devices()[0]
	serial = adb.Connect(d.Addr)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, node, script, serial, adb.Bin, fmt.Sprint(adb.Port))
	cmd.Dir = filepath.Dir(script)
	cmd.WaitDelay = 5 * time.Second // a child left behind must not hold the pipes
	// AndroidAgent refuses to start without a model name, and its actions
	// (terminate, runAdbShell) without a visual model family; none is called.
	// MIDSCENE_RUN_DIR keeps its logs and reports out of the source tree.
	cmd.Env = append(os.Environ(), "MIDSCENE_MODEL_NAME=unused", "MIDSCENE_MODEL_FAMILY=qwen2.5-vl", "MIDSCENE_MODEL_API_KEY=unused", "MIDSCENE_MODEL_BASE_URL=http://127.0.0.1:9",
		"MIDSCENE_RUN_DIR="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("midscene client stderr:\n%s", stderr.String())
		}
	})
	out := bufio.NewScanner(stdout)
	next = func(want string) map[string]any {
		t.Helper()
		for out.Scan() {
			var m map[string]any
			if json.Unmarshal(out.Bytes(), &m) != nil || m["step"] == nil {
				continue
			}
			if m["step"] != want {
				t.Fatalf("client step %v; want %q", m["step"], want)
			}
			return m
		}
		t.Fatalf("the client ended before step %q: %v", want, out.Err())
		return nil
	}
	reply = func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(stdin, "%s\n", b)
	}
	return d, adb, serial, next, reply
}

// TestMidsceneAndroidGestures drives the rest of Midscene's device API on
// a simulated phone and checks each call's effect: the scrolls, pulls and
// drags move the Notes list (the sideways ones leave it where it is: no
// simulated app scrolls sideways), longPress opens a note's menu,
// mouseDoubleClick taps twice, and the agent's terminate and runAdbShell
// and the device's forceScreenshot (yadb) do what they say.
func TestMidsceneAndroidGestures(t *testing.T) {
	d, adb, serial, next, reply := midsceneOn(t, "midscene-android-gestures-client.mjs")

	st, _ := d.Phone.State("com.apex.notes")
	notes, _ := st["notes"].([]any)
	if len(notes) < 20 {
		t.Fatalf("Notes starts with %d notes; the scrolls need a long list", len(notes))
	}
	title := func(i int) string { return fmt.Sprint(notes[i].(map[string]any)["title"]) }
	first, last := title(0), title(len(notes)-1)
	w, h, _ := d.Phone.Display()
	// shows checks, after a step, which ends of the list are on screen.
	shows := func(step string, firstShown, lastShown bool) {
		t.Helper()
		root := dump(t, adb, serial).Root
		if fg, _ := d.Phone.Foreground(); fg != "com.apex.notes" {
			t.Fatalf("after %s: %s in front", step, fg)
		}
		if got := find(root, first) != nil; got != firstShown {
			t.Fatalf("after %s: the first note %q on screen %v, want %v", step, first, got, firstShown)
		}
		if got := find(root, last) != nil; got != lastShown {
			t.Fatalf("after %s: the last note %q on screen %v, want %v", step, last, got, lastShown)
		}
	}
	for _, s := range []struct {
		step            string
		first, lastNote bool
	}{
		{"launched Notes", true, false},
		{"scrolled down", false, false},
		{"scrolled up", true, false},
		{"scrolled to the bottom", false, true},
		{"scrolled to the top", true, false},
		{"pulled up", false, false},
		{"pulled down", true, false},
		{"dragged up", false, false},
		{"dragged down", true, false},
	} {
		next(s.step)
		shows(s.step, s.first, s.lastNote)
		reply(nil)
	}
	next("scrolled sideways")
	shows("scrolled sideways", true, false)
	n := find(dump(t, adb, serial).Root, first)
	x, y := n.Bounds.Center()
	reply(map[string]int{"x": x, "y": y, "width": w})
	next("long pressed")
	if find(dump(t, adb, serial).Root, "Delete note?") == nil {
		t.Fatal("longPress on a note did not open its delete dialog")
	}
	d.Phone.KeyEvent(4) // BACK cancels the dialog
	reply(nil)
	next("terminated")
	if s := d.Phone.AppStatus("com.apex.notes"); s.Running || s.Foreground {
		t.Fatalf("terminate('com.apex.notes'): %+v", s)
	}
	reply(nil)
	next("launched Settings")
	if fg, _ := d.Phone.Foreground(); fg != "com.android.settings" {
		t.Fatalf("launch('Settings') opened %q", fg)
	}
	display := find(dump(t, adb, serial).Root, "Display")
	if display == nil {
		t.Fatal("no Display row in Settings")
	}
	d.Phone.Tap(display.Bounds.Center())
	plus := find(dump(t, adb, serial).Root, "Increase brightness")
	if plus == nil {
		t.Fatal("no Increase brightness button on Settings' Display screen")
	}
	brightness := func() string {
		st, _ := d.Phone.State("com.android.settings")
		return fmt.Sprint(st["brightness"])
	}
	if b := brightness(); b != "60" {
		t.Fatalf("brightness starts at %s, want 60", b)
	}
	x, y = plus.Bounds.Center()
	reply(map[string]int{"x": x, "y": y, "width": w})
	next("double clicked")
	if b := brightness(); b != "80" {
		t.Fatalf("mouseDoubleClick on + (10 a tap): brightness %s, want 80", b)
	}
	reply(nil)
	m := next("ran a shell command")
	if v, _ := d.Phone.Setting("global", "midscene_probe"); v != "42" || !strings.Contains(fmt.Sprint(m["out"]), d.Phone.Props()["ro.product.model"]) {
		t.Fatalf("runAdbShell: setting %q, output %q", v, m["out"])
	}
	reply(nil)
	next("forced a screenshot")
	b := adb.Must("-s", serial, "exec-out", "cat", "/data/local/tmp/midscene.png")
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil || cfg.Width != w || cfg.Height != h {
		t.Fatalf("forceScreenshot wrote %d bytes: %v, %dx%d; want a %dx%d PNG", len(b), err, cfg.Width, cfg.Height, w, h)
	}
	reply(nil)
}
