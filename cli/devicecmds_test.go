package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/adb/adbtest"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/sim"
	"github.com/apexagent/apex/sim/adbd"
	"github.com/apexagent/apex/sim/lab"
)

// The tests here use the device commands as a person would: the same
// command lines, once against a simulated phone started with --sim, once
// against simulated phones attached to Debian's adb server on a private
// port (ANDROID_ADB_SERVER_PORT points the commands at it).

// adbLab is a private adb server with simulated phones connected to it.
type adbLab struct {
	c    *adb.Client
	lab  *lab.Lab
	auth string // serial of a phone that never accepts the host's key
}

// startAdbLab starts the server and n phones, connects them and points
// the commands at the server.
func startAdbLab(t *testing.T, n int) *adbLab {
	t.Helper()
	c := adbtest.StartServer(t)
	l, err := lab.Start(context.Background(), lab.Options{Android: n})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for _, d := range l.Devices() {
		adbtest.Connect(t, c, d.Serial)
	}
	pointAt(t, c)
	return &adbLab{c: c, lab: l}
}

// pointAt makes the commands use c's server, as a person would with
// ANDROID_ADB_SERVER_PORT.
func pointAt(t *testing.T, c *adb.Client) {
	_, port, _ := net.SplitHostPort(c.Addr())
	t.Setenv("ANDROID_ADB_SERVER_PORT", port)
	t.Setenv("ADB_SERVER_SOCKET", "")
}

