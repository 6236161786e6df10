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
// lock is an flock, so it ends with the process however it ends.
func lockDevice(dir, id string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lease directory: %w", err)
	}
	name := filepath.Join(dir, lockName(id))
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
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}
