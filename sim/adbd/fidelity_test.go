package adbd

import (
	"bufio"
	"context"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/sim/adbd/adbdtest"
)

// fakeLog is a log in threadtime form with three tags and levels.
var fakeLog = []string{
	"12-02 01:00:00.000  1000  1000 I ActivityManager: Start proc 3107:com.apex.shop/u0a105",
	"12-02 01:00:00.100  3107  3107 D ShopCart: added 1",
	"12-02 01:00:00.200  3107  3107 E ShopCart: checkout failed",
	"12-02 01:00:00.300  1000  1000 W ActivityManager: slow operation",
}

// TestRealADBFidelity checks, through Google's adb, the commands real
// tools send that a device answers in a particular way.
func TestRealADBFidelity(t *testing.T) {
	adb := adbdtest.Start(t)
	phone := newFakePhone()
	phone.log = fakeLog
	srv, addr := serve(t, phone, nil)
	serial := adb.Connect(addr)

	logcat := []struct {
		name string
		args []string
		want string // regexp of the whole output
	}{
		// adb logcat sends `export ANDROID_LOG_TAGS=…; exec logcat …`.
		{"all, no junk line", []string{"logcat", "-d"}, `^(\d\d-\d\d [^\n]+\n){4}$`},
		{"tail", []string{"logcat", "-t", "2"}, `^[^\n]+E ShopCart: checkout failed\n[^\n]+W ActivityManager: slow operation\n$`},
		{"-s TAG", []string{"logcat", "-d", "-s", "ShopCart"}, `^[^\n]+D ShopCart: added 1\n[^\n]+E ShopCart: checkout failed\n$`},
		{"TAG:LEVEL *:S", []string{"logcat", "-d", "ShopCart:E", "*:S"}, `^[^\n]+E ShopCart: checkout failed\n$`},
		{"*:W", []string{"logcat", "-d", "*:W"}, `^[^\n]+E ShopCart[^\n]+\n[^\n]+W ActivityManager[^\n]+\n$`},
		{"-v brief", []string{"logcat", "-d", "-v", "brief", "ShopCart:D", "*:S"}, `^D/ShopCart\s*\( 3107\): added 1\nE/ShopCart\s*\( 3107\): checkout failed\n$`},
		{"-v tag", []string{"logcat", "-d", "-v", "tag", "-t", "1"}, `^W/ActivityManager: slow operation\n$`},
		{"-v raw", []string{"logcat", "-d", "-v", "raw", "-s", "ShopCart"}, `^added 1\ncheckout failed\n$`},
		{"-v time", []string{"logcat", "-d", "-v", "time", "-t", "1"}, `^12-02 01:00:00.300 W/ActivityManager\( 1000\): slow operation\n$`},
		{"-e", []string{"logcat", "-d", "-e", "fail"}, `^[^\n]+checkout failed\n$`},
	}
	for _, tc := range logcat {
		t.Run("logcat "+tc.name, func(t *testing.T) {
			out, stderr, err := adb.Run(append([]string{"-s", serial}, tc.args...)...)
			if err != nil || !regexp.MustCompile(tc.want).Match(out) || len(stderr) != 0 {
				t.Fatalf("adb %s: err=%v\nstdout:\n%s\nstderr: %s\nwant %s", strings.Join(tc.args, " "), err, out, stderr, tc.want)
			}
		})
	}

	shell := []struct {
		script string
		want   string // regexp of the whole stdout
		code   int
		stderr string // substring of stderr
	}{
		{"export A=1; echo $A; exec echo done", `^1\ndone\n$`, 0, ""},
		{"mkdir -p /sdcard/t/a && echo hi > /sdcard/t/a/x.txt && touch /sdcard/t/y.log && find /sdcard/t -name '*.txt'", `^/sdcard/t/a/x.txt\n$`, 0, ""},
		{"find /sdcard/t -type d", `^/sdcard/t\n/sdcard/t/a\n$`, 0, ""},
		{"find /sdcard/t -maxdepth 1", `^/sdcard/t\n/sdcard/t/a\n/sdcard/t/y.log\n$`, 0, ""},
		{"find /nope", `^$`, 1, "No such file"},
		{"stat -c '%n %s %F' /sdcard/t/a/x.txt /sdcard/t", `^/sdcard/t/a/x.txt 3 regular file\n/sdcard/t 0 directory\n$`, 0, ""},
		{"stat /sdcard/t/a/x.txt", `^  File: /sdcard/t/a/x.txt\n  Size: 3\t`, 0, ""},
		{"df /data | tail -1", `^/dev/block/dm-48\s+\d+\s+\d+\s+\d+\s+\d+% /data\n$`, 0, ""},
		{"df -h | head -1", `^Filesystem\s+Size\s+Used\s+Avail\s+Use% Mounted on\n$`, 0, ""},
		{"echo 'mFocus=a/b c' | sed 's/.*=\\(.*\\) .*/\\1/'", `^a/b\n$`, 0, ""},
		{"printf 'a1\\nb2\\na3\\n' | sed -E -e 's/([a-z])([0-9])/\\2\\1/g' -e '/b/d'", `^1a\n3a\n$`, 0, ""},
		{"printf 'x\\ny\\n' | sed -n '/y/p'", `^y\n$`, 0, ""},
		{"sed -i s/hi/ho/ /sdcard/t/a/x.txt; cat /sdcard/t/a/x.txt", `^ho\n$`, 0, ""},
		{"echo -n 'héllo' | base64", `^aMOpbGxv\n$`, 0, ""},
		{"echo aMOpbGxv | base64 -d", `^héllo$`, 0, ""},
		{"which logcat sed; which nosuch || echo missing", `^/system/bin/logcat\n/system/bin/sed\nmissing\n$`, 0, ""},
		{"screenrecord /sdcard/a.mp4", `^$`, 1, "records only a live stream"},
		{"appops get com.apex.shop CAMERA; appops set com.apex.shop CAMERA deny; appops get com.apex.shop", `^CAMERA: default\nCAMERA: deny\n$`, 0, ""},
		{"appops get no.such", `^Error: Unknown package: no.such\n$`, 255, ""},
		{"svc wifi disable; settings get global wifi_on; svc wifi enable; settings get global wifi_on", `^0\n1\n$`, 0, ""},
		{"settings put system user_x 5; settings list system; settings delete system user_x; settings delete system user_x; settings get system user_x", `^user_x=5\nDeleted 1 rows\nDeleted 0 rows\nnull\n$`, 0, ""},
		{"screencap -p -d 0 /sdcard/a.png && screencap -p -d null /sdcard/b.png && ls /sdcard/a.png /sdcard/b.png", `^/sdcard/a.png\n/sdcard/b.png\n$`, 0, ""},
		{"screencap -p -d 7", `^$`, 1, "Display ID 7 is not valid"},
		{"getevent -pl | grep -E 'add device|name:|ABS_MT_POSITION'", `^add device 1: /dev/input/event1\n\s+name:\s+"apex_touchscreen"\n\s+ABS_MT_POSITION_X\s+: value 0, min 0, max 4095[^\n]*\n\s+ABS_MT_POSITION_Y\s+: value 0, min 0, max 4095[^\n]*\nadd device 2: /dev/input/event0\n\s+name:\s+"gpio-keys"\n$`, 0, ""},
		{"sendevent /dev/input/event9 0 0 0", `^$`, 1, "could not open /dev/input/event9"},
		{"ime set com.android.adbkeyboard/.AdbIME && dumpsys input_method | grep mCurMethodId", `^Input method com.android.adbkeyboard/.AdbIME selected for user #0\n\s+mCurMethodId=com.android.adbkeyboard/.AdbIME\n$`, 0, ""},
	}
	for _, tc := range shell {
		t.Run("shell "+tc.script, func(t *testing.T) {
			out, stderr, err := adb.Run("-s", serial, "shell", tc.script)
			code := 0
			if ee, ok := err.(interface{ ExitCode() int }); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || !regexp.MustCompile(tc.want).Match(out) || !strings.Contains(string(stderr), tc.stderr) {
				t.Fatalf("adb shell %q: exit %d (want %d)\nstdout: %q (want %s)\nstderr: %q (want %q)", tc.script, code, tc.code, out, tc.want, stderr, tc.stderr)
			}
		})
	}

	t.Run("adb root", func(t *testing.T) {
		out, stderr, _ := adb.Run("-s", serial, "root")
		if got := string(out) + string(stderr); !strings.Contains(got, "adbd cannot run as root in production builds") {
			t.Fatalf("adb root said %q", got)
		}
	})

	t.Run("adb reverse forwards device connections to the host", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					line, _ := bufio.NewReader(c).ReadString('\n')
					io.WriteString(c, "host got "+line)
				}()
			}
		}()
		hostPort := "tcp:" + strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:")
		if _, err := srv.DialDevice(t.Context(), "tcp:8081"); err == nil || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("dial before adb reverse: %v; want connection refused", err)
		}
		adb.Must("-s", serial, "reverse", "tcp:8081", hostPort)
		if out := string(adb.Must("-s", serial, "reverse", "--list")); !strings.Contains(out, "tcp:8081 "+hostPort) {
			t.Fatalf("adb reverse --list = %q", out)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		c, err := srv.DialDevice(ctx, "tcp:8081")
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "hello\n")
		got, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if got != "host got hello\n" {
			t.Fatalf("through the reverse connection: %q", got)
		}
		if _, stderr, err := adb.Run("-s", serial, "reverse", "--remove", "tcp:9"); err == nil || !strings.Contains(string(stderr), "not found") {
			t.Fatalf("removing an unknown rule: err=%v stderr=%q", err, stderr)
		}
		adb.Must("-s", serial, "reverse", "--remove-all")
		if _, err := srv.DialDevice(t.Context(), "tcp:8081"); err == nil {
			t.Fatal("dial after --remove-all succeeded")
		}
	})

	t.Run("motionevent and keycombination", func(t *testing.T) {
		cx, cy := (fakeButton.Min.X+fakeButton.Max.X)/2, (fakeButton.Min.Y+fakeButton.Max.Y)/2
		phone.mu.Lock()
		before := phone.taps
		phone.mu.Unlock()
		adb.Must("-s", serial, "shell", "input motionevent DOWN "+strconv.Itoa(cx)+" "+strconv.Itoa(cy)+"; input motionevent UP "+strconv.Itoa(cx)+" "+strconv.Itoa(cy))
		phone.mu.Lock()
		taps := phone.taps
		phone.mu.Unlock()
		if taps != before+1 {
			t.Fatalf("a DOWN/UP motion event pair did not tap the button (taps %d → %d)", before, taps)
		}
		fx, fy := (fakeField.Min.X+fakeField.Max.X)/2, (fakeField.Min.Y+fakeField.Max.Y)/2
		adb.Must("-s", serial, "shell", "input tap "+strconv.Itoa(fx)+" "+strconv.Itoa(fy)+"; input keycombination KEYCODE_SHIFT_LEFT KEYCODE_A; input keycombination 59 8; input keycombination CTRL_LEFT A")
		phone.mu.Lock()
		text := phone.text
		phone.mu.Unlock()
		if text != "A!" {
			t.Fatalf("shift+A, shift+1, ctrl+A typed %q; want \"A!\"", text)
		}
	})
}
