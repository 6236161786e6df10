// Package adbtest starts Debian's real adb server for tests, on a private
// port so tests never touch (or kill) the default server on 5037.
package adbtest

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/apexagent/apex/adb"
)

// StartServer starts `adb -P PORT start-server` on a free port and kills
// that server when the test ends. It skips the test when adb is missing.
func StartServer(t testing.TB) *adb.Client {
	t.Helper()
	if _, err := exec.LookPath("adb"); err != nil {
		t.Skip("adb is not installed: run `make deps-apt` (Debian package adb)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	c, err := adb.NewClient(&adb.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c.KillServer(ctx)
	})
	return c
}

// Connect has the server connect to an adbd at addr and waits until the
// device is listed as "device".
func Connect(t testing.TB, c *adb.Client, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := c.Connect(ctx, addr); err != nil {
		t.Fatal(err)
	}
	WaitState(t, c, addr, "device")
}

// WaitState polls the server until serial shows in state.
func WaitState(t testing.TB, c *adb.Client, serial, state string) adb.DeviceInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		devs, err := c.Devices(ctx)
		for _, d := range devs {
			if d.Serial == serial && d.State == state {
				return d
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never reached state %q: last list %+v, %v", serial, state, devs, err)
		case <-tick.C:
		}
	}
}