// addUnauthorized attaches a phone whose "Allow USB debugging?" prompt
// nobody accepts (its adbd answers every key with another AUTH).
func (a *adbLab) addUnauthorized(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	phone, err := sim.NewPhone(sim.Options{Serial: ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	srv := adbd.NewServer(phone, &adbd.Options{Auth: true})
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	a.auth = ln.Addr().String()
	a.c.Connect(context.Background(), a.auth) // adb says "failed to authenticate" and lists it
	adbtest.WaitState(t, a.c, a.auth, "unauthorized")
	return a.auth
}

// mustRun runs a command line that must succeed.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := run(t, args...)
	if err != nil {
		t.Fatalf("apex %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// mustFail runs a command line that must fail with an error containing
// every one of want.
func mustFail(t *testing.T, args []string, want ...string) error {
	t.Helper()
	out, _, err := run(t, args...)
	if err == nil {
		t.Fatalf("apex %s succeeded:\n%s", strings.Join(args, " "), out)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("apex %s: error %q does not say %q", strings.Join(args, " "), err, w)
		}
	}
	return err
}

// row finds the table line of a device ID.
func row(t *testing.T, table, id string) []string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == id {
			return f
		}
	}
	t.Fatalf("no row for %s in:\n%s", id, table)
	return nil
}

// checkDriveCommands runs screenshot, source and do on one device, chosen
// by devArgs (--sim, or --device ID), whose 1080×2400 screen shows the
// launcher (and shows it again at the end).
func checkDriveCommands(t *testing.T, devArgs []string, id *regexp.Regexp, asJSON bool) {
	with := func(args ...string) []string { return append(args, devArgs...) }
	t.Run("screenshot", func(t *testing.T) {
		// Screenshots are slow under the race detector, so each mode
		// checks one output form: text and -o - here, JSON there.
		file := filepath.Join(t.TempDir(), "screen.png")
		args := with("screenshot", "-o", file)
		if asJSON {
			args = append([]string{"--json"}, args...)
		}
		out := mustRun(t, args...)
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(data))
		if err != nil || cfg.Width != 1080 || cfg.Height != 2400 {
			t.Fatalf("%s: %dx%d, %v; want a 1080x2400 PNG", file, cfg.Width, cfg.Height, err)
		}
		if asJSON {
			var v struct {
				File          string
				Width, Height int
				Bytes         int
				Device        string
			}
			if err := json.Unmarshal([]byte(out), &v); err != nil || v.File != file || v.Width != 1080 || v.Height != 2400 || v.Bytes != len(data) || !id.MatchString(v.Device) {
				t.Errorf("--json screenshot = %s (%v)", out, err)
			}
		} else {
			if !strings.HasPrefix(out, "wrote "+file+" (1080x2400, ") || !id.MatchString(out) {
				t.Errorf("output %q does not say what was written from which device", out)
			}
			// -o - writes the PNG itself to standard output.
			out = mustRun(t, with("screenshot", "-o", "-")...)
			if cfg, err := png.DecodeConfig(strings.NewReader(out)); err != nil || cfg.Width != 1080 {
				t.Errorf("screenshot -o - is not the screen's PNG: %v", err)
			}
		}
		mustFail(t, with("screenshot"), "-o FILE is required")
	})
	t.Run("source", func(t *testing.T) {
		out := mustRun(t, with("source")...)
		if !strings.HasPrefix(out, "<?xml") || !strings.Contains(out, "<hierarchy") || !strings.Contains(out, `package="com.apex.launcher"`) || !strings.HasSuffix(out, "\n") {
			t.Fatalf("apex source is not the launcher's uiautomator dump:\n%.300s", out)
		}
		if _, err := scene.FromSource([]byte(out), nil); err != nil {
			t.Errorf("the raw source does not parse: %v", err)
		}
		out = mustRun(t, with("source", "--scene")...)
		for _, want := range []string{"screen 1080x2400 app=com.apex.launcher", `item "Settings"`, `item "Shop"`} {
			if !strings.Contains(out, want) {
				t.Errorf("apex source --scene does not show %q:\n%s", want, out)
			}
		}
		var s struct{ Elements []json.RawMessage }
		out = mustRun(t, with("--json", "source", "--scene")...)
		if err := json.Unmarshal([]byte(out), &s); err != nil || len(s.Elements) < 5 {
			t.Errorf("--json source --scene = %.300s (%v)", out, err)
		}
		var raw struct{ Format, Source string }
		out = mustRun(t, with("--json", "source")...)
		if err := json.Unmarshal([]byte(out), &raw); err != nil || raw.Format != string(device.FormatUIAutomator) || !strings.Contains(raw.Source, "<hierarchy") {
			t.Errorf("--json source = %.300s (%v)", out, err)
		}
	})
	t.Run("do", func(t *testing.T) {
		out := mustRun(t, with("do", "Tap", "--param", "locate=Shop")...)
		// It names the element it hit, so a person sees what a locator found.
		if !regexp.MustCompile(`^Tap e\d+ \w+ "Shop" at \d+,\d+ done on `).MatchString(out) || !id.MatchString(out) {
			t.Errorf("apex do Tap = %q; want it to name the element it tapped", out)
		}
		// A locator is looked for on the device's own screen, which the
		// error shows.
		mustFail(t, with("do", "Tap", "--param", "locate=Nowhere"), `no element matches "Nowhere"`, "the screen shows")
		var v struct {
			Action, Device string
			OK             bool
			Params         map[string]any
		}
		out = mustRun(t, with("--json", "do", "scroll", "--param", "direction=up", "--param", "distance=half")...)
		if err := json.Unmarshal([]byte(out), &v); err != nil || v.Action != "Scroll" || !v.OK || v.Params["distance"] != "half" || !id.MatchString(v.Device) {
			t.Errorf("--json do scroll = %s (%v)", out, err)
		}
		// Back to the launcher, the screen the next caller expects.
		mustRun(t, with("do", "Home")...)
	})
}

func TestDriveCommandsSim(t *testing.T) {
	checkDriveCommands(t, []string{"--sim"}, regexp.MustCompile(`sim/127\.0\.0\.1:\d+`), false)
}

func TestDriveCommandsAdbServer(t *testing.T) {
	a := startAdbLab(t, 1)
	dev := a.lab.Devices()[0]
	// Named by its port alone; TestDevicesCommand leaves --device out.
	_, port, _ := net.SplitHostPort(dev.Serial)
	checkDriveCommands(t, []string{"--device", port}, regexp.MustCompile(regexp.QuoteMeta("adb/"+dev.Serial)), true)
}

