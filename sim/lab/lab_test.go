package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/sim/adbd/adbdtest"
)

func startLab(t *testing.T, opts Options) *Lab {
	t.Helper()
	l, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// dump returns the parsed `uiautomator dump /dev/tty` of a device.
func dump(t *testing.T, adb *adbdtest.ADB, serial string) *scene.Tree {
	t.Helper()
	out := adb.Must("-s", serial, "exec-out", "uiautomator", "dump", "/dev/tty")
	i := bytes.Index(out, []byte("<?xml"))
	if i < 0 || !bytes.HasSuffix(out, []byte("UI hierchary dumped to: /dev/tty\n")) {
		t.Fatalf("uiautomator dump output = %.200q", out)
	}
	tree, err := scene.Parse(bytes.TrimSuffix(out[i:], []byte("UI hierchary dumped to: /dev/tty\n")))
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func find(n *scene.Node, text string) *scene.Node {
	if n == nil {
		return nil
	}
	if n.Text == text || n.Desc == text {
		return n
	}
	for _, c := range n.Children {
		if f := find(c, text); f != nil {
			return f
		}
	}
	return nil
}

func walk(n *scene.Node, f func(*scene.Node)) {
	f(n)
	for _, c := range n.Children {
		walk(c, f)
	}
}

func TestThreeDevicesThroughRealADB(t *testing.T) {
	adb := adbdtest.Start(t)
	l := startLab(t, Options{Android: 3, StateAddr: "127.0.0.1:0"})
	if len(l.Devices()) != 3 {
		t.Fatalf("%d devices", len(l.Devices()))
	}
	for _, d := range l.Devices() {
		adb.Connect(d.Addr)
	}
	list := string(adb.Must("devices", "-l"))
	for _, d := range l.Devices() {
		model := strings.ReplaceAll(d.Phone.Props()["ro.product.model"], " ", "_")
		if !strings.Contains(list, d.Serial) || !strings.Contains(list, "model:"+model) {
			t.Fatalf("adb devices -l = %q; want %s with model:%s", list, d.Serial, model)
		}
	}

	// All three answer at once; the full screen check (a 1080x2400 PNG is
	// slow to render under -race) runs on one.
	var wg sync.WaitGroup
	for i, d := range l.Devices() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				checkScreen(t, adb, d.Serial)
				return
			}
			if tree := dump(t, adb, d.Serial); tree.Width != 1080 || find(tree.Root, "Shop") == nil {
				t.Errorf("%s: home screen dump %dx%d without a Shop icon", d.Serial, tree.Width, tree.Height)
			}
		}()
	}
	wg.Wait()

	d := l.Devices()[0]
	t.Run("tap changes the next dump", func(t *testing.T) {
		before := dump(t, adb, d.Serial)
		icon := find(before.Root, "Shop")
		if icon == nil {
			t.Fatal("no Shop icon on the home screen")
		}
		x, y := icon.Bounds.Center()
		adb.Must("-s", d.Serial, "shell", "input", "tap", fmt.Sprint(x), fmt.Sprint(y))
		after := dump(t, adb, d.Serial)
		pkgs := map[string]bool{}
		walk(after.Root, func(n *scene.Node) { pkgs[n.Package] = true })
		if !pkgs["com.apex.shop"] {
			t.Fatalf("after tapping Shop at %d,%d the dump shows packages %v", x, y, pkgs)
		}
		if fg := strings.TrimSpace(string(adb.Must("-s", d.Serial, "shell", "dumpsys window | grep mCurrentFocus"))); !strings.Contains(fg, "com.apex.shop") {
			t.Fatalf("dumpsys window focus = %q", fg)
		}
	})
	t.Run("state endpoint", func(t *testing.T) {
		var devs []DeviceInfo
		getJSON(t, l.StateURL()+"/devices", http.StatusOK, &devs)
		if len(devs) != 3 || devs[0].Serial != d.Serial || devs[0].Connect != "adb connect "+d.Addr || !devs[0].Online {
			t.Fatalf("GET /devices = %+v", devs)
		}
		var st map[string]any
		getJSON(t, l.StateURL()+"/devices/"+d.Serial+"/state/com.apex.shop", http.StatusOK, &st)
		want, _ := d.Phone.State("com.apex.shop")
		gotJSON, _ := json.Marshal(st)
		wantJSON, _ := json.Marshal(want)
		if !bytes.Equal(gotJSON, wantJSON) {
			t.Fatalf("state over HTTP = %s; Phone.State = %s", gotJSON, wantJSON)
		}
		getJSON(t, l.StateURL()+"/devices/"+d.Serial+"/state/no.such.app", http.StatusNotFound, &st)
		getJSON(t, l.StateURL()+"/devices/127.0.0.1:1/state/com.apex.shop", http.StatusNotFound, &st)
	})
	t.Run("a stopped device vanishes, the others stay", func(t *testing.T) {
		gone, other := l.Devices()[1], l.Devices()[2]
		gone.Stop()
		if _, _, err := adb.Run("-s", gone.Serial, "shell", "true"); err == nil {
			t.Fatal("shell on a stopped device succeeded")
		}
		if err := adb.WaitState(gone.Serial, "offline", 15*time.Second); err != nil {
			t.Fatal(err)
		}
		if out := string(adb.Must("-s", other.Serial, "shell", "getprop", "sys.boot_completed")); out != "1\n" {
			t.Fatalf("other device getprop = %q", out)
		}
		var devs []DeviceInfo
		getJSON(t, l.StateURL()+"/devices", http.StatusOK, &devs)
		if devs[1].Online || !devs[2].Online {
			t.Fatalf("GET /devices after Stop = %+v", devs)
		}
	})
}

