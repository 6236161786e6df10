package adb

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startADBServer starts Debian's adb server on a free private port (never
// 5037: other programs on this machine use the default server) and kills
// it when the test ends. It skips when adb is not installed.
func startADBServer(t testing.TB) *Client {
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
	c, err := NewClient(&Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))})
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

// waitState polls the server until serial shows in state (or the test fails).
func waitState(t testing.TB, c *Client, serial, state string) DeviceInfo {
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

func TestRealServer(t *testing.T) {
	c := startADBServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	v, err := c.Version(ctx)
	if err != nil || v < 39 {
		t.Fatalf("Version = %d, %v; want adb's protocol version (41 for 1.0.41)", v, err)
	}

	t.Run("connect to a closed port", func(t *testing.T) {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := ln.Addr().String()
		ln.Close()
		msg, err := c.Connect(ctx, addr)
		if !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), addr) {
			t.Fatalf("Connect(%s) = %q, %v; want an ErrGone error naming the address", addr, msg, err)
		}
	})

	f := startFakeADBD(t, 64<<10)
	if _, err := c.Connect(ctx, f.addr()); err != nil {
		t.Fatal(err)
	}
	info := waitState(t, c, f.addr(), "device")
	if info.Model != "Fake_Phone" || info.Product != "fake" {
		t.Errorf("devices -l entry = %+v; want model Fake_Phone product fake from the banner", info)
	}
	dev := c.Device(f.addr())

	t.Run("shell v2", func(t *testing.T) {
		if fs, err := dev.Features(ctx); err != nil || !strings.Contains(strings.Join(fs, ","), "shell_v2") {
			t.Fatalf("Features = %v, %v", fs, err)
		}
		out, err := Shell(ctx, dev, "echo through the server")
		if err != nil || string(out) != "through the server\n" {
			t.Fatalf("shell = %q, %v", out, err)
		}
		var se *ShellError
		if _, err := Shell(ctx, dev, "fail"); !errors.As(err, &se) || se.Exit != 3 || !strings.Contains(se.Stderr, "it broke") {
			t.Fatalf("shell fail = %v; want exit 3 with stderr apart", err)
		}
		var got bytes.Buffer
		in := strings.Repeat("stdin ", 50000)
		if code, err := RunShell(ctx, dev, "cat", ShellOptions{Stdin: strings.NewReader(in), Stdout: &got}); err != nil || code != 0 || got.String() != in {
			t.Fatalf("cat through the server = %d, %v, %d bytes", code, err, got.Len())
		}
	})
	t.Run("exec", func(t *testing.T) {
		out, err := Exec(ctx, dev, "blob 2000000")
		if err != nil || len(out) != 2000000 {
			t.Fatalf("exec = %d bytes, %v", len(out), err)
		}
	})
	t.Run("sync", func(t *testing.T) {
		data := bytes.Repeat([]byte("abc"), 100000)
		if err := Push(ctx, dev, bytes.NewReader(data), "/sdcard/s.bin", 0o644, time.Time{}); err != nil {
			t.Fatal(err)
		}
		var back bytes.Buffer
		if err := Pull(ctx, dev, "/sdcard/s.bin", &back); err != nil || !bytes.Equal(back.Bytes(), data) {
			t.Fatalf("pull = %d bytes, %v", back.Len(), err)
		}
		fi, err := Stat(ctx, dev, "/sdcard/hello.txt")
		if err != nil || fi.Size != 22 || !fi.Mode.IsRegular() {
			t.Fatalf("stat = %+v, %v", fi, err)
		}
		if ls, err := List(ctx, dev, "/sdcard"); err != nil || len(ls) != 1 {
			t.Fatalf("list = %+v, %v", ls, err)
		}
	})
	t.Run("track devices", func(t *testing.T) {
		tctx, tcancel := context.WithTimeout(ctx, 15*time.Second)
		defer tcancel()
		f2 := startFakeADBD(t, 64<<10)
		first := true
		for devs, err := range c.TrackDevices(tctx) {
			if err != nil {
				t.Fatal(err)
			}
			if first {
				first = false
				if _, err := c.Connect(ctx, f2.addr()); err != nil {
					t.Fatal(err)
				}
			}
			found := false
			for _, d := range devs {
				found = found || (d.Serial == f2.addr() && d.State == "device")
			}
			if found {
				return
			}
		}
		t.Fatal("track-devices never showed the second device")
	})
	t.Run("device vanishes", func(t *testing.T) {
		if err := c.Disconnect(ctx, f.addr()); err != nil {
			t.Fatal(err)
		}
		_, err := Shell(ctx, dev, "echo gone")
		if !errors.Is(err, ErrGone) {
			t.Fatalf("shell on a disconnected device = %v; want ErrGone", err)
		}
	})
}

func TestNoServer(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	c, err := NewClient(&Options{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Version(context.Background())
	if !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "start-server") {
		t.Fatalf("Version with no server = %v; want ErrNoServer saying how to start one", err)
	}
	_, err = c.Device("x").Open(context.Background(), "shell:true")
	if !errors.Is(err, ErrNoServer) {
		t.Fatalf("Open with no server = %v", err)
	}
}

func TestAddrFromEnv(t *testing.T) {
	tests := []struct {
		env     map[string]string
		want    string
		wantErr bool
	}{
		{env: nil, want: "127.0.0.1:5037"},
		{env: map[string]string{"ANDROID_ADB_SERVER_PORT": "6000"}, want: "127.0.0.1:6000"},
		{env: map[string]string{"ADB_SERVER_SOCKET": "tcp:7000", "ANDROID_ADB_SERVER_PORT": "6000"}, want: "127.0.0.1:7000"},
		{env: map[string]string{"ADB_SERVER_SOCKET": "tcp:10.0.0.2:7001"}, want: "10.0.0.2:7001"},
		{env: map[string]string{"ADB_SERVER_SOCKET": "tcp:localhost:7002"}, want: "127.0.0.1:7002"},
		{env: map[string]string{"ADB_SERVER_SOCKET": "localabstract:adb"}, wantErr: true},
		{env: map[string]string{"ANDROID_ADB_SERVER_PORT": "lots"}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := addrFromEnv(func(k string) string { return tt.env[k] })
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("addrFromEnv(%v) = %q, %v; want %q (error %v)", tt.env, got, err, tt.want, tt.wantErr)
		}
	}
}