// TestDoChangesThePhone launches an app and taps by text through the adb
// server, and checks the phone itself.
func TestDoChangesThePhone(t *testing.T) {
	a := startAdbLab(t, 1)
	dev := a.lab.Devices()[0]
	mustRun(t, "do", "Launch", "--device", dev.Serial, "--param", "app=com.android.settings")
	if pkg, _ := dev.Phone.Foreground(); pkg != "com.android.settings" {
		t.Fatalf("after apex do Launch the phone shows %s", pkg)
	}
	mustRun(t, "do", "tap", "-d", dev.Serial, "-p", "locate=Connected devices")
	mustRun(t, "do", "Tap", "-d", dev.Serial, "--params", `{"locate": {"text": "Bluetooth"}}`)
	st, err := dev.Phone.State("com.android.settings")
	if err != nil || st["bluetooth"] != true {
		t.Fatalf("after tapping Bluetooth the settings state is %v (%v); want bluetooth on", st, err)
	}
	mustRun(t, "do", "Back", "-d", dev.Serial)
	mustRun(t, "do", "Input", "-d", dev.Serial, "-p", "locate=Search settings", "-p", "value=dark")
	ui, err := dev.Phone.DumpUI()
	if err != nil || !strings.Contains(string(ui), `text="Dark theme"`) {
		t.Fatalf("after typing into the search field the screen does not list Dark theme (%v)", err)
	}
	mustRun(t, "do", "Terminate", "-d", dev.Serial, "-p", "app=com.android.settings")
	if st := dev.Phone.AppStatus("com.android.settings"); st.Running {
		t.Fatalf("after apex do Terminate settings is %+v", st)
	}
}

// TestDoErrors: a person who gets an action or its params wrong is told
// which field and what to write. --sim keeps the test off any adb server
// should a check ever let a bad line through to the device.
func TestDoErrors(t *testing.T) {
	out := mustRun(t, "do", "--list")
	for _, want := range []string{"Tap(locate: locator)", "Launch(app: string)", "Scroll(direction?: ", "PullGesture("} {
		if !strings.Contains(out, want) {
			t.Errorf("apex do --list does not show %q:\n%s", want, out)
		}
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no action", []string{"do", "--sim"}, []string{"name an action", "apex do --list"}},
		{"unknown action", []string{"do", "Fly", "--sim"}, []string{`no action "Fly"`, "Tap, DoubleTap", "PullGesture", "apex do --list"}},
		{"missing param", []string{"do", "Tap", "--sim"}, []string{"locate: is required", "--param name=value"}},
		{"unknown param", []string{"do", "Tap", "--sim", "-p", "locate=Shop", "-p", "speed=9"}, []string{"speed: unknown param", "known params are locate"}},
		{"not k=v", []string{"do", "Tap", "--sim", "-p", "locate"}, []string{`--param "locate"`, "name=value"}},
		{"not a number", []string{"do", "LongPress", "--sim", "-p", "locate=Shop", "-p", "duration=long"}, []string{"duration=long", "want a number", "milliseconds"}},
		{"out of range", []string{"do", "LongPress", "--sim", "-p", "locate=Shop", "-p", "duration=5"}, []string{"duration: must be at least 100"}},
		{"not in enum", []string{"do", "Scroll", "--sim", "-p", "direction=sideways"}, []string{"direction: must be one of", `"sideways"`}},
		{"bad named distance", []string{"do", "Scroll", "--sim", "-p", "distance=far"}, []string{`distance: expected pixels`, `"screen" or "half"`}},
		{"bad key", []string{"do", "KeyboardPress", "--sim", "-p", "keyName=warp"}, []string{`keyName: unknown key "warp"`, "enter"}},
		{"bad locator JSON", []string{"do", "Tap", "--sim", "-p", "locate={text"}, []string{"locate: locator object is not JSON"}},
		{"bad --params", []string{"do", "Tap", "--sim", "--params", "[1]"}, []string{"--params [1]: want a JSON object"}},
		{"null --params", []string{"do", "Tap", "--sim", "--params", "null"}, []string{"--params null: want a JSON object"}},
		{"not on this platform", []string{"do", "AppSwitcher", "--sim"}, []string{`unknown action "AppSwitcher" on this android device`, "RecentApps"}},
		{"app not installed", []string{"do", "Launch", "--sim", "-p", "app=com.nope"}, []string{"com.nope", "is it installed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mustFail(t, tt.args, tt.want...)
			if strings.Count(err.Error(), tt.args[1]+": ") > 1 {
				t.Errorf("error names the action twice: %v", err)
			}
		})
	}
}

