package hub_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/device/hub"
	"github.com/apexagent/apex/sim/lab"
)

// emulatorChild serves a simulated phone where the emulator started with
// args would serve its adbd (console port + 1), tells the adb server
// (host:emulator:PORT, as the emulator does) and serves until SIGTERM.
func emulatorChild(args string) {
	f := strings.Fields(args)
	port := 0
	for i, a := range f {
		if a == "-port" && i+1 < len(f) {
			port, _ = strconv.Atoi(f[i+1])
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	l, err := lab.Start(ctx, lab.Options{Android: 1, PortBase: port + 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer l.Close()
	c, err := net.Dial("tcp", "127.0.0.1:"+os.Getenv("ANDROID_ADB_SERVER_PORT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "the adb server:", err)
		os.Exit(1)
	}
	msg := "host:emulator:" + strconv.Itoa(port+1)
	fmt.Fprintf(c, "%04x%s", len(msg), msg)
	_, _ = io.ReadFull(c, make([]byte, 4))
	c.Close()
	<-ctx.Done()
}

// TestEmulatorAbsent: on a machine without the SDK's emulator (this one)
// detection says so, and no emulator host can be made.
func TestEmulatorAbsent(t *testing.T) {
	if _, err := exec.LookPath("emulator"); err == nil || os.Getenv("ANDROID_HOME") != "" || os.Getenv("ANDROID_SDK_ROOT") != "" {
		t.Skip("this machine has an Android SDK")
	}
	_, err := hub.DetectEmulator(ctx(t), os.Getenv)
	if !errors.Is(err, hub.ErrNoEmulator) || !strings.Contains(err.Error(), "sdkmanager") {
		t.Errorf("DetectEmulator here = %v; want ErrNoEmulator saying what to install", err)
	}
	if _, err := hub.NewEmulatorHost("emulator", hub.Emulator{}, nil, hub.EmulatorOptions{}); !errors.Is(err, hub.ErrNoEmulator) {
		t.Errorf("an emulator host without an emulator = %v; want ErrNoEmulator", err)
	}
}

// TestEmulatorBoot tests the wiring of an emulator's boot, not an
// emulator: a fake SDK whose emulator script records its arguments and
// starts our simulated phone on the adb port they name, announced to a
// private adb server as an emulator. Boot builds the command line, waits
// with the real adb (wait-for-device, sys.boot_completed), and the phone
// opens and answers as emulator-PORT; Shutdown stops the process.
func TestEmulatorBoot(t *testing.T) {
	adbBin, err := exec.LookPath("adb")
	if err != nil {
		t.Skip("needs adb (make deps installs it)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serverPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	t.Setenv("ANDROID_ADB_SERVER_PORT", serverPort)
	if out, err := exec.Command(adbBin, "start-server").CombinedOutput(); err != nil {
		t.Fatalf("adb start-server: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(adbBin, "kill-server").Run() })

	sdk := t.TempDir()
	script := filepath.Join(sdk, "emulator", "emulator")
	argsFile := filepath.Join(sdk, "args")
	exe, _ := os.Executable()
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = -list-avds ]; then echo Test_AVD; exit 0; fi\necho \"$@\" > %q\nAPEX_HUB_CHILD=emulator APEX_HUB_EMU_ARGS=\"$*\" exec %q -test.run='^$'\n", argsFile, exe)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	e, err := hub.DetectEmulator(ctx(t), func(k string) string { return map[string]string{"ANDROID_HOME": sdk}[k] })
	if err != nil {
		t.Fatal(err)
	}
	c, err := adb.NewClient(nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hub.NewEmulatorHost("emulator", e, android.NewHost(c, nil), hub.EmulatorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Boot(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	port := strings.TrimPrefix(b.Target.Serial, "emulator-")
	args, _ := os.ReadFile(argsFile)
	if want := strings.Join(hub.EmulatorArgs("Test_AVD", mustAtoi(t, port)), " ") + "\n"; string(args) != want || !strings.Contains(want, "-avd Test_AVD -no-window") {
		t.Errorf("the emulator ran with %q; want %q", args, want)
	}
	if b.Target.ID != "emulator/"+b.Target.Serial || b.PID == 0 {
		t.Errorf("booted %+v", b)
	}
	ts, err := h.Targets(ctx(t))
	if err != nil || len(ts) != 1 || ts[0].ID != b.Target.ID || !ts[0].Ready() {
		t.Errorf("Targets = %+v, %v; want the booted emulator, ready", ts, err)
	}
	d, err := h.Open(ctx(t), b.Target.Serial)
	if err != nil {
		t.Fatal(err)
	}
	if app, err := d.ForegroundApp(ctx(t)); err != nil || app == "" {
		t.Errorf("the booted emulator's foreground app: %q, %v", app, err)
	}
	d.Close()
	if err := h.Shutdown(ctx(t), b.Target.Serial); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the emulator process to end", func() bool { return !running(b.PID) })
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
