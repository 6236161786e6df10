package main

// Issue 20's one-shot commands: what package initialisation costs every
// command, the light build that runs them without linking the heavy world,
// and `apex version`, `apex devices` and `apex source` as whole processes
// against `adb exec-out uiautomator dump` on the same simulated phone
// (bench/startup.sh runs the benchmark; figures in bench/README.md).

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/adb/adbtest"
	"github.com/apexagent/apex/bench/benchtest"
	"github.com/apexagent/apex/sim/lab"
)

// Bounds on what our packages may allocate at init, per package and in all.
// Today they allocate ~145 KB in all (action, the largest, ~45 KB: its
// action table); before issue 20 they allocated 3.9 MB and spent 70–100 ms
// compiling regexps, parsing a template and building JSON schemas. Bytes,
// not the clock, are bounded: they do not vary with the machine's load.
const (
	initBytesPerPackage = 96 << 10
	initBytesTotal      = 384 << 10
)

var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, ([0-9.]+) ms clock, ([0-9]+) bytes, ([0-9]+) allocs$`)

// TestInitIsLight runs this test binary (which links every package the apex
// binary links) with GODEBUG=inittrace=1 and no test, and fails when one of
// our packages does heavy work at init: build such tables on first use
// (sync.OnceValue, internal/lazy).
func TestInitIsLight(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var total int64
	var clock time.Duration
	seen := 0
	for _, l := range strings.Split(string(out), "\n") {
		m := initLine.FindStringSubmatch(l)
		if m == nil || !strings.HasPrefix(m[1], "github.com/apexagent/apex/") {
			continue
		}
		seen++
		ms, _ := strconv.ParseFloat(m[2], 64)
		n, _ := strconv.ParseInt(m[3], 10, 64)
		clock += time.Duration(ms * float64(time.Millisecond))
		total += n
		if n > initBytesPerPackage {
			t.Errorf("package %s allocates %d KB at init (bound %d KB): build its tables, regexps or templates on first use (sync.OnceValue, lazy.Regexp)", m[1], n>>10, initBytesPerPackage>>10)
		}
	}
	if seen < 10 {
		t.Fatalf("read %d init lines of our packages; want the trace of all of them:\n%s", seen, out)
	}
	if total > initBytesTotal {
		t.Errorf("our %d packages allocate %d KB at init in all (bound %d KB)", seen, total>>10, initBytesTotal>>10)
	}
	t.Logf("our %d packages at init: %d KB, %v", seen, total>>10, clock)
}

// heavyPackages are the libraries whose package initialisation the light
// build exists to skip, and our packages that link them: none may be in
// its import graph.
var heavyPackages = []string{
	"github.com/nats-io/",
	"modernc.org/",
	"github.com/modelcontextprotocol/",
	"github.com/google/jsonschema-go/",
	"encoding/gob",
	"mvdan.cc/sh/",
	"gopkg.in/yaml.v3",
	"github.com/pkoukk/tiktoken-go",
	"github.com/apexagent/apex/agent",
	"github.com/apexagent/apex/farm",
	"github.com/apexagent/apex/llm",
	"github.com/apexagent/apex/mcp",
	"github.com/apexagent/apex/runner",
	"github.com/apexagent/apex/server",
	"github.com/apexagent/apex/sim",
	"github.com/apexagent/apex/store",
	// iPhones (WebDriverAgent over HTTP), booted phones and the remote
	// OCR engine: HTTP and TLS were the largest part of the light start.
	"net/http",
	"crypto/tls",
	"github.com/apexagent/apex/device/ios",
	"github.com/apexagent/apex/wda",
	"github.com/apexagent/apex/device/hub",
	"github.com/apexagent/apex/ocr/remote",
}

// TestLightBuildLinksNoHeavyPackage fails when a package the light build
// links (cli's files without the !apexlite constraint) imports the heavy
// world: give the file that does //go:build !apexlite, or keep the heavy
// part in a file that has it.
func TestLightBuildLinksNoHeavyPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "apexlite", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -tags apexlite: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/apexagent/apex/device/android") {
		t.Fatalf("the light build does not link device/android; go list said:\n%s", out)
	}
	for _, d := range deps {
		for _, h := range heavyPackages {
			if strings.HasPrefix(d, h) {
				t.Errorf("the light build links %s (heavy: %s)", d, h)
			}
		}
	}
}

// builds are the apex binaries of this checkout, as make install installs
// them: the light build as apex and the full one beside it as apex-full.
// hello is a Go program that prints a line: the floor of any Go process.
type builds struct{ light, full, hello string }

func buildBoth(t testing.TB) builds {
	dir := t.TempDir()
	b := builds{filepath.Join(dir, "apex"), filepath.Join(dir, "apex-full"), filepath.Join(dir, "hello")}
	for _, args := range [][]string{{"-o", b.full}, {"-tags", "apexlite", "-o", b.light}} {
		cmd := exec.Command("go", append(append([]string{"build"}, args...), ".")...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as make install builds them
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	src := filepath.Join(dir, "hello.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"apex hello\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("go", "build", "-o", b.hello, src).CombinedOutput(); err != nil {
		t.Fatalf("go build hello.go: %v\n%s", err, out)
	}
	return b
}

// phone is one simulated Android phone attached to a private adb server,
// and the environment that points apex and adb at that server.
type phone struct {
	serial, port string
	env          []string
	wda          string // a simulated iPhone's WebDriverAgent URL
}

func startPhone(t testing.TB) phone {
	l, err := lab.Start(context.Background(), lab.Options{Seed: 1, Android: 1, IOS: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	dev, iphone := l.Devices()[0], l.Devices()[1]
	c := adbtest.StartServer(t)
	adbtest.Connect(t, c, dev.Serial)
	_, port, err := net.SplitHostPort(c.Addr())
	if err != nil {
		t.Fatal(err)
	}
	return phone{dev.Serial, port, append(os.Environ(), "ANDROID_ADB_SERVER_PORT="+port, "ADB_SERVER_SOCKET="), iphone.URL}
}

// TestLightBuild runs the one-shot commands in the light build alone (no
// apex-full beside it), then every other command line through it with the
// full build beside it, as make install installs them.
func TestLightBuild(t *testing.T) {
	b := buildBoth(t)
	p := startPhone(t)
	run := func(t *testing.T, args ...string) (string, error) {
		cmd := exec.Command(b.light, args...)
		cmd.Env = p.env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// The light build alone: its own commands answer, the rest say how to
	// install the full build.
	hidden := b.full + ".away"
	if err := os.Rename(b.full, hidden); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"version", []string{"version"}, "apex "},
		{"--version", []string{"--version"}, "apex "},
		{"devices", []string{"devices"}, p.serial},
		{"source", []string{"source", "-d", p.serial}, "</hierarchy>"},
		{"source --scene", []string{"source", "--scene", "-d", p.serial}, "Tap an app to open it"},
		{"devices --help", []string{"devices", "--help"}, "--watch"},
	} {
		t.Run("alone/"+tc.name, func(t *testing.T) {
			out, err := run(t, tc.args...)
			if err != nil || !strings.Contains(out, tc.want) {
				t.Errorf("apex %s: %v\n%s\nwant %q in it", strings.Join(tc.args, " "), err, out, tc.want)
			}
		})
	}
	t.Run("alone/devices with apex.yaml naming wda", func(t *testing.T) {
		// This build links no YAML parser: an apex.yaml that may list
		// iPhones (a wda: section) is the full build's to read.
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "apex.yaml"), []byte("wda:\n  urls: [http://127.0.0.1:1]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(b.light, "devices")
		cmd.Env, cmd.Dir = p.env, dir
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "apex-full") {
			t.Errorf("apex devices beside an apex.yaml with wda: and without apex-full: %v\n%s\nwant a failure naming apex-full", err, out)
		}
	})
	t.Run("alone/devices with APEX_WDA_URLS", func(t *testing.T) {
		// This build links no iOS driver: iPhones are the full build's.
		cmd := exec.Command(b.light, "devices")
		cmd.Env = append(slices.Clone(p.env), "APEX_WDA_URLS=http://127.0.0.1:1")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "apex-full") {
			t.Errorf("apex devices with $APEX_WDA_URLS and without apex-full: %v\n%s\nwant a failure naming apex-full", err, out)
		}
	})
	for _, args := range [][]string{{"run", "--help"}, {"source", "--sim"}, {"source", "-d", "wda:http://127.0.0.1:1"}, {"completion", "bash"}, {"__complete", "source", "--device", ""}, {}} {
		t.Run("alone/"+strings.Join(args, " "), func(t *testing.T) {
			out, err := run(t, args...)
			if err == nil || !strings.Contains(out, "apex-full") || !strings.Contains(out, "make install") {
				t.Errorf("apex %s without apex-full: %v\n%s\nwant a failure naming apex-full and make install", strings.Join(args, " "), err, out)
			}
		})
	}
	if err := os.Rename(hidden, b.full); err != nil {
		t.Fatal(err)
	}
	// With the full build beside it: every command line, as one apex.
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"run --help", []string{"run", "--help"}, "Midscene-compatible YAML"},
		{"help", []string{"--help"}, "playground"},
		{"source --sim", []string{"source", "--sim"}, "</hierarchy>"},
		{"completion", []string{"__complete", "source", "--device", ""}, p.serial},
		{"completion script", []string{"completion", "bash"}, "bash completion"},
		// The full build drives the iPhones.
		{"source -d wda:URL", []string{"source", "-d", "wda:" + p.wda}, "XCUIElementTypeApplication"},
	} {
		t.Run("handed/"+tc.name, func(t *testing.T) {
			out, err := run(t, tc.args...)
			if err != nil || !strings.Contains(out, tc.want) {
				t.Errorf("apex %s: %v\n%s\nwant %q in it", strings.Join(tc.args, " "), err, out, tc.want)
			}
		})
	}
	t.Run("handed/completion with APEX_WDA_URLS", func(t *testing.T) {
		cmd := exec.Command(b.light, "__complete", "source", "--device", "")
		cmd.Env = append(slices.Clone(p.env), "APEX_WDA_URLS="+p.wda)
		out, err := cmd.CombinedOutput()
		if iphone := "wda/" + strings.TrimPrefix(p.wda, "http://"); err != nil || !strings.Contains(string(out), iphone) || !strings.Contains(string(out), p.serial) {
			t.Errorf("apex __complete source --device with $APEX_WDA_URLS: %v\n%s\nwant %s and %s", err, out, iphone, p.serial)
		}
	})
	t.Run("handed/devices with APEX_WDA_URLS", func(t *testing.T) {
		cmd := exec.Command(b.light, "devices")
		cmd.Env = append(slices.Clone(p.env), "APEX_WDA_URLS="+p.wda)
		out, err := cmd.CombinedOutput()
		if iphone := "wda/" + strings.TrimPrefix(p.wda, "http://"); err != nil || !strings.Contains(string(out), iphone) || !strings.Contains(string(out), p.serial) {
			t.Errorf("apex devices with $APEX_WDA_URLS: %v\n%s\nwant %s and %s", err, out, iphone, p.serial)
		}
	})
}

// BenchmarkStartup runs both builds of apex (built for the benchmark) as
// whole processes, alternating in each round: `apex version` beside a Go
// hello world (the floor), `apex devices` and `apex source` against one
// simulated phone attached to a private adb server, the last beside `adb
// exec-out uiautomator dump` on the same phone. It reports each command's median wall time and median
// CPU (user + system of the child), and apex source's over adb's.
func BenchmarkStartup(b *testing.B) {
	bins := buildBoth(b)
	p := startPhone(b)
	run := func(b *testing.B, want string, argv []string) (wall, cpu time.Duration) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = p.env
		var out bytes.Buffer
		cmd.Stdout = &out
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s: %v", strings.Join(argv, " "), err)
		}
		wall = time.Since(t0)
		if !strings.Contains(out.String(), want) {
			b.Fatalf("%s: %q; want %q in it", strings.Join(argv, " "), out.String(), want)
		}
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	type cmdline struct {
		name, want string
		argv       []string
	}
	source := []string{"source", "-d", p.serial}
	sets := []struct {
		name string
		cmds []cmdline
	}{
		{"version", []cmdline{
			{"hello", "apex", []string{bins.hello}},
			{"light", "apex", []string{bins.light, "version"}},
			{"full", "apex", []string{bins.full, "version"}},
		}},
		{"devices", []cmdline{
			{"light", p.serial, []string{bins.light, "devices"}},
			{"full", p.serial, []string{bins.full, "devices"}},
		}},
		{"source-vs-adb", []cmdline{
			{"adb", "</hierarchy>", []string{"adb", "-P", p.port, "-s", p.serial, "exec-out", "uiautomator", "dump", "/dev/tty"}},
			{"light", "</hierarchy>", append([]string{bins.light}, source...)},
			{"full", "</hierarchy>", append([]string{bins.full}, source...)},
		}},
	}
	// bench/startup.sh BASE=COMMIT: that commit's light build too, in the
	// same rounds, for before and after in one run.
	if old := os.Getenv("APEX_STARTUP_BASE"); old != "" {
		sets[0].cmds = append(sets[0].cmds, cmdline{"base", "apex", []string{old, "version"}})
		sets[1].cmds = append(sets[1].cmds, cmdline{"base", p.serial, []string{old, "devices"}})
		sets[2].cmds = append(sets[2].cmds, cmdline{"base", "</hierarchy>", append([]string{old}, source...)})
	}
	for _, set := range sets {
		b.Run(set.name, func(b *testing.B) {
			walls := make([][]time.Duration, len(set.cmds))
			cpus := make([][]time.Duration, len(set.cmds))
			for b.Loop() {
				for i, c := range set.cmds {
					w, u := run(b, c.want, c.argv)
					walls[i] = append(walls[i], w)
					cpus[i] = append(cpus[i], u)
				}
			}
			for i, c := range set.cmds {
				b.ReportMetric(ms(benchtest.Median(walls[i])), c.name+"-ms-median")
				b.ReportMetric(ms(benchtest.Median(cpus[i])), c.name+"-cpu-ms")
				if i > 0 && set.cmds[0].name == "adb" {
					b.ReportMetric(float64(benchtest.Median(walls[i]))/float64(benchtest.Median(walls[0])), c.name+"/adb-wall")
					b.ReportMetric(float64(benchtest.Median(cpus[i]))/float64(benchtest.Median(cpus[0])), c.name+"/adb-cpu")
				}
			}
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