// TestDevicesCommand lists a ready, an unauthorized and an offline phone
// through the adb server, as a table and as JSON.
func TestDevicesCommand(t *testing.T) {
	a := startAdbLab(t, 2)
	ready, gone := a.lab.Devices()[0], a.lab.Devices()[1]
	auth := a.addUnauthorized(t)
	gone.Stop()
	adbtest.WaitState(t, a.c, gone.Serial, "offline")

	out := mustRun(t, "devices")
	if h := strings.Fields(strings.SplitN(out, "\n", 2)[0]); strings.Join(h, " ") != "ID STATE MODEL SIZE HINT" {
		t.Errorf("header = %q", h)
	}
	if f := row(t, out, "adb/"+ready.Serial); len(f) != 4 || f[1] != "device" || f[2] != "Apex_Sim" || f[3] != "1080x2400" {
		t.Errorf("ready row = %q", f)
	}
	if f := row(t, out, "adb/"+auth); f[1] != "unauthorized" || !strings.Contains(strings.Join(f, " "), `accept the "Allow USB debugging?" prompt`) {
		t.Errorf("unauthorized row = %q", f)
	}
	if f := row(t, out, "adb/"+gone.Serial); f[1] != "offline" || !strings.Contains(strings.Join(f, " "), "adb connect "+gone.Serial) {
		t.Errorf("offline row = %q", f)
	}

	var ts []device.Target
	out = mustRun(t, "--json", "devices")
	if err := json.Unmarshal([]byte(out), &ts); err != nil || len(ts) != 3 {
		t.Fatalf("--json devices = %s (%v)", out, err)
	}
	states := map[string]device.Target{}
	for _, tg := range ts {
		states[tg.Serial] = tg
	}
	if r := states[ready.Serial]; r.State != "device" || r.Width != 1080 || r.Height != 2400 || r.Hint != "" || r.Platform != device.Android {
		t.Errorf("ready = %+v", r)
	}
	if u := states[auth]; u.State != "unauthorized" || u.Hint == "" {
		t.Errorf("unauthorized = %+v", u)
	}
	if o := states[gone.Serial]; o.State != "offline" || o.Hint == "" {
		t.Errorf("offline = %+v", o)
	}

	// With --device left out the one ready phone is chosen; the others
	// refuse with their state and what to do.
	mustRun(t, "source", "--scene")
	mustFail(t, []string{"screenshot", "-o", filepath.Join(t.TempDir(), "x.png"), "--device", auth}, "is unauthorized", "Allow USB debugging")
	mustFail(t, []string{"source", "--device", gone.Serial}, "is offline", "adb connect "+gone.Serial)
}

// TestDevicesNone: an adb server with nothing attached, and one that
// cannot be named.
func TestDevicesNone(t *testing.T) {
	pointAt(t, adbtest.StartServer(t))
	if out := mustRun(t, "devices"); !strings.HasPrefix(out, "no devices: ") || !strings.Contains(out, "adb connect HOST:PORT") || !strings.Contains(out, "--sim") {
		t.Errorf("apex devices with none attached = %q", out)
	}
	if out := mustRun(t, "--json", "devices"); strings.TrimSpace(out) != "[]" {
		t.Errorf("apex --json devices with none attached = %q; want []", out)
	}
	mustFail(t, []string{"source"}, "no device attached", "--sim")
	t.Setenv("ADB_SERVER_SOCKET", "unix:/tmp/adb.sock")
	mustFail(t, []string{"devices"}, "ADB_SERVER_SOCKET", "tcp:")
}

