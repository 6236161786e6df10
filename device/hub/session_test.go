package hub_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/hub"
	"github.com/apexagent/apex/sim/lab"
)

// The test binary plays two other programs, chosen by $APEX_HUB_CHILD:
// "phone" serves one simulated phone and prints its address as apex sim
// does; "server" runs a session host over such phones in $APEX_HUB_STATE,
// boots one and prints "booted SERIAL PID".
func TestMain(m *testing.M) {
	switch os.Getenv("APEX_HUB_CHILD") {
	case "phone":
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		l, err := lab.Start(ctx, lab.Options{Android: 1})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("android-1\tadb\t%s\t(child)\n", l.Devices()[0].Addr)
		<-ctx.Done()
		l.Close()
		os.Exit(0)
	case "emulator":
		// A stand-in for the SDK's emulator: our phone's adbd on the
		// adb port of the -port it was given, announced to the adb
		// server as an emulator is.
		emulatorChild(os.Getenv("APEX_HUB_EMU_ARGS"))
		os.Exit(0)
	case "server":
		h, err := hub.NewSessionHost(context.Background(), phoneHost(), hub.SessionOptions{RunCap: 2, StateDir: os.Getenv("APEX_HUB_STATE")})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		b, err := h.Boot(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("booted %s %d\n", b.Target.Serial, b.PID)
		select {} // until killed
	}
	os.Exit(m.Run())
}

// phoneHost boots phones as processes of this test binary.
func phoneHost() *hub.ProcessHost {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	h, err := hub.NewProcessHost("sim", hub.ProcessOptions{Command: []string{exe, "-test.run=^$"}, Env: []string{"APEX_HUB_CHILD=phone"}})
	if err != nil {
		panic(err)
	}
	return h
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i+2 < len(b) && b[i+2] != 'Z'
}

// eventually polls cond until it holds or 20s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("still waiting for %s after 20s", what)
		}
	}
}

// TestRunCap: with run cap 2 the third boot is refused; the two phones are
// real processes that answer, and Close stops them.
func TestRunCap(t *testing.T) {
	h, err := hub.NewSessionHost(ctx(t), phoneHost(), hub.SessionOptions{RunCap: 2, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for range 2 {
		b, err := h.Boot(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, b.PID)
		d, err := h.Open(ctx(t), b.Target.Serial)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.ForegroundApp(ctx(t)); err != nil {
			t.Errorf("the booted phone %s does not answer: %v", b.Target.ID, err)
		}
		d.Close()
	}
	if _, err := h.Boot(ctx(t)); !errors.Is(err, hub.ErrRunCap) || !strings.Contains(err.Error(), "2 of 2") {
		t.Errorf("third Boot = %v; want the run cap refusal", err)
	}
	if n := len(h.Sessions()); n != 2 {
		t.Errorf("%d sessions; want 2", n)
	}
	ts, err := h.Targets(ctx(t))
	if err != nil || len(ts) != 2 || !ts[0].Ready() || !ts[1].Ready() {
		t.Errorf("Targets = %v, %v; want the two phones ready", ts, err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if running(pid) {
			t.Errorf("phone process %d still runs after Close", pid)
		}
	}
}

// TestIdleCap: a session no driver uses is stopped after the idle cap; one
// with a driver open is not.
func TestIdleCap(t *testing.T) {
	h, err := hub.NewSessionHost(ctx(t), phoneHost(), hub.SessionOptions{IdleCap: 3 * time.Second, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	used, err := h.Boot(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	d, err := h.Open(ctx(t), used.Target.Serial)
	if err != nil {
		t.Fatal(err)
	}
	unused, err := h.Boot(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the unused session to stop", func() bool { return !running(unused.PID) })
	if ss := h.Sessions(); len(ss) != 1 || ss[0].Target.Serial != used.Target.Serial {
		t.Errorf("sessions after the idle cap = %v; want only the one in use", ss)
	}
	if !running(used.PID) {
		t.Error("the session in use was stopped")
	}
	d.Close()
	eventually(t, "the session to stop once its driver closed", func() bool { return !running(used.PID) })
}

// TestOrphans: a server killed with its session running leaves a record;
// the next session host stops that orphan, and leaves alone the session of
// a server that still runs.
func TestOrphans(t *testing.T) {
	state := t.TempDir()
	startServer := func() (*exec.Cmd, int) {
		exe, _ := os.Executable()
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), "APEX_HUB_CHILD=server", "APEX_HUB_STATE="+state)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			t.Fatalf("the server printed nothing: %v", err)
		}
		f := strings.Fields(line)
		pid, _ := strconv.Atoi(f[len(f)-1])
		if f[0] != "booted" || pid == 0 {
			t.Fatalf("the server said %q", line)
		}
		return cmd, pid
	}
	crashed, orphan := startServer()
	live, kept := startServer()
	t.Cleanup(func() {
		live.Process.Kill()
		live.Wait()
		syscall.Kill(kept, syscall.SIGKILL)
	})
	if err := crashed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	crashed.Wait()
	if !running(orphan) {
		t.Fatal("the phone died with its server; the test needs it to outlive it")
	}
	if recs, _ := hub.ReadSessions(state); len(recs) != 2 {
		t.Fatalf("%d sessions recorded; want 2", len(recs))
	}

	h, err := hub.NewSessionHost(ctx(t), phoneHost(), hub.SessionOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	eventually(t, "the orphan to stop", func() bool { return !running(orphan) })
	if !running(kept) {
		t.Error("the session of the live server was stopped")
	}
	recs, _ := hub.ReadSessions(state)
	if len(recs) != 1 || recs[0].PID != kept {
		t.Errorf("records after the cleanup = %+v; want only the live server's", recs)
	}
	if _, err := os.Stat(filepath.Join(state)); err != nil {
		t.Fatal(err)
	}
	var _ device.Booter = h
}
