//go:build unix

package lease

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// holdEnv makes the test binary a holder process: it takes the lease of
// the device the variable names (dir|id), says "held" and keeps it until
// killed.
const holdEnv = "APEX_LEASE_TEST_HOLD"

func TestMain(m *testing.M) {
	if v := os.Getenv(holdEnv); v != "" {
		dir, id, _ := strings.Cut(v, "|")
		if _, err := Acquire(context.Background(), id, &Options{Dir: dir, Command: "holder " + id}); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("held")
		select {}
	}
	os.Exit(m.Run())
}

// TestInUseInProcess: flock is per open file, so two leases in one process
// conflict as two processes would; the error names the holder, and the
// device is free again once released.
func TestInUseInProcess(t *testing.T) {
	dir, id := t.TempDir(), "adb/emulator-5554"
	a, err := Acquire(context.Background(), id, &Options{Dir: dir, Command: "apex act tap"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(context.Background(), id, &Options{Dir: dir, Command: "second"})
	var inUse *InUseError
	if !errors.As(err, &inUse) || !errors.Is(err, ErrInUse) {
		t.Fatalf("second lease: %v, want an *InUseError", err)
	}
	want := &InUseError{Device: id, PID: os.Getpid(), Command: "apex act tap"}
	if diff := cmp.Diff(want, inUse); diff != "" {
		t.Errorf("in use (-want +got):\n%s", diff)
	}
	if msg, want := err.Error(), fmt.Sprintf("device %s is in use by PID %d (apex act tap)", id, os.Getpid()); msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
	other, err := Acquire(context.Background(), "adb/emulator-5556", &Options{Dir: dir})
	if err != nil {
		t.Fatalf("another device: %v", err)
	}
	other.Release()
	a.Release()
	a.Release() // twice is fine
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("lock files left after release: %v", files)
	}
	b, err := Acquire(context.Background(), id, &Options{Dir: dir})
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	b.Release()
}

func TestDefaultDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "leases")
	t.Setenv(DirEnv, dir)
	if got := DefaultDir(); got != dir {
		t.Errorf("DefaultDir() = %q with $%s set, want it", got, DirEnv)
	}
	l, err := Acquire(context.Background(), "sim/127.0.0.1:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if files, _ := os.ReadDir(dir); len(files) != 1 {
		t.Errorf("%d files in $%s while leased, want 1", len(files), DirEnv)
	}
	t.Setenv(DirEnv, "")
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/7")
	if got, want := DefaultDir(), "/run/user/7/apex/leases"; got != want {
		t.Errorf("DefaultDir() = %q with $XDG_RUNTIME_DIR, want %q", got, want)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	if got, want := DefaultDir(), filepath.Join(os.TempDir(), fmt.Sprintf("apex-leases-%d", os.Getuid())); got != want {
		t.Errorf("DefaultDir() = %q, want %q", got, want)
	}
}

// TestLeaseDirRefusesOthers: a lock file name another local user planted
// as a symlink is never followed (the file it points to stays as it was),
// and a lease directory others can enter is refused.
func TestLeaseDirRefusesOthers(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, fileName("adb/x"))); err != nil {
		t.Fatal(err)
	}
	_, err := Acquire(context.Background(), "adb/x", &Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Acquire over a planted symlink: %v, want a refusal naming it", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("the symlink's target now holds %q", b)
	}

	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(context.Background(), "adb/x", &Options{Dir: open}); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Errorf("Acquire in a world-writable directory: %v, want a refusal", err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(context.Background(), "adb/y", &Options{Dir: link}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Acquire in a symlinked directory: %v, want a refusal", err)
	}
}

