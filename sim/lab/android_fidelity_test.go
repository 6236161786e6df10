package lab

import (
	"bytes"
	"fmt"
	"image/png"
	"strings"
	"testing"

	"github.com/apexagent/apex/sim/adbd/adbdtest"
)

// shellOK runs `adb shell script` and fails the test on a non-zero exit.
func shellOK(t *testing.T, adb *adbdtest.ADB, serial, script string) string {
	t.Helper()
	return string(adb.Must("-s", serial, "shell", script))
}

// tapText taps the centre of the element showing text, from a fresh dump.
func tapText(t *testing.T, adb *adbdtest.ADB, serial, text string) {
	t.Helper()
	n := find(dump(t, adb, serial).Root, text)
	if n == nil {
		t.Fatalf("no %q on screen", text)
	}
	x, y := n.Bounds.Center()
	shellOK(t, adb, serial, fmt.Sprintf("input tap %d %d", x, y))
}

// TestAndroidFidelity drives a simulated phone with Google's adb through
// the commands tools send for typing keys, resetting and reinstalling apps.
func TestAndroidFidelity(t *testing.T) {
	adb := adbdtest.Start(t)
	l := startLab(t, Options{})
	d := l.Devices()[0]
	serial := adb.Connect(d.Addr)

	t.Run("letter and number keycodes type", func(t *testing.T) {
		shellOK(t, adb, serial, "am start -W -n com.apex.login/.LoginActivity")
		tapText(t, adb, serial, "Username")
		// d e m o SPACE 4 2, by number and by name.
		shellOK(t, adb, serial, "input keyevent 32 33 41 43 KEYCODE_SPACE KEYCODE_4 9")
		st, _ := d.Phone.State("com.apex.login")
		if st["username"] != "demo 42" {
			t.Fatalf("username = %q; want \"demo 42\"", st["username"])
		}
	})

	t.Run("hiding the keyboard keeps the field's focus", func(t *testing.T) {
		for _, hide := range []string{"KEYCODE_BACK", "KEYCODE_ESCAPE"} {
			shellOK(t, adb, serial, "am force-stop com.apex.login; am start -W -n com.apex.login/.LoginActivity")
			tapText(t, adb, serial, "Username")
			shellOK(t, adb, serial, "input keyevent "+hide)
			if out := shellOK(t, adb, serial, "dumpsys input_method | grep mInputShown"); !strings.Contains(out, "mInputShown=false") {
				t.Fatalf("%s: the keyboard is still up: %q", hide, out)
			}
			shellOK(t, adb, serial, "uiautomator dump /sdcard/ui.xml")
			if out := shellOK(t, adb, serial, "grep -o 'resource-id=\"com.apex.login:id/username\"[^>]*focused=\"true\"' /sdcard/ui.xml"); out == "" {
				t.Fatalf("%s: the username field lost its focus", hide)
			}
			shellOK(t, adb, serial, "input text kept")
			if st, _ := d.Phone.State("com.apex.login"); st["username"] != "kept" {
				t.Fatalf("%s: typing with the keyboard hidden gave username %q; want it in the focused field", hide, st["username"])
			}
			if fg, _ := d.Phone.Foreground(); fg != "com.apex.login" {
				t.Fatalf("%s: hiding the keyboard left the app (%s in front)", hide, fg)
			}
			tapText(t, adb, serial, "kept")
			if out := shellOK(t, adb, serial, "dumpsys input_method | grep mInputShown"); !strings.Contains(out, "mInputShown=true") {
				t.Fatalf("%s: tapping the field again did not bring the keyboard back: %q", hide, out)
			}
		}
		shellOK(t, adb, serial, "input keyevent 4; input keyevent 4")
		if fg, _ := d.Phone.Foreground(); fg == "com.apex.login" {
			t.Fatal("BACK after the keyboard is hidden should leave the login screen")
		}
	})

	t.Run("pm clear resets the app to its initial state", func(t *testing.T) {
		shellOK(t, adb, serial, "am start -W -n com.apex.login/.LoginActivity")
		tapText(t, adb, serial, "Remember me")
		if st, _ := d.Phone.State("com.apex.login"); st["remember"] != true {
			t.Fatalf("remember = %v after the tap", st["remember"])
		}
		if out := shellOK(t, adb, serial, "pm clear com.apex.login"); out != "Success\n" {
			t.Fatalf("pm clear said %q", out)
		}
		st, _ := d.Phone.State("com.apex.login")
		if st["remember"] != false || st["username"] != "" {
			t.Fatalf("after pm clear state = %v; want the spec's initial state", st)
		}
		if fg, _ := d.Phone.Foreground(); fg == "com.apex.login" {
			t.Fatal("pm clear left the app on screen; it kills it")
		}
		if out, _, _ := adb.Run("-s", serial, "shell", "pm clear no.such"); string(out) != "Failed\n" {
			t.Fatalf("pm clear of an unknown package said %q", out)
		}
	})

	t.Run("rotation: settings, content, wm user-rotation; the screen follows", func(t *testing.T) {
		shellOK(t, adb, serial, "input keyevent KEYCODE_HOME")
		if out := shellOK(t, adb, serial, "settings get system user_rotation; settings get system accelerometer_rotation"); out != "0\n0\n" {
			t.Fatalf("rotation settings at boot = %q; want 0 and 0", out)
		}
		shellOK(t, adb, serial, "content insert --uri content://settings/system --bind name:s:user_rotation --bind value:i:1")
		if out := shellOK(t, adb, serial, "content query --uri content://settings/system --projection name:value --where \"name='user_rotation'\""); out != "Row: 0 name=user_rotation, value=1\n" {
			t.Fatalf("content query = %q", out)
		}
		checkSize := func(w, h int, orient string) {
			t.Helper()
			img, err := png.DecodeConfig(bytes.NewReader(adb.Must("-s", serial, "exec-out", "screencap", "-p")))
			if err != nil || img.Width != w || img.Height != h {
				t.Fatalf("screencap is %dx%d (%v); want %dx%d", img.Width, img.Height, err, w, h)
			}
			root := dump(t, adb, serial).Root
			if len(root.Children) > 0 {
				root = root.Children[0] // the window under <hierarchy>
			}
			if b := root.Bounds; b.X1-b.X0 != w || b.Y1-b.Y0 != h {
				t.Fatalf("dump root bounds %v; want %dx%d", b, w, h)
			}
			if out := shellOK(t, adb, serial, "dumpsys input | grep SurfaceOrientation"); !strings.Contains(out, "SurfaceOrientation: "+orient) {
				t.Fatalf("dumpsys input: %q; want orientation %s", out, orient)
			}
			if out := shellOK(t, adb, serial, "wm size"); out != "Physical size: 1080x2400\n" {
				t.Fatalf("wm size = %q; it is the physical size whatever the rotation", out)
			}
		}
		checkSize(2400, 1080, "1")
		// A tap in landscape coordinates reaches what is drawn there.
		tapText(t, adb, serial, "Settings")
		if fg, _ := d.Phone.Foreground(); !strings.Contains(fg, "settings") {
			t.Fatalf("tapping Settings in landscape opened %q", fg)
		}
		shellOK(t, adb, serial, "wm user-rotation lock 0")
		checkSize(1080, 2400, "0")
		if out := shellOK(t, adb, serial, "wm user-rotation"); out != "lock 0\n" {
			t.Fatalf("wm user-rotation = %q", out)
		}
		shellOK(t, adb, serial, "settings put system user_rotation 3")
		checkSize(2400, 1080, "3")
		shellOK(t, adb, serial, "wm user-rotation free")
		checkSize(1080, 2400, "0")
	})

	t.Run("VIEW intents open the browser; Settings is com.android.settings", func(t *testing.T) {
		shellOK(t, adb, serial, "am start -W -a android.intent.action.VIEW -d 'https://example.com/a?b=1'")
		if fg, _ := d.Phone.Foreground(); fg != "com.android.browser" {
			t.Fatalf("after a VIEW intent the foreground is %q", fg)
		}
		if find(dump(t, adb, serial).Root, "https://example.com/a?b=1") == nil {
			t.Fatal("the browser does not show the URL")
		}
		if _, stderr, err := adb.Run("-s", serial, "shell", "am start -a android.intent.action.VIEW -d 'ftp://x'"); err == nil || !strings.Contains(string(stderr), "unable to resolve") {
			t.Fatalf("a VIEW intent nobody opens: err=%v stderr=%q", err, stderr)
		}
		out := shellOK(t, adb, serial, "cmd package resolve-activity --brief com.android.settings")
		if !strings.HasSuffix(out, "com.android.settings/.Settings\n") {
			t.Fatalf("resolve-activity com.android.settings = %q", out)
		}
		// The old name still launches it.
		shellOK(t, adb, serial, "monkey -p com.apex.settings -c android.intent.category.LAUNCHER 1")
		if fg, _ := d.Phone.Foreground(); fg != "com.android.settings" {
			t.Fatalf("monkey -p com.apex.settings opened %q", fg)
		}
	})

	t.Run("app_process runs yadb and refuses other helpers", func(t *testing.T) {
		const yadb = "app_process -Djava.class.path=/data/local/tmp/yadb /data/local/tmp com.ysbing.yadb.Main"
		if _, stderr, err := adb.Run("-s", serial, "shell", yadb+" -keyboard hi"); err == nil || !strings.Contains(string(stderr), "ClassNotFoundException") {
			t.Fatalf("yadb before it is pushed: err=%v stderr=%q", err, stderr)
		}
		shellOK(t, adb, serial, "echo jar > /data/local/tmp/yadb")
		shellOK(t, adb, serial, "am start -W -n com.apex.login/.LoginActivity")
		tapText(t, adb, serial, "Username")
		shellOK(t, adb, serial, yadb+` -keyboard '中文 $HOME `+"`x`"+` "q"'`)
		if st, _ := d.Phone.State("com.apex.login"); st["username"] != "中文 $HOME `x` \"q\"" {
			t.Fatalf("yadb -keyboard typed %q", st["username"])
		}
		shellOK(t, adb, serial, yadb+" -keyboardClear")
		if st, _ := d.Phone.State("com.apex.login"); st["username"] != "" {
			t.Fatalf("after yadb -keyboardClear the field holds %q", st["username"])
		}
		shellOK(t, adb, serial, yadb+" -screenshot /sdcard/y.png; "+yadb+" -layout /sdcard/y.xml")
		if _, err := png.DecodeConfig(bytes.NewReader(adb.Must("-s", serial, "exec-out", "cat", "/sdcard/y.png"))); err != nil {
			t.Fatalf("yadb -screenshot wrote no PNG: %v", err)
		}
		if out := adb.Must("-s", serial, "exec-out", "cat", "/sdcard/y.xml"); !bytes.Contains(out, []byte("com.apex.login:id/username")) {
			t.Fatalf("yadb -layout wrote %.200q", out)
		}
		shellOK(t, adb, serial, "echo dex > /data/local/tmp/mobilecli.dex")
		_, stderr, err := adb.Run("-s", serial, "shell", "CLASSPATH=/data/local/tmp/mobilecli.dex app_process / com.mobilenext.mobilecli.DeviceServer")
		if err == nil || !strings.Contains(string(stderr), "does not run it") || !strings.Contains(string(stderr), "mobilecli's device server") {
			t.Fatalf("mobilecli's device server: err=%v stderr=%q; want a refusal naming it", err, stderr)
		}
		if _, stderr, err := adb.Run("-s", serial, "shell", "CLASSPATH=/data/local/tmp/yadb app_process / com.example.Nope"); err == nil || !strings.Contains(string(stderr), `Didn't find class "com.example.Nope"`) {
			t.Fatalf("an unknown class: err=%v stderr=%q", err, stderr)
		}
	})

	t.Run("adb uninstall, then cmd package install-existing", func(t *testing.T) {
		if out := string(adb.Must("-s", serial, "uninstall", "com.apex.notes")); !strings.Contains(out, "Success") {
			t.Fatalf("adb uninstall said %q", out)
		}
		if out := shellOK(t, adb, serial, "pm list packages notes"); out != "" {
			t.Fatalf("after uninstall pm list packages notes = %q", out)
		}
		if out, _, err := adb.Run("-s", serial, "shell", "monkey -p com.apex.notes -c android.intent.category.LAUNCHER 1"); err == nil {
			t.Fatalf("launching an uninstalled app worked: %s", out)
		}
		if out, _, _ := adb.Run("-s", serial, "uninstall", "com.apex.notes"); !strings.Contains(string(out), "Failure [DELETE_FAILED_INTERNAL_ERROR]") {
			t.Fatalf("uninstalling twice said %q", out)
		}
		if out := shellOK(t, adb, serial, "cmd package install-existing com.apex.notes"); out != "Package com.apex.notes installed for user: 0\n" {
			t.Fatalf("install-existing said %q", out)
		}
		shellOK(t, adb, serial, "monkey -p com.apex.notes -c android.intent.category.LAUNCHER 1")
		if fg, _ := d.Phone.Foreground(); fg != "com.apex.notes" {
			t.Fatalf("after install-existing the app does not launch: foreground %q", fg)
		}
		if out, _, _ := adb.Run("-s", serial, "uninstall", "com.apex.launcher"); !strings.Contains(string(out), "Failure") {
			t.Fatalf("uninstalling the home screen said %q", out)
		}
	})
}
