package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/apexagent/apex/device"
)

// cmdline is a process's command line as /proc shows it, arguments joined
// by spaces; "" when it cannot be read (the process is gone, or this is
// not Linux).
func cmdline(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

// alive reports whether pid runs (a zombie, dead and not yet reaped, does
// not).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil && !errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) S …: the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || (b[i+2] != 'Z' && b[i+2] != 'X')
}

// stopProcess stops pid when it is still the process with the given
// command line: SIGTERM, then SIGKILL if it has not ended by grace. A
// process whose command line differs (the PID was reused) is left alone.
func stopProcess(ctx context.Context, pid int, want string, grace time.Duration) error {
	if !alive(pid) || want == "" || cmdline(pid) != want {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return err
	}
	if waitGone(ctx, pid, grace) {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	waitGone(ctx, pid, grace)
	return nil
}

// waitGone polls until pid has ended or d passes.
func waitGone(ctx context.Context, pid int, d time.Duration) bool {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	end := time.After(d)
	for alive(pid) {
		select {
		case <-t.C:
		case <-end:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// procTable is the processes a host booted, by the serial of the device
// each serves. Safe for concurrent use.
type procTable struct {
	host string
	mu   sync.Mutex
	m    map[string]*exec.Cmd
}

func newProcTable(host string) *procTable {
	return &procTable{host: host, m: map[string]*exec.Cmd{}}
}

func (p *procTable) add(serial string, cmd *exec.Cmd) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m[serial] = cmd
}

func (p *procTable) has(serial string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.m[serial]
	return ok
}

// check is nil for a device the host booted.
func (p *procTable) check(serial string) error {
	if !p.has(serial) {
		return fmt.Errorf("hub: host %s did not boot %s: %w", p.host, serial, device.ErrNotFound)
	}
	return nil
}

// stop forgets the device and stops its process, waiting grace for it to
// end of its own before it is killed.
func (p *procTable) stop(ctx context.Context, serial string, grace time.Duration) error {
	p.mu.Lock()
	cmd, ok := p.m[serial]
	delete(p.m, serial)
	p.mu.Unlock()
	if !ok {
		return fmt.Errorf("hub: host %s did not boot %s: %w", p.host, serial, device.ErrNotFound)
	}
	return stopProcess(ctx, cmd.Process.Pid, cmdline(cmd.Process.Pid), grace)
}