// TestWait runs a waiting Acquire against a holder: it gets the device when
// the holder releases, gives up after Wait saying how long it waited, and
// stops when its context ends.
func TestWait(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(holder *Lease, cancel context.CancelFunc) // ends the wait, or nil to let it time out
		want func(t *testing.T, l *Lease, err error)
	}{
		{"released", func(h *Lease, _ context.CancelFunc) { h.Release() }, func(t *testing.T, l *Lease, err error) {
			if err != nil {
				t.Fatalf("waiting for a released device: %v", err)
			}
			l.Release()
		}},
		{"timeout", nil, func(t *testing.T, l *Lease, err error) {
			var inUse *InUseError
			if !errors.As(err, &inUse) || inUse.Waited != 10*time.Second || inUse.PID != os.Getpid() {
				t.Fatalf("waiting past the deadline: %#v, want in use after waiting 10s", err)
			}
			if !strings.HasSuffix(err.Error(), "(holder) after waiting 10s") {
				t.Errorf("message %q does not say how long it waited", err)
			}
		}},
		{"canceled", func(_ *Lease, cancel context.CancelFunc) { cancel() }, func(t *testing.T, l *Lease, err error) {
			if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrInUse) {
				t.Fatalf("cancelled wait: %v, want context.Canceled and ErrInUse", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				holder, err := Acquire(ctx, "adb/x", &Options{Dir: dir, Command: "holder"})
				if err != nil {
					t.Fatal(err)
				}
				defer holder.Release()
				type result struct {
					l   *Lease
					err error
				}
				done := make(chan result, 1)
				var told []string
				go func() {
					l, err := Acquire(ctx, "adb/x", &Options{Dir: dir, Wait: 10 * time.Second,
						Waiting: func(e *InUseError) { told = append(told, e.Error()) }})
					done <- result{l, err}
				}()
				if tc.end != nil {
					synctest.Wait() // the waiter is between tries
					select {
					case r := <-done:
						t.Fatalf("Acquire returned while the device was held: %v", r.err)
					default:
					}
					tc.end(holder, cancel)
				}
				r := <-done
				tc.want(t, r.l, r.err)
				want := []string{fmt.Sprintf("device adb/x is in use by PID %d (holder)", os.Getpid())}
				if diff := cmp.Diff(want, told); diff != "" {
					t.Errorf("Waiting was told (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestLeaseEndsWithProcess: a holder in another process is named in the
// error, and its lease ends when it is killed, with no release.
func TestLeaseEndsWithProcess(t *testing.T) {
	dir, id := t.TempDir(), "adb/127.0.0.1:6520"
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+dir+"|"+id)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "held\n" {
		t.Fatalf("holder process: %q", line)
	}
	_, err = Acquire(context.Background(), id, &Options{Dir: dir})
	want := &InUseError{Device: id, PID: cmd.Process.Pid, Command: "holder " + id}
	var inUse *InUseError
	if !errors.As(err, &inUse) {
		t.Fatalf("while another process holds it: %v", err)
	}
	if diff := cmp.Diff(want, inUse); diff != "" {
		t.Errorf("in use (-want +got):\n%s", diff)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := Acquire(context.Background(), id, &Options{Dir: dir})
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	l.Release()
}

// TestExclusiveWhileRemoved: holders that remove the lock file on release
// never let two lockers hold one device at once, however the opens, locks
// and removals interleave.
func TestExclusiveWhileRemoved(t *testing.T) {
	dir := t.TempDir()
	var holders, taken atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				l, err := Acquire(context.Background(), "sim/127.0.0.1:1", &Options{Dir: dir})
				if errors.Is(err, ErrInUse) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				if n := holders.Add(1); n != 1 {
					t.Errorf("%d holders of one device at once", n)
				}
				taken.Add(1)
				holders.Add(-1)
				l.Release()
			}
		})
	}
	wg.Wait()
	if taken.Load() == 0 {
		t.Error("no locker ever took the device")
	}
}

// TestLockOnRemovedFileDoesNotCount walks the interleaving the stress test
// can only hope to hit: a locker that opened the file before the holder
// removed it gets its flock on a file no name refers to, which must not
// count as holding the device.
func TestLockOnRemovedFileDoesNotCount(t *testing.T) {
	dir, id := t.TempDir(), "sim/127.0.0.1:2"
	a, err := Acquire(context.Background(), id, &Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, fileName(id))
	late, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	a.Release()
	c, err := Acquire(context.Background(), id, &Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if err := syscall.Flock(int(late.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("flock on the removed file: %v", err)
	}
	if sameFile(late, name) {
		t.Error("a lock on the removed file is taken for the device's lock")
	}
	if _, err := Acquire(context.Background(), id, &Options{Dir: dir}); !errors.Is(err, ErrInUse) {
		t.Errorf("a third locker while C holds the device: %v, want it in use", err)
	}
}

// TestStaleRecordIsOverwritten: a crashed holder's longer record left in
// the file is replaced whole by the next holder's.
func TestStaleRecordIsOverwritten(t *testing.T) {
	dir, id := t.TempDir(), "wda/127.0.0.1:8100"
	stale := `{"pid":999999,"command":"` + strings.Repeat("x", 200) + `"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, fileName(id)), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(context.Background(), id, &Options{Dir: dir, Command: "short"})
	if err != nil {
		t.Fatalf("over a stale record with no lock: %v", err)
	}
	defer l.Release()
	_, err = Acquire(context.Background(), id, &Options{Dir: dir})
	if want := fmt.Sprintf("device %s is in use by PID %d (short)", id, os.Getpid()); err == nil || err.Error() != want {
		t.Errorf("in use: %v, want %q", err, want)
	}
	data, _ := os.ReadFile(filepath.Join(dir, fileName(id)))
	if strings.Contains(string(data), "xxx") {
		t.Errorf("stale record left behind: %s", data)
	}
}

func FuzzFileName(f *testing.F) {
	for _, s := range []string{"sim/127.0.0.1:6520", "adb/emulator-5554", "..", "a/../../etc/passwd", `wda\x`, "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		n := fileName(id)
		if strings.ContainsAny(n, `/\`) || strings.ContainsRune(n, 0) || !strings.HasSuffix(n, ".lock") {
			t.Fatalf("fileName(%q) = %q", id, n)
		}
	})
}
