package adb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"
)

func dialFake(t *testing.T, maxData int) (*fakeADBD, *Direct) {
	t.Helper()
	f := startFakeADBD(t, maxData)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := Dial(ctx, f.addr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return f, d
}

// TestDirectTranscript pins the messages of a fixed session (CNXN, shell
// v2, a failing shell, exec, sync stat and pull) byte for byte.
func TestDirectTranscript(t *testing.T) {
	f, d := dialFake(t, 4096)
	ctx := context.Background()
	var out strings.Builder
	b, _ := d.Banner(ctx)
	fmt.Fprintf(&out, "banner model=%s features=%v\n", b.Props["ro.product.model"], b.Features)
	got, err := Shell(ctx, d, "echo hi")
	fmt.Fprintf(&out, "shell echo: %q %v\n", got, err)
	got, err = Shell(ctx, d, "fail")
	fmt.Fprintf(&out, "shell fail: %q %v\n", got, err)
	got, err = Exec(ctx, d, "blob 10")
	fmt.Fprintf(&out, "exec blob: %x %v\n", got, err)
	fi, err := Stat(ctx, d, "/sdcard/hello.txt")
	fmt.Fprintf(&out, "stat: %s %v %d %v\n", fi.Name, fi.Mode, fi.Size, err)
	var pulled bytes.Buffer
	err = Pull(ctx, d, "/sdcard/hello.txt", &pulled)
	fmt.Fprintf(&out, "pull: %q %v\n", pulled.String(), err)
	golden(t, "direct.golden", out.String()+"--- wire (> host to device, < device to host)\n"+f.transcript())
}

func TestDirectServices(t *testing.T) {
	f, d := dialFake(t, 4096)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	t.Run("shell stdin and stderr apart", func(t *testing.T) {
		var out, errOut bytes.Buffer
		in := strings.Repeat("0123456789", 2000) // crosses several 4 KiB WRTEs
		code, err := RunShell(ctx, d, "cat", ShellOptions{Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errOut})
		if err != nil || code != 0 || out.String() != in {
			t.Fatalf("cat = %d, %v, %d bytes; want the %d bytes back", code, err, out.Len(), len(in))
		}
		code, err = RunShell(ctx, d, "fail", ShellOptions{Stdout: &out, Stderr: &errOut})
		if err != nil || code != 3 || !strings.Contains(errOut.String(), "it broke") {
			t.Fatalf("fail = %d, %v, stderr %q; want 3 and the stderr", code, err, errOut.String())
		}
	})
	t.Run("exec with no output", func(t *testing.T) {
		// The device's OKAY and CLSE come one right after the other: the
		// stream opened, and ended.
		for range 200 {
			if out, err := Exec(ctx, d, "true"); err != nil || len(out) != 0 {
				t.Fatalf("Exec(true) = %q, %v; want no output and no error", out, err)
			}
		}
	})
	t.Run("unknown command", func(t *testing.T) {
		_, err := Shell(ctx, d, "frobnicate")
		var se *ShellError
		if !errors.As(err, &se) || se.Exit != 127 || !strings.Contains(se.Error(), "not found") {
			t.Fatalf("Shell(frobnicate) = %v; want a ShellError with 127", err)
		}
	})
	t.Run("v1 shell", func(t *testing.T) {
		var out bytes.Buffer
		code, err := RunShell(ctx, d, "echo v1", ShellOptions{Stdout: &out, V1: true})
		if err != nil || code != -1 || out.String() != "v1\n" {
			t.Fatalf("v1 shell = %d, %v, %q", code, err, out.String())
		}
	})
	t.Run("exec large", func(t *testing.T) {
		const n = 3000000
		got, err := Exec(ctx, d, fmt.Sprintf("blob %d", n))
		if err != nil || len(got) != n || got[n-1] != byte((n-1)*7%256) {
			t.Fatalf("exec = %d bytes, %v", len(got), err)
		}
	})
	t.Run("sync", func(t *testing.T) {
		data := bytes.Repeat([]byte("push me "), 30000) // 240 KB: several DATA chunks
		if err := Push(ctx, d, bytes.NewReader(data), "/sdcard/p.bin", 0o600, time.Unix(1700000000, 0)); err != nil {
			t.Fatal(err)
		}
		if got := f.files["/sdcard/p.bin"]; !bytes.Equal(got, data) {
			t.Fatalf("device got %d bytes; want %d", len(got), len(data))
		}
		var back bytes.Buffer
		if err := Pull(ctx, d, "/sdcard/p.bin", &back); err != nil || !bytes.Equal(back.Bytes(), data) {
			t.Fatalf("pull = %d bytes, %v", back.Len(), err)
		}
		if err := Pull(ctx, d, "/nope", io.Discard); err == nil || !strings.Contains(err.Error(), "No such file") {
			t.Fatalf("pull missing = %v", err)
		}
		if _, err := Stat(ctx, d, "/nope"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("stat missing = %v; want fs.ErrNotExist", err)
		}
		ls, err := List(ctx, d, "/sdcard")
		if err != nil || len(ls) != 1 || ls[0].Name != "hello.txt" || ls[0].Size != 22 {
			t.Fatalf("list = %+v, %v", ls, err)
		}
	})
	t.Run("refused service", func(t *testing.T) {
		_, err := d.Open(ctx, "refuse:")
		if err == nil || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("open refused = %v", err)
		}
	})
	t.Run("concurrent streams", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 32)
		for i := range 32 {
			wg.Go(func() {
				want := fmt.Sprintf("n%d", i)
				got, err := Shell(ctx, d, "echo "+want)
				if err != nil || string(got) != want+"\n" {
					errs <- fmt.Errorf("stream %d: %q, %v", i, got, err)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

func TestDirectLosesDevice(t *testing.T) {
	f, d := dialFake(t, 4096)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := Shell(ctx, d, "echo up"); err != nil {
		t.Fatal(err)
	}
	f.stop()
	_, err := Shell(ctx, d, "echo down")
	if !errors.Is(err, ErrGone) {
		t.Fatalf("shell after the device stopped = %v; want ErrGone", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the failure took the whole deadline")
	}
}

func TestDirectCancel(t *testing.T) {
	_, d := dialFake(t, 4096)
	// cat with no stdin keeps the stream open: Close must unblock a Read.
	s, err := d.Open(context.Background(), "shell,v2,raw:cat")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(s)
		done <- err
	}()
	s.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock Read")
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { cancel() }()
	_, err = RunShell(ctx, d, "cat", ShellOptions{Stdin: blockingReader{}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled shell = %v; want context.Canceled", err)
	}
}

// blockingReader never returns data, like a terminal nobody types into.
type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

func TestDialRefused(t *testing.T) {
	f := startFakeADBD(t, 4096)
	addr := f.addr()
	f.stop()
	_, err := Dial(context.Background(), addr, nil)
	if !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("Dial closed port = %v; want ErrGone naming %s", err, addr)
	}
}