// checkScreen: screencap is a PNG of `wm size`, the dump's root spans it.
func checkScreen(t *testing.T, adb *adbdtest.ADB, serial string) {
	img, err := png.Decode(bytes.NewReader(adb.Must("-s", serial, "exec-out", "screencap", "-p")))
	if err != nil {
		t.Errorf("%s: screencap -p: %v", serial, err)
		return
	}
	size := strings.TrimSpace(string(adb.Must("-s", serial, "shell", "wm", "size")))
	want := fmt.Sprintf("Physical size: %dx%d", img.Bounds().Dx(), img.Bounds().Dy())
	if size != want {
		t.Errorf("%s: wm size = %q; the PNG is %q", serial, size, want)
	}
	tree := dump(t, adb, serial)
	if tree.Width != img.Bounds().Dx() || tree.Height != img.Bounds().Dy() {
		t.Errorf("%s: dump spans %dx%d; screen %v", serial, tree.Width, tree.Height, img.Bounds())
	}
	walk(tree.Root, func(n *scene.Node) {
		b := n.Bounds
		if b.X0 < 0 || b.Y0 < 0 || b.X1 > img.Bounds().Dx() || b.Y1 > img.Bounds().Dy() {
			t.Errorf("%s: node %q bounds %+v off screen", serial, n.Text, b)
		}
	})
}

func getJSON(t *testing.T, url string, code int, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != code {
		t.Fatalf("GET %s = %s; want %d", url, resp.Status, code)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func TestOptionsRejected(t *testing.T) {
	for name, opts := range map[string]Options{
		"emulator ports": {PortBase: 5550, Android: 10},
		"too many":       {Android: MaxDevices + 1},
		"public state":   {StateAddr: "0.0.0.0:0"},
		"missing app":    {AppFiles: []string{"/nonexistent/app.yaml"}},
	} {
		t.Run(name, func(t *testing.T) {
			if l, err := Start(context.Background(), opts); err == nil {
				l.Close()
				t.Fatalf("Start(%+v) succeeded", opts)
			}
		})
	}
}

func TestContextCancelCloses(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	l, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	d := l.Devices()[0]
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		t.Fatal("device still up 10 s after the context was cancelled")
	}
}
