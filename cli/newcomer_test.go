package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apexagent/apex/adb/adbtest"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/runner"
	"github.com/apexagent/apex/store"
)

// The tests here are issue 21's: what got in a newcomer's way in the
// first hour, each as it was met.

// TestJSONRunPrintsOnlyJSON: `apex --json run` keeps stdout one JSON
// document; the progress lines go to stderr.
func TestJSONRunPrintsOnlyJSON(t *testing.T) {
	out, errOut, err := run(t, "--json", "run", "--sim", "--report-dir", t.TempDir(), "../examples/login.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var s runner.Summary
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&s); err != nil || !s.Passed || dec.More() {
		t.Fatalf("stdout is not one JSON summary (%v):\n%s", err, out)
	}
	if !strings.Contains(errOut, "login 1/") || !strings.Contains(errOut, "PASS ../examples/login.yaml") {
		t.Errorf("progress is not on stderr:\n%s", errOut)
	}
}

// TestRunErrorsAreWhole: a step's error reaches its end — the list of
// step names reaches tap and the hint — whether the output is a terminal
// (wrapped) or not (whole lines).
func TestRunErrorsAreWhole(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.yaml")
	os.WriteFile(typo, []byte("sim: {}\ntasks:\n  - name: x\n    flow:\n      - tapp: Search\n"), 0o644)
	for _, tty := range []bool{false, true} {
		var out, errOut bytes.Buffer
		env := &Env{Out: &out, Err: &errOut, Log: slog.New(slog.DiscardHandler)}
		err := runRun(context.Background(), env, &RunOptions{Files: []string{typo}, Concurrency: 1, ReportDir: dir, OCR: "auto", Terminal: &tty, Config: emptyFile(t)})
		if err == nil {
			t.Fatal("a script with an unknown step passed")
		}
		got := strings.Join(strings.Fields(errOut.String()), " ")
		for _, want := range []string{`unknown step "tapp"`, "swipe, tap, terminate, waitFor, or an action name (apex do --list lists them)"} {
			if !strings.Contains(got, want) {
				t.Errorf("terminal %v: the error lacks %q:\n%s", tty, want, errOut.String())
			}
		}
		if tty {
			for _, line := range strings.Split(errOut.String(), "\n") {
				if len([]rune(line)) > termWidth() && strings.Contains(line, " ") {
					t.Errorf("a line is wider than the terminal:\n%s", line)
				}
			}
		}
	}
}

func TestIndentLines(t *testing.T) {
	tests := []struct {
		name, in string
		width    int
		want     string
	}{
		{"one line, no width", "a b c", 0, "a b c"},
		{"lines indented", "first\nsecond\nthird", 0, "first\n  second\n  third"},
		{"wrapped at spaces", "aaa bbb ccc ddd", 8, "aaa bbb\n  ccc\n  ddd"},
		{"a word wider than the line stays whole", "x " + strings.Repeat("w", 20) + " y", 8, "x\n  " + strings.Repeat("w", 20) + "\n  y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := indentLines(tt.in, "  ", tt.width)
			if got != tt.want {
				t.Errorf("indentLines(%q, %d) = %q; want %q", tt.in, tt.width, got, tt.want)
			}
			if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(tt.in), " ") {
				t.Errorf("a word was lost: %q", got)
			}
		})
	}
}

// TestScriptYAMLErrorLine: an indentation error on line 7 of a script is
// reported at line 7, not where its block starts.
func TestScriptYAMLErrorLine(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "indent.yaml")
	os.WriteFile(bad, []byte("sim:\n  launch: com.apex.shop\ntasks:\n  - name: x\n    flow:\n      - tap: Search\n     - tap: Foo\n"), 0o644)
	_, errOut, err := run(t, "run", "--report-dir", dir, "--config", emptyFile(t), bad)
	if err == nil || !strings.Contains(errOut, bad+":7: invalid YAML") {
		t.Errorf("err %v; want the error at line 7:\n%s", err, errOut)
	}
}

