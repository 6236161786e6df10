// Package lease is the cross-process exclusive lease of a device: whichever
// face drives a phone (apex run, act, do, mcp, playground), one process at a
// time holds it, and the others learn which process does.
package lease

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DirEnv names the environment variable that moves the lease directory.
const DirEnv = "APEX_LEASE_DIR"

// DefaultDir is where leases live unless Options.Dir says otherwise:
// $APEX_LEASE_DIR, else the user's private runtime directory
// ($XDG_RUNTIME_DIR/apex/leases), else apex-leases-UID under the temp
// directory. Every process of the user sharing the directory sees the
// others' leases; Acquire refuses a directory another user owns or can
// write (see privateDir).
func DefaultDir() string {
	if d := os.Getenv(DirEnv); d != "" {
		return d
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "apex", "leases")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("apex-leases-%d", os.Getuid()))
}

// pollInterval is how often a waiting Acquire tries the lock again.
const pollInterval = 100 * time.Millisecond

// Options configure Acquire. A nil *Options means the defaults.
type Options struct {
	// Dir is the lease directory; "" means DefaultDir().
	Dir string
	// Wait is how long to wait for the holder to release: 0 fails at once
	// when the device is held.
	Wait time.Duration
	// Command is what the holder is doing, recorded for the errors of the
	// others, e.g. "apex run shop.yaml".
	Command string
	// Waiting, when set, is called once when Acquire finds the device held
	// and starts to wait, so a person learns why nothing happens yet.
	Waiting func(*InUseError)
}

// ErrInUse matches (with errors.Is) the *InUseError of a device another
// holder leases.
var ErrInUse = errors.New("device is in use")

// InUseError is a device another process (or another Lease in this one)
// holds. PID is 0 when the holder's record could not be read.
type InUseError struct {
	Device  string
	PID     int
	Command string
	// Waited is how long Acquire waited for the holder before giving up
	// (Options.Wait); 0 when it did not wait.
	Waited time.Duration
}

func (e *InUseError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "device %s is in use", e.Device)
	switch {
	case e.PID > 0:
		fmt.Fprintf(&b, " by PID %d", e.PID)
	default:
		b.WriteString(" by another process")
	}
	if e.Command != "" {
		fmt.Fprintf(&b, " (%s)", e.Command)
	}
	if e.Waited > 0 {
		fmt.Fprintf(&b, " after waiting %v", e.Waited.Round(time.Millisecond))
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInUse) hold.
func (e *InUseError) Is(target error) bool { return target == ErrInUse }

// owner is the record a holder leaves in its lock file.
type owner struct {
	PID     int       `json:"pid"`
	Command string    `json:"command,omitempty"`
	Since   time.Time `json:"since"`
}

// fileName turns a device ID into the name of its lock file: no path
// separators, so an ID never reaches outside the directory.
func fileName(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < ' ' {
			return '_'
		}
		return r
	}, id) + ".lock"
}

// Acquire takes the lease of the device deviceID names (its host-qualified
// ID, e.g. "adb/emulator-5554"). When another holder has it, Acquire fails
// at once with an *InUseError, or with opts.Wait waits up to that long for
// the holder to release, trying again every 100ms. Cancelling ctx stops a
// wait with ctx's error. The lease lasts until Release or until the process
// ends, however it ends.
func Acquire(ctx context.Context, deviceID string, opts *Options) (*Lease, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Dir == "" {
		o.Dir = DefaultDir()
	}
	if err := privateDir(o.Dir); err != nil {
		return nil, fmt.Errorf("lease directory: %w: set %s to a directory only you can write", err, DirEnv)
	}
	return acquire(ctx, deviceID, &o)
}

// Lease is a device held by this process. Release it when done; a process
// that ends without releasing loses the lease with it.
type Lease struct {
	release func()
	once    sync.Once
}

// Release ends the lease; later calls do nothing. A nil Lease is released.
func (l *Lease) Release() {
	if l == nil || l.release == nil {
		return
	}
	l.once.Do(l.release)
}
