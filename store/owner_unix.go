//go:build unix && !linux

package store

import (
	"errors"
	"syscall"
)

// processStart is unknown here: a run's owner is told apart by PID only.
func processStart(pid int) (int64, error) { return 0, errors.ErrUnsupported }

// processState asks the kernel whether pid exists (signal 0).
func processState(pid int) (alive bool, start int64, known bool) {
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM):
		return true, 0, true
	case errors.Is(err, syscall.ESRCH):
		return false, 0, true
	}
	return false, 0, false
}