// TestArgErrorsShowUsage: `apex run` with nothing to run shows how to
// call it; --version works.
func TestArgErrorsShowUsage(t *testing.T) {
	_, _, err := run(t, "run")
	if err == nil || !strings.Contains(err.Error(), "name the scripts to run") || !strings.Contains(err.Error(), "Usage:\n  apex run FILE") {
		t.Errorf("apex run: %v; want what to give and the usage", err)
	}
	_, _, err = run(t, "act")
	if err == nil || !strings.Contains(err.Error(), "Usage:") {
		t.Errorf("apex act: %v; want the usage", err)
	}
	out, _, err := run(t, "--version")
	if err != nil || !strings.HasPrefix(out, "apex ") || !strings.Contains(out, "commit") {
		t.Errorf("apex --version = %q, %v", out, err)
	}
}

// TestVersionStamps: the version and commit make install stamps are
// what apex version prints, in text and JSON.
func TestVersionStamps(t *testing.T) {
	oldV, oldC := Version, Commit
	t.Cleanup(func() { Version, Commit = oldV, oldC })
	Version, Commit = "v1.2.3", "0123456789abcdef"
	out, _, err := run(t, "version")
	if err != nil || !strings.HasPrefix(out, "apex v1.2.3 (commit 0123456789abcdef; go") {
		t.Errorf("apex version = %q, %v", out, err)
	}
	out, _, _ = run(t, "--json", "version")
	var b buildInfo
	if err := json.Unmarshal([]byte(out), &b); err != nil || b.Version != "v1.2.3" || b.Commit != "0123456789abcdef" {
		t.Errorf("apex --json version = %s (%v)", out, err)
	}
	Version, Commit = "", ""
	out, _, _ = run(t, "version")
	if !strings.Contains(out, "commit unknown") || !strings.Contains(out, "make install") {
		t.Errorf("an unstamped build: %q; want it to say the commit is unknown and how to stamp it", out)
	}
}

// TestDoListNamesThePlatform: --list describes the action space of the
// device the flags name, and a --device that names none is an error.
func TestDoListNamesThePlatform(t *testing.T) {
	out := mustRun(t, "do", "--list", "--sim=ios")
	if !strings.HasPrefix(out, "Actions on this ios device") || !strings.Contains(out, "AppSwitcher(") || strings.Contains(out, "RecentApps(") {
		t.Errorf("apex do --list --sim=ios:\n%s", out)
	}
	out = mustRun(t, "do", "--list", "--device", "wda:http://127.0.0.1:8100")
	if !strings.HasPrefix(out, "Actions on this ios device") {
		t.Errorf("apex do --list --device wda:…:\n%.200s", out)
	}
	mustFail(t, []string{"do", "--list", "--device", "wda:ftp://x"}, "--device wda:ftp://x")
	c := adbtest.StartServer(t)
	pointAt(t, c)
	mustFail(t, []string{"do", "--list", "--device", "nosuch"}, `device "nosuch"`, "not found")
}

// TestActNoModelSaysItOnce: a goal only a model understands fails with
// the reason printed once, not three times.
func TestActNoModelSaysItOnce(t *testing.T) {
	var out, errOut bytes.Buffer
	env := &Env{Out: &out, Err: &errOut, Log: slog.New(slog.DiscardHandler)}
	ctx := patience.Context(t, 60*time.Second)
	err := actRun(ctx, env, &ActOptions{Device: DeviceFlags{Sim: true}, Dir: t.TempDir(), Config: emptyFile(t), Getenv: noEnv, OCR: "auto",
		Goal: "add the cheapest headphones to the cart"})
	if err == nil {
		t.Fatal("a goal no rule understands passed with no model")
	}
	var shown bytes.Buffer
	shown.WriteString(out.String() + errOut.String())
	var exit *ExitError
	if errors.As(err, &exit) && exit.Err != nil && !exit.Shown {
		shown.WriteString(exit.Err.Error())
	}
	if n := strings.Count(shown.String(), "could not understand"); n != 1 {
		t.Errorf("the reason is shown %d times:\n%s", n, shown.String())
	}
}