// TestNoDeviceReady: the only phone attached has not accepted this
// computer, so leaving out --device says so rather than "no device".
func TestNoDeviceReady(t *testing.T) {
	c := adbtest.StartServer(t)
	pointAt(t, c)
	auth := (&adbLab{c: c}).addUnauthorized(t)
	err := mustFail(t, []string{"do", "Home"}, "no device is ready", "adb/"+auth+" is unauthorized", `accept the "Allow USB debugging?" prompt`)
	if !errors.Is(err, device.ErrOffline) {
		t.Errorf("err %v is not device.ErrOffline", err)
	}
}

// TestDeviceIDErrors: with several phones a short ID must be unique, and
// a wrong one lists what there is.
func TestDeviceIDErrors(t *testing.T) {
	a := startAdbLab(t, 2)
	ids := []string{"adb/" + a.lab.Devices()[0].Serial, "adb/" + a.lab.Devices()[1].Serial}
	err := mustFail(t, []string{"source"}, append([]string{"2 devices are attached", "--device"}, ids...)...)
	var amb *device.AmbiguousError
	if !errors.As(err, &amb) {
		t.Errorf("err %v is not a device.AmbiguousError", err)
	}
	mustFail(t, []string{"screenshot", "-o", "-", "--device", "127.0.0.1"}, append([]string{`device "127.0.0.1" is ambiguous`}, ids...)...)
	err = mustFail(t, []string{"do", "Home", "--device", "pixel"}, append([]string{`device "pixel"`, "not found", "known devices"}, ids...)...)
	if !errors.Is(err, device.ErrNotFound) {
		t.Errorf("err %v is not device.ErrNotFound", err)
	}
	mustFail(t, []string{"source", "--sim", "--device", ids[0]}, "--device and --sim both given")
	_, port, _ := net.SplitHostPort(a.lab.Devices()[1].Serial)
	mustRun(t, "do", "Home", "--device", port)
}

func TestSourceAndScreenshotErrors(t *testing.T) {
	mustFail(t, []string{"source", "--sim", "--scene", "--budget", "-5"}, "--budget -5", "most bytes")
	mustFail(t, []string{"screenshot", "--sim", "-o", filepath.Join(t.TempDir(), "no", "such", "dir.png")}, "saving the screenshot: no directory", "dir.png")
	mustFail(t, []string{"source", "--app", "x.yaml"}, "--app installs apps on the simulated phone only")
}

// FuzzDoParams: whatever a person types after --param and --params, the
// command either says what is wrong or builds a JSON object the action
// can check, and never panics.
func FuzzDoParams(f *testing.F) {
	for _, seed := range [][3]string{
		{"Tap", "locate=Shop", ""},
		{"Tap", `locate={"text":"OK","index":1}`, ""},
		{"Scroll", "distance=half", `{"direction":"up"}`},
		{"Scroll", "distance=1e3", ""},
		{"LongPress", "duration=abc", ""},
		{"Swipe", `start={"x":1,"y":2}`, `{"end":{"x":3,"y":4}}`},
		{"Input", "value==", "null"},
		{"KeyboardPress", "keyName=", "[]"},
		{"Sleep", "ms=true", `{"ms":1`},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	space := action.ForPlatform(device.Android)
	f.Fuzz(func(t *testing.T, name, kv, js string) {
		a, ok := space.Lookup(name)
		if !ok {
			a = space.Actions()[len(name)%len(space.Actions())]
		}
		raw, err := doParams(a, &DoOptions{Params: []string{kv}, JSON: js})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--param") {
				t.Fatalf("error %q does not name the flag", err)
			}
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatalf("doParams built %q, not a JSON object: %v", raw, err)
		}
		a.Decode(raw)
	})
}

// startCommand runs a long-running command line until the test stops it;
// stop cancels it and returns its error.
func startCommand(t *testing.T, args ...string) (out *syncBuffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out = &syncBuffer{}
	var errOut syncBuffer
	root := NewRoot(out, &errOut)
	root.SetArgs(args)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(patience.Of(20 * time.Second)):
				err = fmt.Errorf("did not end within %v of Ctrl-C", patience.Of(20*time.Second))
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return out, stop
}

