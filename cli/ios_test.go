package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apexagent/apex/adb/adbtest"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/ios"
	"github.com/apexagent/apex/sim/lab"
)

// TestRunExamplesOnSimIOS: every example passes on a simulated iPhone too,
// driven over WebDriverAgent, with the same scripts as on Android.
func TestRunExamplesOnSimIOS(t *testing.T) {
	dir := t.TempDir()
	summary := filepath.Join(dir, "summary.json")
	files := examples(t)
	args := append([]string{"run", "--sim=ios", "--concurrency", "3", "--summary", summary, "--report-dir", filepath.Join(dir, "runs")}, files...)
	out, errOut, err := run(t, args...)
	if err != nil {
		t.Fatalf("apex run --sim=ios: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	s := readSummary(t, summary)
	if !s.Passed || s.Total != len(files) || len(s.Scripts) != len(files) {
		t.Fatalf("summary = %+v", s)
	}
	for _, sc := range s.Scripts {
		if !strings.HasPrefix(sc.Device, "sim/127.0.0.1:") {
			t.Errorf("%s ran on %q; want a simulated iPhone", sc.File, sc.Device)
		}
		if !dirHolds(t, sc.RunDir, "xcuitest") {
			t.Errorf("the run in %s recorded no XCUITest scene: not an iPhone", sc.RunDir)
		}
		if !strings.Contains(errOut, "PASS "+sc.File) {
			t.Errorf("progress does not say %s passed:\n%s", sc.File, errOut)
		}
	}
}

// TestScriptSimPlatformIOS: a script's sim: {platform: ios} gets a
// simulated iPhone with no flag at all.
func TestScriptSimPlatformIOS(t *testing.T) {
	dir := t.TempDir()
	script, summary := filepath.Join(dir, "ios.yaml"), filepath.Join(dir, "summary.json")
	os.WriteFile(script, []byte("sim:\n  platform: ios\n  launch: com.apex.login\ntasks:\n  - name: sign-in screen\n    flow:\n      - assert: {exists: {id: username}}\n"), 0o644)
	mustRun(t, "run", "--summary", summary, "--report-dir", filepath.Join(dir, "runs"), script)
	s := readSummary(t, summary)
	if !s.Passed || len(s.Scripts) != 1 || !dirHolds(t, s.Scripts[0].RunDir, "xcuitest") {
		t.Fatalf("summary = %+v; want a pass on a simulated iPhone", s)
	}
}

// dirHolds reports whether a file under dir contains s.
func dirHolds(t *testing.T, dir, s string) bool {
	found := false
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !found {
			data, _ := os.ReadFile(path)
			found = strings.Contains(string(data), s)
		}
		return nil
	})
	return found
}

// TestWDADevices lists WebDriverAgents from APEX_WDA_URLS, one up and
// one down, and drives the live one by ID and by --device wda:URL.
func TestWDADevices(t *testing.T) {
	pointAt(t, adbtest.StartServer(t)) // an empty private adb server
	l, err := lab.Start(context.Background(), lab.Options{IOS: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	dev := l.Devices()[0]
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	t.Setenv("APEX_WDA_URLS", dev.URL+", "+dead)

	out := mustRun(t, "devices")
	live := "wda/" + strings.TrimPrefix(dev.URL, "http://")
	// The size is in pixels, as an Android phone's, read without a session.
	w, h, _ := dev.Phone.Display()
	if f := row(t, out, live); f[1] != "ready" || !strings.Contains(strings.Join(f, " "), fmt.Sprintf(" %dx%d", w, h)) {
		t.Errorf("live row = %q; want it ready, %dx%d", f, w, h)
	}
	if f := row(t, out, "wda/"+strings.TrimPrefix(dead, "http://")); f[1] != "offline" || !strings.Contains(strings.Join(f, " "), "WDA not reachable at "+dead+": start WebDriverAgent with") {
		t.Errorf("dead row = %q", f)
	}
	var ts []device.Target
	if err := json.Unmarshal([]byte(mustRun(t, "--json", "devices")), &ts); err != nil || len(ts) != 2 {
		t.Fatalf("--json devices = %v (%v)", ts, err)
	}

	src := mustRun(t, "source", "--device", live)
	if !strings.Contains(src, "XCUIElementType") {
		t.Errorf("source by ID = %.200s", src)
	}
	shot := filepath.Join(t.TempDir(), "x.png")
	mustRun(t, "screenshot", "-o", shot, "--device", "wda:"+dev.URL)
	mustFail(t, []string{"source", "--device", "wda:" + dead}, "device offline", "WDA not reachable at")

	// A script's ios: target names its WebDriverAgent with wdaUrl.
	script := filepath.Join(t.TempDir(), "ios.yaml")
	os.WriteFile(script, []byte("ios:\n  wdaUrl: "+dev.URL+"\n  launch: com.apex.login\ntasks:\n  - name: sign-in screen\n    flow:\n      - assert: {exists: {id: username}}\n"), 0o644)
	if _, errOut, err := run(t, "run", "--report-dir", filepath.Join(t.TempDir(), "runs"), script); err != nil || !strings.Contains(errOut, "PASS "+script) {
		t.Errorf("apex run of an ios: script = %v\n%s", err, errOut)
	}
	mustFail(t, []string{"source", "--sim=windows"}, "--sim=ios")
}

// TestLightNamesMatch: the light build names the iPhones' environment
// variable itself (it links no iOS driver); it must be the driver's.
func TestLightNamesMatch(t *testing.T) {
	if wdaURLsEnv != ios.EnvURLs {
		t.Errorf("cli's wdaURLsEnv %q, the iOS driver's EnvURLs %q", wdaURLsEnv, ios.EnvURLs)
	}
}
