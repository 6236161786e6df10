//go:build unix

package mcp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockDevice takes the cross-process lock of device id in dir, so two
// `apex mcp` processes (say, one per MCP host) never drive one phone. The
// lock is an flock, so it ends with the process however it ends; a clean
// release also removes the file.
func lockDevice(dir, id string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lease directory: %w", err)
	}
	name := filepath.Join(dir, lockName(id))
	for {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("lease file: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			owner, _ := os.ReadFile(name)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("device %s %w (apex mcp process %s)", id, errInUse, strings.TrimSpace(string(owner)))
			}
			return nil, fmt.Errorf("lease file %s: %w", name, err)
		}
		// The last holder removes the file while it holds the lock: a lock
		// taken on the file it removed is on no file at all. Only a lock on
		// the file the name still names counts.
		if !sameFile(f, name) {
			f.Close()
			continue
		}
		f.Truncate(0)
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		return func() {
			os.Remove(name)
			f.Close()
		}, nil
	}
}

// sameFile reports whether the open file f is the file name names now.
func sameFile(f *os.File, name string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(name)
	return err == nil && os.SameFile(held, now)
}
