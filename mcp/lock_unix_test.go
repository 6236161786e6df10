//go:build unix

package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestLockExclusiveWhileRemoved: holders that remove the lock file on
// release never let two lockers hold one device at once, however the
// opens, locks and removals interleave.
func TestLockExclusiveWhileRemoved(t *testing.T) {
	dir := t.TempDir()
	var holders, taken atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				release, err := lockDevice(dir, "sim/127.0.0.1:1")
				if errors.Is(err, errInUse) {
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
				release()
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
	releaseA, err := lockDevice(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, lockName(id))
	late, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	releaseA()
	releaseC, err := lockDevice(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseC()
	if err := syscall.Flock(int(late.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("flock on the removed file: %v", err)
	}
	if sameFile(late, name) {
		t.Error("a lock on the removed file is taken for the device's lock")
	}
	if _, err := lockDevice(dir, id); !errors.Is(err, errInUse) {
		t.Errorf("a third locker while C holds the device: %v, want it in use", err)
	}
}
