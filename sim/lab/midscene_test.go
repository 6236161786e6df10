package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
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
	node, script := npmClient(t, "@midscene/android", "midscene-android-client.mjs")
	adb := adbdtest.Start(t)
	l := startLab(t, Options{})
	d := l.Devices()[0]
	serial := adb.Connect(d.Addr)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, serial, adb.Bin, fmt.Sprint(adb.Port))
	cmd.Dir = filepath.Dir(script)
	cmd.WaitDelay = 5 * time.Second // a child left behind must not hold the pipes
	// AndroidAgent refuses to start without a model name; none is called.
	// MIDSCENE_RUN_DIR keeps its logs and reports out of the source tree.
	cmd.Env = append(os.Environ(), "MIDSCENE_MODEL_NAME=unused", "MIDSCENE_MODEL_API_KEY=unused", "MIDSCENE_MODEL_BASE_URL=http://127.0.0.1:9",
		"MIDSCENE_RUN_DIR="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("midscene client stderr:\n%s", stderr.String())
		}
	}()
	out := bufio.NewScanner(stdout)
	// next reads the client's next step (skipping Midscene's own log
	// lines); the client waits for reply before going on.
	next := func(want string) map[string]any {
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
	reply := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(stdin, "%s\n", b)
	}
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
