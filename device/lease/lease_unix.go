//go:build unix

package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// acquire takes the lease as an flock on the device's file in o.Dir: the
// lock ends with the process however it ends, and a clean release also
// removes the file, so they do not pile up.
func acquire(ctx context.Context, id string, o *Options) (*Lease, error) {
	name := filepath.Join(o.Dir, fileName(id))
	var tick <-chan time.Time
	var deadline <-chan time.Time
	last := o.Wait <= 0
	for {
		f, held, err := lock(name)
		if err != nil {
			return nil, fmt.Errorf("lease of device %s: %w", id, err)
		}
		if f != nil {
			record(f, o.Command)
			return &Lease{release: func() {
				// Removed while still locked: a process that opened the
				// file before the removal locks a file no name refers to,
				// which lock rejects.
				os.Remove(name)
				f.Close()
			}}, nil
		}
		inUse := &InUseError{Device: id, PID: held.PID, Command: held.Command}
		if last {
			inUse.Waited = max(o.Wait, 0) // the whole wait: the deadline passed
			return nil, inUse
		}
		if tick == nil {
			if o.Waiting != nil {
				o.Waiting(inUse)
			}
			t := time.NewTicker(pollInterval)
			defer t.Stop()
			d := time.NewTimer(o.Wait)
			defer d.Stop()
			tick, deadline = t.C, d.C
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the lease (%w): %w", inUse, context.Cause(ctx))
		case <-tick:
		case <-deadline:
			last = true // one more try, then give up
		}
	}
}

// lock opens the file name names and takes its flock without blocking. It
// returns the locked file, or the holder's record when another holds it.
func lock(name string) (*os.File, owner, error) {
	for {
		// O_NOFOLLOW: a symlink planted under a lock file's name must not
		// make this process write (or lock) the file it points to.
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			if errors.Is(err, syscall.ELOOP) {
				return nil, owner{}, fmt.Errorf("%s is a symbolic link, not a lock file: remove it", name)
			}
			return nil, owner{}, err
		}
		if err := ownFile(f); err != nil {
			f.Close()
			return nil, owner{}, fmt.Errorf("%s: %w: remove it", name, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			defer f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, readOwner(f), nil
			}
			return nil, owner{}, fmt.Errorf("lock %s: %w", name, err)
		}
		// The last holder removes the file while it holds the lock: a lock
		// taken on the file it removed is on no file at all. Only a lock on
		// the file the name still names counts.
		if !sameFile(f, name) {
			f.Close()
			continue
		}
		return f, owner{}, nil
	}
}

// record writes this process as the holder. The record is written before
// the old contents are cut, so a reader never finds the file empty after a
// crashed holder; it reads the first JSON value and ignores any tail.
func record(f *os.File, command string) {
	data, _ := json.Marshal(owner{PID: os.Getpid(), Command: command, Since: time.Now().UTC()})
	data = append(data, '\n')
	if _, err := f.WriteAt(data, 0); err == nil {
		f.Truncate(int64(len(data)))
	}
}

// readOwner reads the holder's record from its lock file; a record being
// written, or none, reads as the zero owner.
func readOwner(f *os.File) owner {
	var o owner
	_ = json.NewDecoder(f).Decode(&o)
	return o
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

// ownFile refuses what is not a regular file of this user's: another
// user's lock file could hold the lease, or be read as its holder.
func ownFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	case ok && int(st.Uid) != os.Getuid():
		return fmt.Errorf("owned by user %d, not by you (%d)", st.Uid, os.Getuid())
	}
	return nil
}

// privateDir makes dir (and missing parents) with mode 0700 and checks it
// is this user's own: a real directory (not a symlink), owned by the user,
// that nobody else can write (one made here is 0700; an existing one may
// be readable by others, as t.TempDir's are, since a lock file holds no
// secret). A shared temporary directory would let
// another local user plant links or hold the locks.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory (%v)", dir, fi.Mode().Type())
	case ok && int(st.Uid) != os.Getuid():
		return fmt.Errorf("%s belongs to user %d, not to you (%d)", dir, st.Uid, os.Getuid())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s is writable by others (mode %v): chmod 700 it", dir, fi.Mode().Perm())
	}
	return nil
}
