package adbd

import (
	"bytes"
	"context"
	"encoding/binary"
	"regexp"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// sh runs a script on a fresh server over the fake phone.
func sh(t *testing.T, s *Server, script string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = s.RunShell(context.Background(), script, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func TestShellCommands(t *testing.T) {
	tests := []struct {
		script string
		out    string // regexp the whole stdout must match
		code   int
		stderr string // substring of stderr
	}{
		{script: "getprop ro.product.model", out: `^Apex Sim Phone\n$`},
		{script: "/system/bin/echo hi", out: `^hi\n$`}, // a builtin by its path (it recursed until out of files)
		{script: "getprop no.such.prop", out: `^\n$`},
		{script: "getprop sys.boot_completed", out: `^1\n$`},
		{script: "getprop | grep -c ro.product", out: `^[3-9]\n$`},
		{script: "wm size; wm density", out: `^Physical size: 360x640\nPhysical density: 160\n$`},
		{script: "wm size 100x100", code: 1, stderr: "cannot be resized"},
		{script: "dumpsys input | grep SurfaceOrientation", out: `^\s+SurfaceOrientation: 0\n$`},
		{script: "dumpsys window windows | grep -E 'mCurrentFocus|mFocusedApp'", out: `mCurrentFocus=Window\{\w+ u0 com.apex.launcher/.MainActivity\}`},
		{script: "dumpsys input_method | grep mInputShown", out: `mInputShown=false`},
		{script: "dumpsys SurfaceFlinger --display-id", out: `^Display \d+ \(HWC display 0\)`},
		{script: "dumpsys power | grep mWakefulness=", out: `mWakefulness=Awake`},
		{script: "dumpsys nosuch", code: 1, stderr: "Can't find service: nosuch"},
		{script: "pidof com.apex.shop || echo NO", out: `^NO\n$`},
		{script: "pidof system_server", out: `^\d+\n$`},
		{script: "date +%s%3N", out: `^\d{13}\n$`},
		{script: "date", out: `^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d UTC \d{4}\n$`},
		{script: "pm list packages -3", out: `^package:com.apex.debug\npackage:com.apex.shop\n$`},
		{script: "pm list packages adbkeyboard", out: `^package:com.android.adbkeyboard\n$`},
		{script: "pm list features | grep -c touchscreen", out: `^[1-9]\n$`},
		{script: "pm path com.apex.shop", out: `^package:/data/app/com.apex.shop-1/base.apk\n$`},
		{script: "pm path no.such", code: 1, out: `^$`},
		{script: "cmd package resolve-activity --brief com.apex.shop", out: `\ncom.apex.shop/.MainActivity\n$`},
		{script: "cmd package query-activities -a android.intent.action.MAIN -c android.intent.category.LAUNCHER | grep packageName=", out: `packageName=com.apex.launcher\n.*packageName=com.apex.shop\n`},
		{script: "am start -W -n com.apex.shop/.MainActivity", out: `Status: ok\n.*Activity: com.apex.shop/.MainActivity\n(.*\n)*Complete\n$`},
		{script: "am start -n com.apex.shop/.Other", code: 1, stderr: "does not exist"},
		{script: "am start-activity -a android.intent.action.MAIN -c android.intent.category.LAUNCHER -f 0x10200000 -n com.apex.shop/.MainActivity && pidof com.apex.shop", out: `Starting: Intent \{ act=android.intent.action.MAIN cat=\[android.intent.category.LAUNCHER\] flg=0x10200000 cmp=com.apex.shop/.MainActivity \}\n\d+\n$`},
		{script: "monkey -p com.apex.shop -c android.intent.category.LAUNCHER 1", out: `Events injected: 1`},
		{script: "monkey -p no.such -c android.intent.category.LAUNCHER 1", code: 252, out: `No activities found`},
		{script: "run-as com.apex.shop ls", code: 1, stderr: "run-as: package not debuggable: com.apex.shop"},
		{script: "run-as no.such ls", code: 1, stderr: "unknown package"},
		{script: "run-as com.apex.debug echo inside", out: `^inside\n$`},
		{script: "settings put global foo bar && settings get global foo && settings get system nope", out: `^bar\nnull\n$`},
		{script: "settings get global device_name", out: `^Apex Sim\n$`},
		{script: "cmd clipboard set text hello there; cmd clipboard get text", out: `^hello there\n$`},
		{script: "cmd nosuch", code: 20, stderr: "Can't find service: nosuch"},
		{script: "input keyevent KEYCODE_BACK 4 HOME", out: `^$`},
		{script: "input keyevent KEYCODE_NOPE", code: 1, stderr: "unknown key"},
		{script: "input tap 1", code: 1, out: `Usage: input`},
		{script: "input text 中文", code: 1, stderr: "ADB_INPUT_B64"},
		{script: "uiautomator dump && grep -c counter /sdcard/window_dump.xml", out: `^UI hierchary dumped to: /sdcard/window_dump.xml\n1\n$`},
		{script: "uiautomator dump /dev/tty", out: `^<\?xml.*</hierarchy>UI hierchary dumped to: /dev/tty\n$`},
		{script: "mkdir -p /sdcard/a/b && echo hi > /sdcard/a/b/f.txt && cat /sdcard/a/b/f.txt && ls /sdcard/a/b", out: `^hi\nf.txt\n$`},
		{script: "echo one >> /data/local/tmp/x; echo two >> /data/local/tmp/x; wc -l /data/local/tmp/x; head -n 1 /data/local/tmp/x; tail -1 /data/local/tmp/x", out: `^2 /data/local/tmp/x\none\ntwo\n$`},
		{script: "cd /sdcard && echo rel > r.txt && cat /sdcard/r.txt && rm r.txt && ls r.txt", code: 1, out: `^rel\n$`, stderr: "No such file"},
		{script: "rm /sdcard", code: 1, stderr: "Is a directory"},
		{script: "cat /nope", code: 1, stderr: "No such file or directory"},
		{script: "echo x > /no/dir/f", code: 1},
		{script: "ls /sdcard/*.nothing || echo none", out: `none\n$`},
		{script: "for i in 1 2 3; do echo $i; done | tail -n 2", out: `^2\n3\n$`},
		{script: "CLASSPATH=/data/local/tmp/x.jar nohup app_process / com.example.Main >/dev/null 2>&1 &\nwait; echo done", out: `^done\n$`},
		{script: "app_process / x", code: 1, stderr: `java.lang.ClassNotFoundException: Didn't find class "x"`},
		{script: "/system/bin/getprop ro.product.name", out: `^apex_sim\n$`},
		{script: "/usr/bin/env", code: 127, stderr: "/usr/bin/env: inaccessible or not found"},
		{script: "sh -c 'exit 3'", code: 3},
		{script: "if true; then echo x", code: 1, stderr: "/system/bin/sh:"},
		{script: "id", out: `^uid=2000\(shell\)`},
		{script: "logcat -c; monkey -p com.apex.shop 1 >/dev/null; logcat -d", out: `^.*START u0 \{cmp=com.apex.shop\}\n$`},
		{script: "ime list -s | grep adbkeyboard", out: `^com.android.adbkeyboard/.AdbIME\n$`},
		{script: "am broadcast -a ADB_INPUT_TEXT --es msg hello", out: `Broadcast completed: result=0\n$`},
		{script: "sleep 0.01 && echo slept", out: `^slept\n$`},
		{script: "md5sum /dev/null /nope", code: 1, stderr: "/nope"},
		{script: "ps -A | grep -c system_server", out: `^1\n$`},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			s := NewServer(newFakePhone(), nil)
			out, stderr, code := sh(t, s, tt.script)
			if code != tt.code {
				t.Errorf("exit = %d; want %d (stdout %q, stderr %q)", code, tt.code, out, stderr)
			}
			if tt.out != "" && !regexp.MustCompile(`(?s)`+tt.out).MatchString(out) {
				t.Errorf("stdout = %q; want a match of %q", out, tt.out)
			}
			if tt.stderr != "" && !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr = %q; want it to contain %q", stderr, tt.stderr)
			}
		})
	}
}

