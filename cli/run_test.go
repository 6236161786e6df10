package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apexagent/apex/adb/adbtest"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/runner"
	"github.com/apexagent/apex/sim/lab"
)

// junitFile is the part of a JUnit file CI systems read.
type junitFile struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Tests int    `xml:"tests,attr"`
		Cases []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
			Error   *struct{} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j junitFile
	if err := xml.Unmarshal(data, &j); err != nil {
		t.Fatalf("JUnit file does not parse: %v\n%s", err, data)
	}
	return j
}

func readSummary(t *testing.T, path string) runner.Summary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s runner.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("summary does not parse: %v\n%s", err, data)
	}
	return s
}

func examples(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v %v", files, err)
	}
	return files
}

// TestRunExamplesOnSim is the main job: every example passes on simulated
// phones driven through the device protocol (sim/lab + adb direct mode).
func TestRunExamplesOnSim(t *testing.T) {
	dir := t.TempDir()
	files := examples(t)
	junit, summary := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "summary.json")
	args := append([]string{"run", "--sim", "--concurrency", "3", "--junit", junit, "--summary", summary, "--report-dir", filepath.Join(dir, "runs")}, files...)
	out, errOut, err := run(t, args...)
	if err != nil {
		t.Fatalf("apex run: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	j := readJUnit(t, junit)
	if len(j.Suites) != len(files) || j.Failures != 0 || j.Errors != 0 || j.Tests < 2*len(files) {
		t.Fatalf("JUnit: %d suites, %d tests, %d failures, %d errors\n%s", len(j.Suites), j.Tests, j.Failures, j.Errors, out)
	}
	s := readSummary(t, summary)
	if !s.Passed || s.Total != len(files) || s.Counts["passed"] != len(files) {
		t.Fatalf("summary = %+v", s)
	}
	for _, sc := range s.Scripts {
		if _, err := os.Stat(sc.Report); err != nil {
			t.Errorf("%s: report: %v", sc.File, err)
		}
		if !strings.Contains(errOut, "PASS "+sc.File) || !strings.Contains(errOut, "report: "+sc.Report) {
			t.Errorf("progress does not say %s passed and where its report is:\n%s", sc.File, errOut)
		}
		if !strings.HasPrefix(sc.Device, "sim/127.0.0.1:") {
			t.Errorf("%s ran on %q, want a simulated phone", sc.File, sc.Device)
		}
	}
}

// TestRunThroughAdbServer drives a simulated phone through Debian's adb
// server on a private port, as a real device would be driven.
func TestRunThroughAdbServer(t *testing.T) {
	c := adbtest.StartServer(t)
	l, err := lab.Start(context.Background(), lab.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	dev := l.Devices()[0]
	adbtest.Connect(t, c, dev.Addr)
	_, port, _ := strings.Cut(c.Addr(), ":")
	t.Setenv("ANDROID_ADB_SERVER_PORT", port)
	t.Setenv("ADB_SERVER_SOCKET", "")
	dir := t.TempDir()
	junit := filepath.Join(dir, "junit.xml")
	files := examples(t)
	args := append([]string{"run", "--device", dev.Serial, "--junit", junit, "--report-dir", dir}, files...)
	out, errOut, err := run(t, args...)
	if err != nil {
		t.Fatalf("apex run: %v\n%s\n%s", err, out, errOut)
	}
	j := readJUnit(t, junit)
	if len(j.Suites) != len(files) || j.Failures+j.Errors != 0 || j.Tests < 2*len(files) {
		t.Fatalf("JUnit: %+v", j)
	}
	for _, f := range files {
		if !strings.Contains(errOut, "PASS "+f) {
			t.Errorf("%s did not pass through the adb server:\n%s", f, errOut)
		}
	}
}

func TestRunFailuresAndExitCode(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	failing := filepath.Join(dir, "failing.yaml")
	os.WriteFile(bad, []byte("sim: {}\ntasks:\n  - name: x\n    flow:\n      - clickIt: Search\n"), 0o644)
	os.WriteFile(failing, []byte("sim:\n  launch: com.apex.login\ntasks:\n  - name: sign in\n    flow:\n      - tap: Register\n"), 0o644)
	summary := filepath.Join(dir, "s.json")
	junit := filepath.Join(dir, "j.xml")
	_, out, err := run(t, "run", "--retry", "1", "--summary", summary, "--junit", junit, "--report-dir", dir, bad, failing, "../examples/login.yaml")
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Code != 1 || !strings.Contains(err.Error(), "2 of 3 scripts did not pass") {
		t.Fatalf("err = %v; want exit 1\n%s", err, out)
	}
	s := readSummary(t, summary)
	byFile := map[string]runner.ScriptSummary{}
	for _, sc := range s.Scripts {
		byFile[sc.File] = sc
	}
	if b := byFile[bad]; b.Status != "error" || !strings.Contains(b.Reason, "bad.yaml:5:9: unknown step \"clickIt\"") || b.Attempts != 0 {
		t.Errorf("bad script: %+v", b)
	}
	if f := byFile[failing]; f.Status != "failed" || f.Attempts != 2 || !strings.Contains(f.Reason, `no element matches "Register"`) {
		t.Errorf("failing script: %+v", f)
	}
	if p := byFile["../examples/login.yaml"]; p.Status != "passed" || p.Attempts != 1 {
		t.Errorf("passing script: %+v", p)
	}
	if !strings.Contains(out, "retry "+failing+" (attempt 2 of 2)") {
		t.Errorf("no retry line:\n%s", out)
	}
	j := readJUnit(t, junit)
	if j.Errors != 1 || j.Failures != 1 {
		t.Errorf("JUnit failures %d errors %d", j.Failures, j.Errors)
	}
}

// stoppingDriver stops the simulated phone (it vanishes from the network)
// just before the nth tap.
type stoppingDriver struct {
	device.Driver
	dev  *lab.Device
	n    int32
	taps atomic.Int32
}

func (s *stoppingDriver) Tap(ctx context.Context, p device.Point) error {
	if s.taps.Add(1) == s.n {
		s.dev.Stop()
	}
	return s.Driver.Tap(ctx, p)
}

func TestDeviceKilledMidRun(t *testing.T) {
	dir := t.TempDir()
	opts := &RunOptions{
		Files:       []string{"../examples/shop-checkout.yaml"},
		Concurrency: 1,
		ReportDir:   dir,
		Summary:     filepath.Join(dir, "s.json"),
		Open: func(ctx context.Context, env *Env, f *DeviceFlags) (device.Driver, device.Target, func(), error) {
			l, err := lab.Start(context.WithoutCancel(ctx), lab.Options{})
			if err != nil {
				return nil, device.Target{}, nil, err
			}
			dev := l.Devices()[0]
			d, err := android.OpenDirect(ctx, dev.Addr, &android.Options{})
			if err != nil {
				l.Close()
				return nil, device.Target{}, nil, err
			}
			t := device.Target{ID: "sim/" + dev.Serial, Platform: device.Android}
			return &stoppingDriver{Driver: d, dev: dev, n: 3}, t, func() { d.Close(); l.Close() }, nil
		},
	}
	var out, errOut bytes.Buffer
	env := &Env{Out: &out, Err: &errOut, Log: slog.New(slog.DiscardHandler)}
	ctx := patience.Context(t, 2*time.Minute)
	err := runRun(ctx, env, opts)
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Code != 1 {
		t.Fatalf("err = %v\n%s", err, out.String())
	}
	s := readSummary(t, opts.Summary)
	sc := s.Scripts[0]
	if sc.Status != "error" || !strings.Contains(sc.Reason, "device lost during task") || !strings.Contains(sc.Reason, "shop-checkout.yaml:") {
		t.Fatalf("script summary = %+v", sc)
	}
	if sc.Steps["total"] != 18 || sc.Steps["failed"] != 1 || sc.Steps["passed"]+sc.Steps["skipped"] != 17 {
		t.Errorf("steps = %v, want all 18 recorded", sc.Steps)
	}
	html, err := os.ReadFile(sc.Report)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	if !strings.Contains(string(html), "device lost during task") {
		t.Errorf("report does not say where and why the run stopped")
	}
}

// TestRunAIStepsOffline: ai* steps written in the controlled language run
// on the AI runtime's rule planner with no model; other ai* steps stop
// with the needs-a-model error naming what to set.
func TestRunAIStepsOffline(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("APEX_MODEL_NAME", "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("MIDSCENE_MODEL_NAME", "")
	ok := filepath.Join(dir, "ok.yaml")
	os.WriteFile(ok, []byte(`sim: {launch: com.android.settings}
tasks:
  - name: Wi-Fi in plain words
    flow:
      - aiAct: 'tap "Network & internet", then check "Connected to ApexNet" exists'
      - aiAssert: 'check "Wi-Fi" exists'
      - assert: {checked: {id: wifi}}
`), 0o644)
	vague := filepath.Join(dir, "vague.yaml")
	os.WriteFile(vague, []byte(`sim: {launch: com.apex.shop}
tasks:
  - name: a goal only a model understands
    flow:
      - aiAct: find me something nice to wear and buy it
`), 0o644)
	summary := filepath.Join(dir, "s.json")
	out, _, err := run(t, "run", "--summary", summary, "--report-dir", dir, "--config", emptyFile(t), ok, vague)
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Code != 1 {
		t.Fatalf("err = %v\n%s", err, out)
	}
	s := readSummary(t, summary)
	byFile := map[string]string{}
	for _, sc := range s.Scripts {
		byFile[sc.File] = sc.Status + ": " + sc.Reason
	}
	if got := byFile[ok]; !strings.HasPrefix(got, "passed") {
		t.Errorf("controlled-language ai steps: %s\n%s", got, out)
	}
	if got := byFile[vague]; !strings.HasPrefix(got, "failed") || !strings.Contains(got, "needs a model") || !strings.Contains(got, "APEX_MODEL") {
		t.Errorf("a goal only a model understands: %s", got)
	}
}

// TestRunOCRFlag: the stale-tree example passes with OCR (the default,
// auto), and --ocr takes only auto, always or off.
func TestRunOCRFlag(t *testing.T) {
	if _, _, err := run(t, "run", "--sim", "--ocr", "sometimes", "../examples/login.yaml"); err == nil || !strings.Contains(err.Error(), "use auto, always or off") {
		t.Fatalf("--ocr sometimes: err = %v", err)
	}
	dir := t.TempDir()
	out, errOut, err := run(t, "run", "--sim", "--app", "../examples/apps/arcade.yaml", "--report-dir", dir, "../examples/ocr/arcade-stale.yaml")
	if err != nil {
		t.Fatalf("arcade-stale with OCR: %v\n%s\n%s", err, out, errOut)
	}
}

// TestRunBadModelConfig: a broken apex.yaml stops the batch before any
// device starts, naming the file's problem.
func TestRunBadModelConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "apex.yaml")
	os.WriteFile(cfg, []byte("model:\n  nmae: gpt\n"), 0o644)
	opened := false
	opts := &RunOptions{Files: []string{"../examples/login.yaml"}, Concurrency: 1, ReportDir: dir, Config: cfg, OCR: "auto",
		Open: func(context.Context, *Env, *DeviceFlags) (device.Driver, device.Target, func(), error) {
			opened = true
			return nil, device.Target{}, nil, errors.New("no device in this test")
		}}
	env := &Env{Out: io.Discard, Err: io.Discard, Log: slog.New(slog.DiscardHandler)}
	err := runRun(context.Background(), env, opts)
	if err == nil || !strings.Contains(err.Error(), "apex.yaml:2: model: unknown setting \"nmae\"") {
		t.Errorf("err = %v; want the model config's error naming the bad key", err)
	}
	if opened {
		t.Error("a device was opened before the config was read")
	}
}

// TestRunDeviceListedTwice: each worker leases its device, so a device
// given twice to --device is refused up front rather than found in use by
// the run itself.
func TestRunDeviceListedTwice(t *testing.T) {
	_, _, err := run(t, "run", "--device", "emulator-5554, emulator-5554", "--concurrency", "2", "--report-dir", t.TempDir(), "../examples/login.yaml")
	if err == nil || !strings.Contains(err.Error(), "--device lists emulator-5554 twice") {
		t.Fatalf("err = %v; want it to name the device given twice", err)
	}
}
