package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/device/lease"
	"github.com/apexagent/apex/internal/browsertest"
	"github.com/apexagent/apex/internal/patience"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mainEnv makes the test binary run as the apex command, so tests start
// apex as the real processes a person would.
const mainEnv = "APEX_CLI_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(Main(os.Args[1:]))
	}
	// The package's tests, and the processes they start, lease devices in
	// a directory of their own, not the machine's.
	dir, err := os.MkdirTemp("", "apex-cli-leases")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(lease.DirEnv, dir)
	// Processes started from this binary (the playground's `apex sim`) run
	// as apex.
	os.Setenv(mainEnv, "1")
	// Nor do they read the machine's own ~/.config/apex/apex.yaml.
	os.Setenv("XDG_CONFIG_HOME", dir)
	// Nor record booted phones in its session state directory.
	os.Setenv("APEX_SESSIONS_DIR", filepath.Join(dir, "sessions"))
	code := m.Run()
	chromium.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

// chromium is the one headless chromium of this package's tests.
var chromium browsertest.Shared

// procTimeout bounds every wait on an apex process.
var procTimeout = patience.Of(60 * time.Second)

// apexCommand is the apex command line as a process (this test binary
// running Main), recording in a fresh runs directory, with no model.
func apexCommand(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1", RunsDirEnv+"="+t.TempDir(),
		"APEX_MODEL_BASE_URL=", "APEX_MODEL_NAME=", "APEX_MODEL_API_KEY=")
	cmd.Dir = t.TempDir() // no apex.yaml
	return cmd
}

// proc is a running apex process whose output is watched line by line.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once it exited and its output is read

	mu      sync.Mutex
	out     strings.Builder // stdout and stderr, interleaved
	changed chan struct{}   // closed and replaced at each new line
}

func startApex(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: apexCommand(t, args...), done: make(chan struct{}), changed: make(chan struct{})}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		wg.Go(func() {
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				p.mu.Lock()
				p.out.WriteString(sc.Text() + "\n")
				close(p.changed)
				p.changed = make(chan struct{})
				p.mu.Unlock()
			}
		})
	}
	go func() {
		wg.Wait()
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// output is what the process printed so far.
func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitFor waits until the process has printed want.
func (p *proc) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.NewTimer(procTimeout)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		out, changed := p.out.String(), p.changed
		p.mu.Unlock()
		if strings.Contains(out, want) {
			return
		}
		select {
		case <-changed:
		case <-p.done:
			if out := p.output(); !strings.Contains(out, want) {
				t.Fatalf("apex %s exited without printing %q:\n%s", strings.Join(p.cmd.Args[1:], " "), want, out)
			}
			return
		case <-deadline.C:
			t.Fatalf("apex %s did not print %q in %v:\n%s", strings.Join(p.cmd.Args[1:], " "), want, procTimeout, p.output())
		}
	}
}

// wait waits for the process to exit and returns its exit code and output.
func (p *proc) wait(t *testing.T) (int, string) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(procTimeout):
		t.Fatalf("apex %s still runs after %v:\n%s", strings.Join(p.cmd.Args[1:], " "), procTimeout, p.output())
	}
	return p.cmd.ProcessState.ExitCode(), p.output()
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// holdWithPlayground starts an apex playground process holding the device
// serial names, once its session is open.
func holdWithPlayground(t *testing.T, serial string) *proc {
	t.Helper()
	p := startApex(t, "playground", "--device", serial, "--no-open", "--port", "0")
	p.waitFor(t, "Apex playground: ")
	if out := p.output(); strings.Contains(out, "apex: ") {
		t.Fatalf("the playground did not open %s:\n%s", serial, out)
	}
	return p
}

