// Package adbdtest runs Google's adb against simulated devices in tests,
// always through a private adb server on a free port (never the shared
// default 5037), killed when the test ends.
package adbdtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ADB is a private adb server for one test.
type ADB struct {
	t    testing.TB
	Bin  string
	Port int
}

// Start finds adb (skipping the test when it is absent), picks a free port
// and starts a server there; Cleanup kills it.
func Start(t testing.TB) *ADB {
	t.Helper()
	bin, err := exec.LookPath("adb")
	if err != nil {
		t.Skip("adb not installed (Debian package adb; `make deps-apt` installs it): skipping the real-adb test")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	a := &ADB{t: t, Bin: bin, Port: port}
	if _, stderr, err := a.Run("start-server"); err != nil {
		t.Fatalf("adb start-server on port %d: %v\n%s", port, err, stderr)
	}
	t.Cleanup(func() { a.Run("kill-server") })
	return a
}

// Env returns the environment variable that points adb clients (and tools
// that run adb) at this server.
func (a *ADB) Env() string { return "ANDROID_ADB_SERVER_PORT=" + strconv.Itoa(a.Port) }

// Run runs adb with args against this server, with a 60 s limit.
func (a *ADB) Run(args ...string) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.Bin, append([]string{"-P", strconv.Itoa(a.Port)}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.Bytes(), errb.Bytes(), err
}

// Must runs adb and fails the test on error, returning stdout.
func (a *ADB) Must(args ...string) []byte {
	a.t.Helper()
	out, stderr, err := a.Run(args...)
	if err != nil {
		a.t.Fatalf("adb %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, stderr)
	}
	return out
}

// Connect runs `adb connect addr` and waits until the device is listed
// as "device"; it returns the serial (addr).
func (a *ADB) Connect(addr string) string {
	a.t.Helper()
	out := a.Must("connect", addr)
	if !strings.Contains(string(out), "connected to") {
		a.t.Fatalf("adb connect %s: %s", addr, out)
	}
	if err := a.WaitState(addr, "device", 15*time.Second); err != nil {
		a.t.Fatal(err)
	}
	return addr
}

// State returns the device's state in `adb devices` ("device",
// "unauthorized", "offline"), or "" when it is not listed.
func (a *ADB) State(serial string) string {
	out, _, _ := a.Run("devices")
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == serial {
			return f[1]
		}
	}
	return ""
}

// WaitState polls `adb devices` until serial is in state.
func (a *ADB) WaitState(serial, state string, within time.Duration) error {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		got := a.State(serial)
		if got == state {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("device %s is %q in adb after %v; want %q", serial, got, within, state)
		}
		<-tick.C
	}
}