// waitFor waits until out holds a line matching re.
func waitFor(t *testing.T, out *syncBuffer, re string) {
	t.Helper()
	rx := regexp.MustCompile("(?m)" + re)
	patience.Poll(t, 20*time.Second, func() error {
		if !rx.MatchString(out.String()) {
			return fmt.Errorf("no line matching %s; output:\n%s", re, out.String())
		}
		return nil
	})
}

// TestDevicesWatch follows phones as they are connected, refused, lost and
// disconnected, in text and in JSON lines.
func TestDevicesWatch(t *testing.T) {
	c := adbtest.StartServer(t)
	pointAt(t, c)
	l, err := lab.Start(context.Background(), lab.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	dev := l.Devices()[0]
	id := regexp.QuoteMeta("adb/" + dev.Serial)

	text, stopText := startCommand(t, "devices", "--watch")
	js, stopJSON := startCommand(t, "--json", "devices", "-w")
	// Whether a watch starts before the phone comes or after, it shows
	// the phone ready.
	if _, err := c.Connect(context.Background(), dev.Serial); err != nil {
		t.Fatal(err)
	}
	waitFor(t, text, `^[+~]  `+id+`  device  Apex_Sim$`)
	waitFor(t, js, `"serial":"`+regexp.QuoteMeta(dev.Serial)+`".*"state":"device"`)
	auth := (&adbLab{c: c}).addUnauthorized(t)
	waitFor(t, text, `^[+~]  adb/`+regexp.QuoteMeta(auth)+`  unauthorized  unlock the phone and accept the "Allow USB debugging\?" prompt`)
	dev.Stop()
	waitFor(t, text, `^~  `+id+`  offline  Apex_Sim  the device does not answer: .*adb connect `+regexp.QuoteMeta(dev.Serial))
	if err := c.Disconnect(context.Background(), dev.Serial); err != nil {
		t.Fatal(err)
	}
	waitFor(t, text, `^-  `+id+`  gone$`)
	waitFor(t, js, `"change":"removed"`)
	if err := stopText(); err != nil {
		t.Errorf("apex devices --watch after Ctrl-C: %v", err)
	}
	if err := stopJSON(); err != nil {
		t.Errorf("apex --json devices --watch after Ctrl-C: %v", err)
	}

	last := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(js.String()), "\n") {
		var c deviceChange
		if err := json.Unmarshal([]byte(line), &c); err != nil || c.Device.Platform != device.Android {
			t.Fatalf("JSON line %q (%v)", line, err)
		}
		if _, seen := last[c.Device.Serial]; seen == (c.Change == "added") {
			t.Errorf("%s: %s after %q", c.Device.Serial, c.Change, last[c.Device.Serial])
		}
		last[c.Device.Serial] = c.Change + " " + c.Device.State
	}
	// The JSON watch may see the phone removed before it saw it offline
	// (on a busy machine the poll between the two can be missed): the
	// removal is what must come last.
	if !strings.HasPrefix(last[dev.Serial], "removed ") || last[auth] != "changed unauthorized" && last[auth] != "added unauthorized" {
		t.Errorf("last JSON changes = %q; want %s removed, %s unauthorized", last, dev.Serial, auth)
	}
}

func TestDeviceChanges(t *testing.T) {
	tg := func(serial, state string) device.Target {
		return device.Target{ID: "adb/" + serial, Serial: serial, State: state}
	}
	byID := func(ts ...device.Target) map[string]device.Target {
		m := map[string]device.Target{}
		for _, t := range ts {
			m[t.ID] = t
		}
		return m
	}
	before := byID(tg("a", "device"), tg("b", "offline"), tg("c", "device"))
	now := byID(tg("a", "device"), tg("b", "device"), tg("d", "unauthorized"))
	var got []string
	for _, c := range deviceChanges(before, now) {
		got = append(got, c.Change+" "+c.Device.Serial+" "+c.Device.State)
	}
	want := "changed b device|removed c device|added d unauthorized"
	if strings.Join(got, "|") != want {
		t.Errorf("deviceChanges = %q; want %q", got, want)
	}
	if cs := deviceChanges(now, now); len(cs) != 0 {
		t.Errorf("no change gave %v", cs)
	}
}