// TestLaunchMissingSimApp: --launch of an app the simulated phone lacks
// says to add it with --app (adb cannot install it on an in-process
// phone), naming the spec that declares it.
func TestLaunchMissingSimApp(t *testing.T) {
	t.Chdir("..") // where examples/apps/ is
	env, out := actEnv(false)
	ctx := patience.Context(t, 60*time.Second)
	err := actRun(ctx, env, &ActOptions{Device: DeviceFlags{Sim: true}, Launch: "com.apex.arcade", Dir: t.TempDir(), Config: emptyFile(t), Getenv: noEnv, OCR: "auto", Goal: `tap "Play"`})
	if err == nil || !strings.Contains(err.Error(), "add it with --app "+filepath.Join("examples", "apps", "arcade.yaml")) || strings.Contains(err.Error(), "adb shell") {
		t.Errorf("err = %v; want the --app hint, not adb's\n%s", err, out)
	}
}

// killingDriver kills the process serving the phone just before the nth
// screenshot, as a person stopping `apex sim` (or a phone losing power)
// would.
type killingDriver struct {
	device.Driver
	kill  func()
	n     int32
	shots atomic.Int32
}

func (k *killingDriver) Screenshot(ctx context.Context) ([]byte, error) {
	if k.shots.Add(1) == k.n {
		// While screencap runs, as it happens: the adb server then
		// answers with an empty stream rather than an error.
		go k.kill()
	}
	return k.Driver.Screenshot(ctx)
}

// TestDeviceKilledThroughAdbServer: a phone whose process is killed
// mid-run behind the adb server is reported as the device going offline,
// not as `screencap -p did not write a PNG: ""`.
func TestDeviceKilledThroughAdbServer(t *testing.T) {
	c := adbtest.StartServer(t)
	sim := startApex(t, "sim", "--port-base", "0", "--wda-port-base", "0")
	sim.waitFor(t, "android-1\tadb\t")
	var serial string
	for _, line := range strings.Split(sim.output(), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "android-1" {
			serial = f[2]
		}
	}
	adbtest.Connect(t, c, serial)
	dir := t.TempDir()
	opts := &RunOptions{
		Files: []string{"../examples/shop-checkout.yaml"}, Concurrency: 1, ReportDir: dir, OCR: "auto", Config: emptyFile(t),
		Summary: filepath.Join(dir, "s.json"),
		Open: func(ctx context.Context, env *Env, f *DeviceFlags) (device.Driver, device.Target, func(), error) {
			d, err := android.NewHost(c, nil).Open(ctx, serial)
			if err != nil {
				return nil, device.Target{}, nil, err
			}
			tg := device.Target{ID: "adb/" + serial, Platform: device.Android}
			kill := func() { sim.cmd.Process.Kill(); <-sim.done }
			return &killingDriver{Driver: d, kill: kill, n: 4}, tg, func() { d.Close() }, nil
		},
	}
	env := &Env{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Log: slog.New(slog.DiscardHandler)}
	ctx := patience.Context(t, 2*time.Minute)
	if err := runRun(ctx, env, opts); err == nil {
		t.Fatal("the run passed on a phone that went away")
	}
	sc := readSummary(t, opts.Summary).Scripts[0]
	if !strings.Contains(sc.Reason, "device lost") || !strings.Contains(sc.Reason, "offline") || strings.Contains(sc.Reason, "did not write a PNG") {
		t.Errorf("reason = %q; want the device going offline", sc.Reason)
	}
}

// cancelingDriver cancels the run (as Ctrl-C does) just before the nth
// tap.
type cancelingDriver struct {
	device.Driver
	cancel func()
	n      int32
	taps   atomic.Int32
}