func TestScreencapRaw(t *testing.T) {
	s := NewServer(newFakePhone(), nil)
	out, _, code := sh(t, s, "screencap")
	if code != 0 || len(out) != 16+360*640*4 {
		t.Fatalf("raw screencap: exit %d, %d bytes; want 16-byte header + 360x640 RGBA", code, len(out))
	}
	b := []byte(out)
	if w, h, f := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:]); w != 360 || h != 640 || f != 1 {
		t.Fatalf("header = %d %d %d", w, h, f)
	}
	if _, _, code := sh(t, s, "screencap -p /sdcard/s.png && ls /sdcard/s.png"); code != 0 {
		t.Fatal("screencap to a file failed")
	}
	data, err := s.FS().ReadFile("/sdcard/s.png")
	if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Fatalf("/sdcard/s.png: %d bytes, %v", len(data), err)
	}
}

func TestInputChangesPhone(t *testing.T) {
	p := newFakePhone()
	s := NewServer(p, nil)
	sh(t, s, "input swipe 100 350 100 350 150; input text hello%sworld; input keyevent KEYCODE_DEL; am broadcast -a ADB_INPUT_B64 --es msg 5Lit5paH")
	if p.text != "hello worl中文" {
		t.Fatalf("field = %q", p.text)
	}
	if out, _, _ := sh(t, s, "dumpsys input_method | grep mInputShown"); !strings.Contains(out, "mInputShown=true") {
		t.Fatalf("keyboard after focusing a field: %q", out)
	}
}

