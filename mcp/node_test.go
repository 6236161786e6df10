package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// npmDir is test/npm, where `make deps-npm` installs the real clients.
func npmDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "test", "npm")
}

// nodeClient returns node and the client script, or skips the test.
func nodeClient(t *testing.T) (node, script string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(npmDir(), "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Skip("@modelcontextprotocol/sdk not installed in test/npm (run `make deps-npm`): skipping the real MCP client test")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed: skipping the real MCP client test")
	}
	return node, filepath.Join(npmDir(), "apex-mcp-client.mjs")
}

var (
	buildOnce sync.Once
	apexBin   string
	buildErr  error
)

// buildApex builds the apex command once per test run.
func buildApex(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "apex-mcp-test")
		if err != nil {
			buildErr = err
			return
		}
		apexBin = filepath.Join(dir, "apex")
		goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
		out, err := exec.Command(goBin, "build", "-o", apexBin, "github.com/apexagent/apex/cmd/apex").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		t.Fatalf("go build apex: %v", buildErr)
	}
	return apexBin
}

// TestMain removes the apex binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if apexBin != "" {
		os.RemoveAll(filepath.Dir(apexBin))
	}
	os.Exit(code)
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// summary is what the client script prints when every check passed.
type summary struct {
	Transport  string
	Tools      int
	Device     string
	Tapped     string
	Screenshot struct{ Width, Height int }
	Refused    string
	Reopened   bool
	Asserted   bool
}

// runClient runs the client script and decodes its summary.
func runClient(t *testing.T, env []string, args ...string) summary {
	t.Helper()
	node, script := nodeClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = npmDir()
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("MCP client (%s): %v\n%s", args[0], err, stderr.String())
	}
	var s summary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("client summary %q: %v\n%s", out, err, stderr.String())
	}
	return s
}

func checkSummary(t *testing.T, s summary, device string) {
	t.Helper()
	if s.Device != device {
		t.Errorf("the client opened %q, want %q", s.Device, device)
	}
	if !regexp.MustCompile(`^e\d+$`).MatchString(s.Tapped) {
		t.Errorf("tapped %q, want an element id", s.Tapped)
	}
	if got := max(s.Screenshot.Width, s.Screenshot.Height); got != 1024 {
		t.Errorf("screenshot %dx%d, want a long side of 1024", s.Screenshot.Width, s.Screenshot.Height)
	}
	if !strings.Contains(s.Refused, "device "+device+" is in use by") || !s.Reopened {
		t.Errorf("second session: refused %q, reopened after close %v", s.Refused, s.Reopened)
	}
	if !s.Asserted {
		t.Error("the client did not get a passing assert")
	}
	if s.Tools < 20 {
		t.Errorf("%d tools", s.Tools)
	}
}

// startApex runs apex with args until the test ends and returns the first
// submatch of re in its output (stdout and stderr), e.g. where it listens.
func startApex(t *testing.T, re string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, buildApex(t), args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(), "APEX_RUNS_DIR="+t.TempDir())
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	done := make(chan struct{})
	var logs strings.Builder // apex's output, shown if the test fails
	t.Cleanup(func() {
		cancel()
		<-done // the output reaches EOF when apex exits
		cmd.Wait()
		r.Close()
		if t.Failed() {
			t.Logf("apex %s:\n%s", strings.Join(args, " "), logs.String())
		}
	})
	found := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		logs.WriteString(sc.Text() + "\n")
		if m := regexp.MustCompile(re).FindStringSubmatch(sc.Text()); m != nil {
			found = m[1]
			break
		}
	}
	go func() {
		defer close(done)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
		}
	}()
	if found == "" {
		t.Fatalf("apex %s did not print %s", strings.Join(args, " "), re)
	}
	return found
}

// TestNodeClientStdio: each session is its own `apex mcp` process (as each
// MCP host starts one), both driving one phone of `apex sim` over adbd; the
// lease holds across them.
func TestNodeClientStdio(t *testing.T) {
	t.Parallel() // mostly waiting on other processes
	nodeClient(t)
	addr := startApex(t, `^android-1\tadb\t(\S+)`, "sim", "--port-base", "0")
	s := runClient(t, []string{"TMPDIR=" + t.TempDir(), "APEX_RUNS_DIR=" + t.TempDir()}, "stdio", buildApex(t), "mcp", "--adb=false", "--connect", addr)
	checkSummary(t, s, "adbd/"+addr)
}

// TestNodeClientHTTP: one `apex mcp --sim --http` process, two HTTP
// sessions with a bearer token.
func TestNodeClientHTTP(t *testing.T) {
	t.Parallel()
	nodeClient(t)
	url := startApex(t, `on (http://\S+)`, "mcp", "--sim", "--adb=false", "--http", "127.0.0.1:0", "--token", "s3cret")
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a request without the token got %s, want 401", resp.Status)
	}

	s := runClient(t, nil, "http", url, "s3cret")
	if !strings.HasPrefix(s.Device, "sim/") {
		t.Errorf("device %q is not the simulated phone", s.Device)
	}
	checkSummary(t, s, s.Device)
}
