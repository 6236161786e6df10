package main

// Issue 20's one-shot commands: what package initialisation costs every
// command, and `apex version`, `apex devices` and `apex source` as whole
// processes against `adb exec-out uiautomator dump` on the same simulated
// phone (bench/startup.sh runs the benchmark; figures in bench/README.md).

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// BenchmarkStartup runs the apex binary (built for the benchmark) as a whole
// process: `apex version`, `apex devices` and `apex source` against one
// simulated phone attached to a private adb server, the last alternating
// with `adb exec-out uiautomator dump` on the same phone. It reports each
// command's median wall time and median CPU (user + system of the child).
func BenchmarkStartup(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "apex")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	l, err := lab.Start(context.Background(), lab.Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	dev := l.Devices()[0]
	c := adbtest.StartServer(b)
	adbtest.Connect(b, c, dev.Serial)
	_, port, err := net.SplitHostPort(c.Addr())
	if err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), "ANDROID_ADB_SERVER_PORT="+port, "ADB_SERVER_SOCKET=")
	run := func(b *testing.B, want string, name string, args ...string) (wall, cpu time.Duration) {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout = &out
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
		}
		wall = time.Since(t0)
		if !strings.Contains(out.String(), want) {
			b.Fatalf("%s %s: %q; want %q in it", name, strings.Join(args, " "), out.String(), want)
		}
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	type cmdline struct {
		name, want string
		argv       []string
	}
	for _, set := range []struct {
		name string
		cmds []cmdline
	}{
		{"version", []cmdline{{"apex", "apex", []string{bin, "version"}}}},
		{"devices", []cmdline{{"apex", dev.Serial, []string{bin, "devices"}}}},
		{"source-vs-adb", []cmdline{
			{"apex", "</hierarchy>", []string{bin, "source", "-d", dev.Serial}},
			{"adb", "</hierarchy>", []string{"adb", "-P", port, "-s", dev.Serial, "exec-out", "uiautomator", "dump", "/dev/tty"}},
		}},
	} {
		b.Run(set.name, func(b *testing.B) {
			walls := make([][]time.Duration, len(set.cmds))
			cpus := make([][]time.Duration, len(set.cmds))
			for b.Loop() {
				for i, c := range set.cmds {
					w, u := run(b, c.want, c.argv[0], c.argv[1:]...)
					walls[i] = append(walls[i], w)
					cpus[i] = append(cpus[i], u)
				}
			}
			for i, c := range set.cmds {
				b.ReportMetric(ms(benchtest.Median(walls[i])), fmt.Sprintf("%s-ms-median", c.name))
				b.ReportMetric(ms(benchtest.Median(cpus[i])), fmt.Sprintf("%s-cpu-ms", c.name))
			}
			if len(set.cmds) == 2 {
				b.ReportMetric(float64(benchtest.Median(walls[0]))/float64(benchtest.Median(walls[1])), "apex/adb")
			}
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