func TestActiveWindow(t *testing.T) {
	in := `<?xml version='1.0' ?><hierarchy rotation="0"><node package="com.a" bounds="[0,0][1,1]"><node text="x"/></node><node package="com.android.systemui" bounds="[0,0][1,1]" /></hierarchy>`
	want := `<?xml version='1.0' ?><hierarchy rotation="0"><node package="com.android.systemui" bounds="[0,0][1,1]" /></hierarchy>`
	if got := string(activeWindow([]byte(in), "com.android.systemui")); got != want {
		t.Fatalf("activeWindow = %s", got)
	}
	if got := string(activeWindow([]byte(in), "com.other")); !strings.Contains(got, `<node text="x"/>`) || strings.Contains(got, "systemui") {
		t.Fatalf("activeWindow without a match = %s; want the first window", got)
	}
	// A dialog lies above its activity and takes focus; a toast does not.
	dlg := `<hierarchy><node package="com.a" class="android.widget.FrameLayout"><node text="app"/></node>` +
		`<node package="com.a" class="android.widget.FrameLayout"><node text="dialog"/></node>` +
		`<node package="com.a" class="android.widget.Toast" text="toast"/></hierarchy>`
	if got := string(activeWindow([]byte(dlg), "com.a")); !strings.Contains(got, "dialog") || strings.Contains(got, `"app"`) || strings.Contains(got, "toast") {
		t.Fatalf("activeWindow with a dialog open = %s; want the dialog's window only", got)
	}
	if got := string(activeWindow([]byte("<broken"), "x")); got != "<broken" {
		t.Fatalf("activeWindow(broken) = %q", got)
	}
}

// TestPlainCommandLines: a line of one command with plain words runs
// without the interpreter, and gives what the interpreter gives for the
// same line spelt with quotes (which the interpreter runs).
func TestPlainCommandLines(t *testing.T) {
	tests := []struct {
		script string
		plain  bool
		quoted string // the same command line for the interpreter; "" if plain is false
	}{
		{script: "getprop ro.product.model", plain: true, quoted: "getprop 'ro.product.model'"},
		{script: "/system/bin/getprop ro.product.model", plain: true, quoted: "'/system/bin/getprop' ro.product.model"},
		{script: "screencap -h", plain: true, quoted: "screencap '-h'"},
		{script: "ls /sdcard/nope", plain: true, quoted: "ls '/sdcard/nope'"},
		{script: "getprop", plain: true, quoted: "'getprop'"},
		{script: "echo hi"},                   // a builtin
		{script: "nosuch x"},                  // not a command: the shell's message
		{script: "/data/local/tmp/getprop x"}, // a path outside the bin directories
		{script: "getprop 'ro.product.model'"},
		{script: `getprop ro\.product.model`},
		{script: "ls /sdcard/*"},
		{script: "ls ~"},
		{script: "ls {a,b}"},
		{script: "getprop $HOME"},
		{script: "getprop ro.product.model > /dev/null"},
		{script: "A=1 getprop"},
		{script: "getprop; getprop"},
		{script: "getprop | getprop"},
		{script: "! getprop"},
		{script: "getprop &"},
	}
	for _, tc := range tests {
		t.Run(tc.script, func(t *testing.T) {
			file, err := syntax.NewParser(syntax.Variant(syntax.LangMirBSDKorn)).Parse(strings.NewReader(tc.script), "")
			if err != nil {
				t.Fatal(err)
			}
			args := plainCall(file)
			_, _, known := lookCommand(args0(args))
			if got := args != nil && known; got != tc.plain {
				t.Fatalf("plain = %v (words %q); want %v", got, args, tc.plain)
			}
			if !tc.plain {
				return
			}
			s := NewServer(newFakePhone(), nil)
			out, errs, code := sh(t, s, tc.script)
			wantOut, wantErr, wantCode := sh(t, s, tc.quoted)
			if out != wantOut || errs != wantErr || code != wantCode {
				t.Errorf("plain: %q %q %d; interpreted (%s): %q %q %d", out, errs, code, tc.quoted, wantOut, wantErr, wantCode)
			}
		})
	}
}

func args0(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