// TestDeviceInUseAcrossProcesses: while an apex playground process holds a
// phone, apex do in another process is refused at once with the holder's
// PID and command; with --wait-device it waits, and runs when the
// playground ends.
func TestDeviceInUseAcrossProcesses(t *testing.T) {
	a := startAdbLab(t, 1)
	serial := a.lab.Devices()[0].Serial
	holder := holdWithPlayground(t, serial)
	inUse := fmt.Sprintf("device adb/%s is in use by PID %d (apex playground)", serial, holder.cmd.Process.Pid)

	start := time.Now()
	code, out := startApex(t, "do", "Home", "--device", serial).wait(t)
	t.Logf("the second process was refused in %v", time.Since(start))
	if code != 1 || !strings.Contains(out, inUse+": wait for it with --wait-device DURATION, or pick another device") {
		t.Errorf("apex do on the held device: exit %d, want 1 saying %q:\n%s", code, inUse, out)
	}
	if holder.exited() {
		t.Fatalf("the playground ended, so the refusal proves nothing:\n%s", holder.output())
	}

	waiter := startApex(t, "do", "Home", "--device", serial, "--wait-device", "10s")
	waiter.waitFor(t, inUse+"; waiting up to 10s for it")
	if waiter.exited() {
		t.Fatalf("apex do --wait-device ended while the device was held:\n%s", waiter.output())
	}
	if err := holder.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code, out := holder.wait(t); code != 0 {
		t.Errorf("the playground after Ctrl-C: exit %d:\n%s", code, out)
	}
	if code, out := waiter.wait(t); code != 0 || !strings.Contains(out, "Home done on adb/"+serial) {
		t.Errorf("apex do --wait-device after the playground ended: exit %d:\n%s", code, out)
	}
}

// TestWaitDeviceGivesUp: --wait-device waits that long, no longer, and
// then says the device is still held.
func TestWaitDeviceGivesUp(t *testing.T) {
	a := startAdbLab(t, 1)
	serial := a.lab.Devices()[0].Serial
	holder := holdWithPlayground(t, serial)
	code, out := startApex(t, "screenshot", "-o", filepath.Join(t.TempDir(), "s.png"), "--device", serial, "--wait-device", "300ms").wait(t)
	want := fmt.Sprintf("device adb/%s is in use by PID %d (apex playground) after waiting 300ms: wait longer with --wait-device DURATION", serial, holder.cmd.Process.Pid)
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("apex screenshot --wait-device 300ms: exit %d, want 1 saying %q:\n%s", code, want, out)
	}
}

// TestActRefusedWhileMCPHolds: a device an apex mcp session opened is
// refused to apex act in another process, naming the MCP process and its
// client; closed, act drives it. The other way round, apex mcp is refused a
// device an apex playground holds.
func TestActRefusedWhileMCPHolds(t *testing.T) {
	a := startAdbLab(t, 1)
	serial := a.lab.Devices()[0].Serial
	id := "adb/" + serial
	ctx, cancel := context.WithTimeout(context.Background(), procTimeout)
	defer cancel()
	mcpCmd := apexCommand(t, "mcp")
	mcpCmd.Stderr = io.Discard
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "lease-test", Version: "0"}, nil).Connect(ctx, &sdk.CommandTransport{Command: mcpCmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(tool string) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"device": id}})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		return text.String(), !res.IsError
	}
	if out, ok := call("device_open"); !ok {
		t.Fatalf("device_open: %s", out)
	}

	goal := `tap "Shop"`
	code, out := startApex(t, "act", "--device", serial, goal).wait(t)
	want := fmt.Sprintf("device %s is in use by PID %d (apex mcp for lease-test)", id, mcpCmd.Process.Pid)
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("apex act while apex mcp holds the device: exit %d, want 1 saying %q:\n%s", code, want, out)
	}

	if out, ok := call("device_close"); !ok {
		t.Fatalf("device_close: %s", out)
	}
	if code, out := startApex(t, "act", "--device", serial, goal).wait(t); code != 0 {
		t.Errorf("apex act after device_close: exit %d:\n%s", code, out)
	}

	holder := holdWithPlayground(t, serial)
	out, ok := call("device_open")
	want = fmt.Sprintf("device %s is in use by PID %d (apex playground)", id, holder.cmd.Process.Pid)
	if ok || !strings.Contains(out, want) {
		t.Errorf("device_open while apex playground holds the device: %s, want %q", out, want)
	}
}
