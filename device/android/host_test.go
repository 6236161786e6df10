package android_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/adb/adbtest"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/sim"
	"github.com/apexagent/apex/sim/adbd"
	"github.com/apexagent/apex/sim/lab"
)

// startAuthSim serves a simulated phone that challenges every host with
// AUTH and accepts no key, so an adb server lists it as unauthorized (a
// phone whose "Allow USB debugging?" prompt nobody accepted).
func startAuthSim(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	phone, err := sim.NewPhone(sim.Options{Serial: ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	srv := adbd.NewServer(phone, &adbd.Options{Auth: true})
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func targetBySerial(ts []device.Target, serial string) (device.Target, bool) {
	i := slices.IndexFunc(ts, func(t device.Target) bool { return t.Serial == serial })
	if i < 0 {
		return device.Target{}, false
	}
	return ts[i], true
}

// TestHostStates lists a ready, an unauthorized and an offline device
// through Debian's adb server, each with its state and what to do.
func TestHostStates(t *testing.T) {
	c := adbtest.StartServer(t)
	l, err := lab.Start(context.Background(), lab.Options{Android: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ready, gone := l.Devices()[0], l.Devices()[1]
	adbtest.Connect(t, c, ready.Serial)
	adbtest.Connect(t, c, gone.Serial)
	locked := startAuthSim(t)
	c.Connect(ctx(t), locked) // adb answers "failed to authenticate" but keeps the device
	adbtest.WaitState(t, c, locked, "unauthorized")
	gone.Stop()
	adbtest.WaitState(t, c, gone.Serial, "offline")

	h := android.NewHost(c, nil)
	ts, err := h.Targets(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		serial, state, hint string
		sized               bool
	}{
		{ready.Serial, "device", "", true},
		{locked, "unauthorized", `accept the "Allow USB debugging?" prompt`, false},
		{gone.Serial, "offline", "adb connect " + gone.Serial, false},
	}
	for _, tt := range tests {
		t.Run(tt.state, func(t *testing.T) {
			got, ok := targetBySerial(ts, tt.serial)
			if !ok {
				t.Fatalf("%s not listed: %+v", tt.serial, ts)
			}
			if got.State != tt.state || got.ID != "adb/"+tt.serial || got.Platform != device.Android {
				t.Errorf("target = %+v; want state %q", got, tt.state)
			}
			if tt.hint == "" && got.Hint != "" || !strings.Contains(got.Hint, tt.hint) {
				t.Errorf("hint = %q; want one containing %q", got.Hint, tt.hint)
			}
			if sized := got.Width == 1080 && got.Height == 2400; sized != tt.sized {
				t.Errorf("size %dx%d; want labelled %v", got.Width, got.Height, tt.sized)
			}
		})
	}

	// NoLabels lists the same devices without asking the ready one its size.
	bare, err := android.NewHost(c, &android.HostOptions{NoLabels: true}).Targets(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := targetBySerial(bare, ready.Serial); !ok || got.State != "device" || got.Width != 0 || got.Height != 0 || len(bare) != len(ts) {
		t.Errorf("NoLabels: %+v; want the %d devices, %s ready and not sized", bare, len(ts), ready.Serial)
	}

	// Opening a device that cannot be driven says why and what to do.
	_, _, err = device.NewRegistry(h).Open(ctx(t), locked)
	if !errors.Is(err, device.ErrOffline) || !strings.Contains(err.Error(), "unauthorized") || !strings.Contains(err.Error(), "Allow USB debugging") {
		t.Fatalf("Open(unauthorized) err = %v; want ErrOffline with the state and the hint", err)
	}
}

// snapshots runs h.Watch until ctx ends and sends every list it yields.
func snapshots(ctx context.Context, h *android.Host) (<-chan []device.Target, <-chan error, <-chan struct{}) {
	lists, errs, done := make(chan []device.Target, 64), make(chan error, 64), make(chan struct{})
	go func() {
		defer close(done)
		for ts, err := range h.Watch(ctx) {
			if err != nil {
				errs <- err
				continue
			}
			lists <- ts
		}
	}()
	return lists, errs, done
}

// waitList waits for a list that satisfies ok.
func waitList(t *testing.T, lists <-chan []device.Target, errs <-chan error, what string, ok func([]device.Target) bool) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ts := <-lists:
			if ok(ts) {
				return
			}
		case err := <-errs:
			t.Fatalf("waiting for %s: %v", what, err)
		case <-timeout:
			t.Fatalf("no device list with %s within 20 s", what)
		}
	}
}

// TestHostWatch connects, loses and disconnects simulated phones and sees
// each change as it happens, then sees the server go away.
func TestHostWatch(t *testing.T) {
	c := adbtest.StartServer(t)
	// Watch starts the server when asked, as Targets does.
	if err := c.KillServer(ctx(t)); err != nil {
		t.Fatal(err)
	}
	l, err := lab.Start(context.Background(), lab.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	dev := l.Devices()[0]

	h := android.NewHost(c, &android.HostOptions{StartServer: true, WatchPoll: 200 * time.Millisecond})
	wctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	lists, errs, done := snapshots(wctx, h)
	waitList(t, lists, errs, "no devices", func(ts []device.Target) bool { return len(ts) == 0 })

	if _, err := c.Connect(ctx(t), dev.Serial); err != nil {
		t.Fatal(err)
	}
	waitList(t, lists, errs, dev.Serial+" ready", func(ts []device.Target) bool {
		got, ok := targetBySerial(ts, dev.Serial)
		return ok && got.State == "device" && got.ID == "adb/"+dev.Serial && got.Hint == "" && got.Model == "Apex_Sim"
	})
	// adb does not report these two on track-devices: Watch polls for them.
	locked := startAuthSim(t)
	c.Connect(ctx(t), locked)
	waitList(t, lists, errs, locked+" unauthorized", func(ts []device.Target) bool {
		got, ok := targetBySerial(ts, locked)
		return ok && got.State == "unauthorized" && strings.Contains(got.Hint, "Allow USB debugging")
	})
	dev.Stop()
	waitList(t, lists, errs, dev.Serial+" offline", func(ts []device.Target) bool {
		got, ok := targetBySerial(ts, dev.Serial)
		return ok && got.State == "offline" && strings.Contains(got.Hint, "adb connect "+dev.Serial)
	})
	if err := c.Disconnect(ctx(t), dev.Serial); err != nil {
		t.Fatal(err)
	}
	waitList(t, lists, errs, dev.Serial+" gone", func(ts []device.Target) bool {
		_, ok := targetBySerial(ts, dev.Serial)
		return !ok
	})

	// A server that goes away ends the sequence with its error.
	if err := c.KillServer(ctx(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !strings.Contains(err.Error(), "watching adb devices") {
			t.Errorf("err = %v; want one saying what failed", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no error after the server was killed")
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Watch did not end after the server went away")
	}
}

// TestHostWatchStops ends the sequence when the caller stops or ctx ends.
func TestHostWatchStops(t *testing.T) {
	c := adbtest.StartServer(t)
	h := android.NewHost(c, nil)
	for ts, err := range h.Watch(ctx(t)) {
		if err != nil || len(ts) != 0 {
			t.Fatalf("first list = %v, %v; want an empty one", ts, err)
		}
		break
	}
	wctx, cancel := context.WithCancel(ctx(t))
	_, errs, done := snapshots(wctx, h)
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not end when its context was cancelled")
	}
	if len(errs) != 0 {
		t.Errorf("cancelling yielded an error: %v", <-errs)
	}
}

// TestHostNoADB: with no server and no adb binary to start one, both
// Targets and Watch say to install adb.
func TestHostNoADB(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c, err := adb.NewClient(&adb.Options{Addr: addr, ADBPath: filepath.Join(t.TempDir(), "adb")})
	if err != nil {
		t.Fatal(err)
	}
	h := android.NewHost(c, &android.HostOptions{StartServer: true})
	want := "adb is not installed to start one: install it (Debian, Ubuntu: apt install adb)"
	if _, err := h.Targets(ctx(t)); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), addr) {
		t.Errorf("Targets err = %v; want one saying %q", err, want)
	}
	n := 0
	for ts, err := range h.Watch(ctx(t)) {
		if n++; err == nil || ts != nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Watch yielded %v, %v; want one error saying %q", ts, err, want)
		}
	}
	if n != 1 {
		t.Errorf("Watch yielded %d times; want once", n)
	}
}
