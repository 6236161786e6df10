package hub

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/internal/lazy"
)

// ProcessHost boots simulated Android phones as processes of their own
// (`apex sim --android 1 --port-base 0` by default), so a phone outlives
// nothing it should not and a crash of one takes nothing else down. Each
// process prints its adbd address ("android-1\tadb\t127.0.0.1:PORT…"),
// which becomes the device's serial.
type ProcessHost struct {
	name string
	opts ProcessOptions

	mu    sync.Mutex
	procs map[string]*exec.Cmd // serial -> the process serving it
	addrs []string             // in boot order
}

// ProcessOptions configure a ProcessHost.
type ProcessOptions struct {
	// Command starts one phone and prints its address; Env is added to
	// the process's environment.
	Command []string
	Env     []string
	// Start bounds the wait for the address (default 30s).
	Start time.Duration
	// Driver configures the drivers Open returns.
	Driver *android.Options
}

var _ device.Booter = (*ProcessHost)(nil)

// NewProcessHost returns a host named name that boots phones with
// opts.Command.
func NewProcessHost(name string, opts ProcessOptions) (*ProcessHost, error) {
	if len(opts.Command) == 0 {
		return nil, errors.New("hub: a process host needs the command that starts a phone (e.g. apex sim --android 1 --port-base 0)")
	}
	if opts.Start <= 0 {
		opts.Start = 30 * time.Second
	}
	return &ProcessHost{name: name, opts: opts, procs: map[string]*exec.Cmd{}}, nil
}

// Name is the prefix of the host's device IDs.
func (h *ProcessHost) Name() string { return h.name }

func (h *ProcessHost) direct() *android.DirectHost {
	h.mu.Lock()
	defer h.mu.Unlock()
	return android.NewDirectHost(h.name, h.addrs, h.opts.Driver)
}

// Targets lists the phones this host booted and has not shut down.
func (h *ProcessHost) Targets(ctx context.Context) ([]device.Target, error) {
	return h.direct().Targets(ctx)
}

// Open opens a phone this host booted.
func (h *ProcessHost) Open(ctx context.Context, serial string) (device.Driver, error) {
	h.mu.Lock()
	_, ok := h.procs[serial]
	h.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("hub: host %s did not boot %s: %w", h.name, serial, device.ErrNotFound)
	}
	return h.direct().Open(ctx, serial)
}

// addrRe finds the adbd address in `apex sim`'s device line.
var addrRe = lazy.Regexp(`\badb\t(\S+)`)

// Boot starts one phone process and waits for its address.
func (h *ProcessHost) Boot(ctx context.Context) (device.Booted, error) {
	cmd := exec.Command(h.opts.Command[0], h.opts.Command[1:]...)
	cmd.Env = append(cmd.Environ(), h.opts.Env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return device.Booted{}, err
	}
	if err := cmd.Start(); err != nil {
		return device.Booted{}, fmt.Errorf("hub: boot a phone with %s: %w", strings.Join(h.opts.Command, " "), err)
	}
	exited := make(chan struct{})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := addrRe().FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	var serial string
	select {
	case serial = <-addr:
	case <-exited:
		return device.Booted{}, fmt.Errorf("hub: the phone process (%s) ended before printing its address: run the command by hand to see why", strings.Join(h.opts.Command, " "))
	case <-time.After(h.opts.Start):
		stop()
		return device.Booted{}, fmt.Errorf("hub: the phone process printed no address within %v", h.opts.Start)
	case <-ctx.Done():
		stop()
		return device.Booted{}, ctx.Err()
	}
	h.mu.Lock()
	h.procs[serial] = cmd
	h.addrs = append(h.addrs, serial)
	h.mu.Unlock()
	t := device.Target{ID: device.QualifiedID(h.name, serial), Host: h.name, Serial: serial, Platform: device.Android, State: "device"}
	return device.Booted{Target: t, PID: cmd.Process.Pid, Cmdline: cmdline(cmd.Process.Pid)}, nil
}

// Shutdown stops a phone process this host booted.
func (h *ProcessHost) Shutdown(ctx context.Context, serial string) error {
	h.mu.Lock()
	cmd, ok := h.procs[serial]
	delete(h.procs, serial)
	h.addrs = slices.DeleteFunc(h.addrs, func(a string) bool { return a == serial })
	h.mu.Unlock()
	if !ok {
		return fmt.Errorf("hub: host %s did not boot %s: %w", h.name, serial, device.ErrNotFound)
	}
	return stopProcess(ctx, cmd.Process.Pid, cmdline(cmd.Process.Pid), 5*time.Second)
}