func (c *cancelingDriver) Tap(ctx context.Context, p device.Point) error {
	if c.taps.Add(1) == c.n {
		c.cancel()
	}
	return c.Driver.Tap(ctx, p)
}

// TestCanceledStepSaysCanceled: after Ctrl-C the step that was running is
// recorded and shown as canceled, not failed.
func TestCanceledStepSaysCanceled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := &RunOptions{Files: []string{"../examples/shop-checkout.yaml"}, Concurrency: 1, ReportDir: dir, OCR: "auto", Config: emptyFile(t),
		Summary: filepath.Join(dir, "s.json"),
		Open: func(ctx context.Context, env *Env, f *DeviceFlags) (device.Driver, device.Target, func(), error) {
			d, tg, release, err := openDevice(ctx, env, &DeviceFlags{Sim: true})
			if err != nil {
				return nil, tg, nil, err
			}
			return &cancelingDriver{Driver: d, cancel: cancel, n: 2}, tg, release, nil
		}}
	var errOut bytes.Buffer
	env := &Env{Out: &bytes.Buffer{}, Err: &errOut, Log: slog.New(slog.DiscardHandler)}
	var exit *ExitError
	if err := runRun(ctx, env, opts); !errors.As(err, &exit) || exit.Code != 130 {
		t.Fatalf("err = %v; want exit 130", err)
	}
	if !regexp.MustCompile(`(?m)^shop-checkout \d+/18 canceled `).MatchString(errOut.String()) || regexp.MustCompile(`(?m)^shop-checkout \d+/18 failed `).MatchString(errOut.String()) {
		t.Errorf("progress says a step failed, or none was canceled:\n%s", errOut.String())
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, _ := st.Runs(context.Background(), 1)
	steps, _ := st.Steps(context.Background(), runs[0].ID)
	var statuses []string
	for _, s := range steps {
		statuses = append(statuses, s.Status)
	}
	if runs[0].Status != store.StatusCanceled || !slices.Contains(statuses, store.StepCanceled) || slices.Contains(statuses, store.StepFailed) {
		t.Errorf("run %s with steps %v; want a canceled run whose running step was canceled", runs[0].Status, statuses)
	}
}

// TestSimTargetWithDevicesAttached: a sim: script run without --sim while
// a phone is attached says where it runs and how to use the phone.
func TestSimTargetWithDevicesAttached(t *testing.T) {
	a := startAdbLab(t, 1)
	dir := t.TempDir()
	script := filepath.Join(dir, "s.yaml")
	os.WriteFile(script, []byte("sim: {launch: com.apex.settings}\ntasks:\n  - name: x\n    flow:\n      - assert: {exists: Network & internet}\n"), 0o644)
	_, errOut, err := run(t, "run", "--report-dir", dir, "--config", emptyFile(t), script)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	id := "adb/" + a.lab.Devices()[0].Serial
	if !strings.Contains(errOut, "target sim:, so they run on a simulated phone in this process although "+id+" is attached") || !strings.Contains(errOut, "--device "+id) {
		t.Errorf("no note that an attached phone is not used:\n%s", errOut)
	}
}

// TestReportShowsThePlatform: apex run and apex act record the device's
// platform, and apex report lists it (text and JSON).
func TestReportShowsThePlatform(t *testing.T) {
	dir := t.TempDir()
	runs, cfg := filepath.Join(dir, "runs"), emptyFile(t)
	for _, p := range []string{"android", "ios"} {
		script := filepath.Join(dir, p+".yaml")
		os.WriteFile(script, []byte("sim:\n  platform: "+p+"\n  launch: com.apex.login\ntasks:\n  - name: sign-in screen\n    flow:\n      - assert: {exists: {id: username}}\n"), 0o644)
		mustRun(t, "run", "--config", cfg, "--report-dir", runs, script)
	}
	mustRun(t, "act", "--sim=ios", "--config", cfg, "--dir", runs, "--launch", "com.apex.login", `check "Sign in" exists`)
	out := mustRun(t, "--json", "report", "--dir", runs)
	var got []runListing
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var platforms []string
	for _, r := range got {
		platforms = append(platforms, r.Platform)
	}
	if want := []string{"ios", "ios", "android"}; !slices.Equal(platforms, want) {
		t.Errorf("platforms of the runs, newest first = %q; want %q", platforms, want)
	}
	out = mustRun(t, "report", "--dir", runs)
	lines := strings.Split(out, "\n")
	if !strings.HasSuffix(strings.TrimSpace(lines[0]), "PLATFORM") || !strings.HasSuffix(strings.TrimSpace(lines[1]), " ios") || !strings.HasSuffix(strings.TrimSpace(lines[3]), " android") {
		t.Errorf("apex report has no platform column:\n%s", out)
	}
}

