package adbd

import (
	"bytes"
	"crypto/rand"
	"encoding/xml"
	"fmt"
	"image/png"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apexagent/apex/sim/adbd/adbdtest"
)

// serve starts an adbd for phone on a free loopback port.
func serve(t *testing.T, phone Phone, opts *Options) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(phone, opts)
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return s, ln.Addr().String()
}

func TestRealADB(t *testing.T) {
	adb := adbdtest.Start(t)
	phone := newFakePhone()
	srv, addr := serve(t, phone, nil)
	serial := adb.Connect(addr)

	t.Run("devices -l shows the banner", func(t *testing.T) {
		out := string(adb.Must("devices", "-l"))
		if !strings.Contains(out, serial) || !strings.Contains(out, "model:Apex_Sim_Phone") || !strings.Contains(out, "product:apex_sim") {
			t.Fatalf("adb devices -l = %q; want the serial and the banner's product and model", out)
		}
	})
	t.Run("shell exit codes", func(t *testing.T) {
		for cmd, want := range map[string]int{"true": 0, "false": 1, "exit 7": 7, "getprop ro.product.model": 0, "nosuchtool": 127} {
			_, _, err := adb.Run("-s", serial, "shell", cmd)
			got := 0
			if ee, ok := err.(interface{ ExitCode() int }); ok {
				got = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("adb shell %q exit = %d; want %d", cmd, got, want)
			}
		}
	})
	t.Run("unknown command", func(t *testing.T) {
		out, stderr, err := adb.Run("-s", serial, "shell", "frobnicate --now")
		if err == nil || !strings.Contains(string(stderr), "/system/bin/sh: frobnicate: inaccessible or not found") || len(out) != 0 {
			t.Fatalf("unknown command: out=%q stderr=%q err=%v", out, stderr, err)
		}
	})
	t.Run("stdout and stderr apart, stdin", func(t *testing.T) {
		out, stderr, err := adb.Run("-s", serial, "shell", "echo out; echo err >&2; getprop ro.product.model | grep -c Apex")
		if err != nil || string(out) != "out\n1\n" || string(stderr) != "err\n" {
			t.Fatalf("out=%q stderr=%q err=%v", out, stderr, err)
		}
	})
	t.Run("screencap is a PNG of wm size", func(t *testing.T) {
		img, err := png.Decode(bytes.NewReader(adb.Must("-s", serial, "exec-out", "screencap", "-p")))
		if err != nil {
			t.Fatal(err)
		}
		size := strings.TrimSpace(string(adb.Must("-s", serial, "shell", "wm", "size")))
		if got := "Physical size: " + strconv.Itoa(img.Bounds().Dx()) + "x" + strconv.Itoa(img.Bounds().Dy()); got != size {
			t.Fatalf("PNG is %q; wm size says %q", got, size)
		}
	})
	t.Run("dump, tap, dump", func(t *testing.T) {
		before := dumpButton(t, adb.Must("-s", serial, "exec-out", "uiautomator", "dump", "/dev/tty"))
		if before != "Tapped 0" {
			t.Fatalf("button before tap = %q", before)
		}
		adb.Must("-s", serial, "shell", "input", "tap", "100", "240")
		after := dumpButton(t, adb.Must("-s", serial, "exec-out", "uiautomator", "dump", "/dev/tty"))
		if after != "Tapped 1" {
			t.Fatalf("button after tap = %q; want Tapped 1", after)
		}
	})
	t.Run("3 MB push and pull", func(t *testing.T) {
		dir := t.TempDir()
		data := make([]byte, 3<<20)
		rand.Read(data)
		src := filepath.Join(dir, "blob.bin")
		os.WriteFile(src, data, 0o644)
		adb.Must("-s", serial, "push", src, "/sdcard/Download/")
		if fi, err := srv.FS().Stat("/sdcard/Download/blob.bin"); err != nil || fi.Size != int64(len(data)) {
			t.Fatalf("pushed file: %+v, %v", fi, err)
		}
		dst := filepath.Join(dir, "back.bin")
		adb.Must("-s", serial, "pull", "/sdcard/Download/blob.bin", dst)
		back, _ := os.ReadFile(dst)
		if !bytes.Equal(back, data) {
			t.Fatalf("pulled %d bytes, not identical to the %d pushed", len(back), len(data))
		}
		ls := string(adb.Must("-s", serial, "shell", "ls", "/sdcard/Download"))
		if !strings.Contains(ls, "blob.bin") {
			t.Fatalf("ls after push = %q", ls)
		}
	})
	t.Run("install registers a package", func(t *testing.T) {
		apk := filepath.Join(t.TempDir(), "hello.apk")
		os.WriteFile(apk, adbdtest.APK(t, "org.example.hello", "Hello"), 0o644)
		out := string(adb.Must("-s", serial, "install", apk))
		if !strings.Contains(out, "Success") {
			t.Fatalf("adb install = %q", out)
		}
		if list := string(adb.Must("-s", serial, "shell", "pm", "list", "packages")); !strings.Contains(list, "package:org.example.hello\n") {
			t.Fatalf("pm list packages after install = %q", list)
		}
		if out := string(adb.Must("-s", serial, "shell", "monkey", "-p", "org.example.hello", "-c", "android.intent.category.LAUNCHER", "1")); !strings.Contains(out, "Events injected: 1") {
			t.Fatalf("monkey = %q", out)
		}
		if fg, _ := phone.Foreground(); fg != "org.example.hello" {
			t.Fatalf("foreground after monkey = %q", fg)
		}
	})
	t.Run("unicode through ADBKeyBoard", func(t *testing.T) {
		adb.Must("-s", serial, "shell", "input", "tap", "100", "350")
		adb.Must("-s", serial, "shell", "am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg", "5L2g5aW9") // 你好
		adb.Must("-s", serial, "shell", "input", "text", "ok%sgo")
		phone.mu.Lock()
		text := phone.text
		phone.mu.Unlock()
		if text != "你好ok go" {
			t.Fatalf("field text = %q", text)
		}
	})
}

// dumpButton parses a uiautomator dump and returns the counter's text,
// checking that every node's bounds lie on the screen.
func dumpButton(t *testing.T, out []byte) string {
	t.Helper()
	i := bytes.Index(out, []byte("<?xml"))
	end := bytes.LastIndex(out, []byte("</hierarchy>"))
	if i < 0 || end < 0 || !bytes.Contains(out, []byte("UI hierchary dumped to: /dev/tty")) {
		t.Fatalf("dump output = %q", out)
	}
	var h struct {
		Nodes []struct {
			Text   string `xml:"text,attr"`
			ID     string `xml:"resource-id,attr"`
			Bounds string `xml:"bounds,attr"`
		} `xml:"node>node"`
	}
	if err := xml.Unmarshal(out[i:end+len("</hierarchy>")], &h); err != nil {
		t.Fatal(err)
	}
	for _, n := range h.Nodes {
		var x1, y1, x2, y2 int
		if _, err := fmt.Sscanf(n.Bounds, "[%d,%d][%d,%d]", &x1, &y1, &x2, &y2); err != nil || x2 > 360 || y2 > 640 || x1 < 0 || y1 < 0 {
			t.Fatalf("bounds %q off the 360x640 screen (%v)", n.Bounds, err)
		}
		if n.ID == "com.apex.shop:id/counter" {
			return n.Text
		}
	}
	t.Fatalf("no counter in %s", out)
	return ""
}