// TestCtrlCCountsTheStepCanceled: Ctrl-C (a real SIGINT to the apex
// process) while a step waits ends the run canceled; the step says
// canceled, not `failed … context canceled`, and the totals of the
// progress, the summary, the task and the report count it as canceled.
func TestCtrlCCountsTheStepCanceled(t *testing.T) {
	dir := t.TempDir()
	script, summary, runs := filepath.Join(dir, "wait.yaml"), filepath.Join(dir, "summary.json"), filepath.Join(dir, "runs")
	os.WriteFile(script, []byte("sim: {launch: com.android.settings}\ntasks:\n  - name: wait\n    flow:\n      - tap: Display\n      - tap: Nowhere\n        timeout: 300000\n      - tap: Display\n"), 0o644)
	p := startApex(t, "run", "--config", emptyFile(t), "--summary", summary, "--report-dir", runs, script)
	p.waitFor(t, "wait 2/4 passed tap: Display")
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	code, out := p.wait(t)
	if code != 130 {
		t.Errorf("exit %d; want 130 after Ctrl-C:\n%s", code, out)
	}
	if !strings.Contains(out, "wait 3/4 canceled tap: Nowhere") || strings.Contains(out, "failed tap") || strings.Contains(out, "context canceled") && strings.Contains(out, "failed") {
		t.Errorf("the step that waited is not shown canceled:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^FAIL .*wait\.yaml \(4 steps: 2 passed, 0 failed, 1 canceled, 1 skipped;`).MatchString(out) {
		t.Errorf("the script's line does not count the step canceled:\n%s", out)
	}
	sc := readSummary(t, summary).Scripts[0]
	if sc.Status != store.StatusCanceled || sc.Steps["canceled"] != 1 || sc.Steps["failed"] != 0 || len(sc.Tasks) != 1 || sc.Tasks[0].Status != store.StatusCanceled {
		t.Errorf("summary: %+v", sc)
	}
	html, err := os.ReadFile(filepath.Join(sc.RunDir, "report.html"))
	if err != nil || !strings.Contains(string(html), "2 passed, 0 failed, 1 canceled, 1 skipped") {
		t.Errorf("the report does not count the step canceled (%v)", err)
	}
}

// TestMultiScriptSummaryLine: a run of several scripts ends with one line
// that counts them, after the line of each.
func TestMultiScriptSummaryLine(t *testing.T) {
	dir := t.TempDir()
	out, errOut, err := run(t, "run", "--sim", "--ocr", "off", "--config", emptyFile(t), "--report-dir", dir, "../examples/login.yaml", "../examples/settings-toggle.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if !regexp.MustCompile(`(?m)^2 scripts: 2 passed in \S+$`).MatchString(out + errOut) {
		t.Errorf("no summary line counting the scripts:\n%s%s", out, errOut)
	}
}

// TestReadmeSaysWhatMakeTestNeeds: make test installs its tools with
// apt-get; the README says it runs on Debian and Ubuntu only, next to how
// to install apex.
func TestReadmeSaysWhatMakeTestNeeds(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`make test` installs what is missing with `apt-get`", "Debian and Ubuntu only", "go install ./cmd/apex"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the README does not say %q", want)
		}
	}
}
