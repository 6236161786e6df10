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
	"github.com/apexagent/apex/device/ios"
	"github.com/apexagent/apex/internal/lazy"
)

// ProcessHost boots simulated phones as processes of their own (`apex sim
// --android 1 --port-base 0`, or `--ios 1`), so a phone outlives nothing
// it should not and a crash of one takes nothing else down. Each process
// prints its address — an Android phone its adbd
// ("android-1\tadb\t127.0.0.1:PORT…"), an iPhone its WebDriverAgent
// ("ios-1\twda\thttp://127.0.0.1:PORT…") — which becomes the device's
// serial.
type ProcessHost struct {
	name string
	opts ProcessOptions

	procs *procTable
	mu    sync.Mutex
	addrs []string // in boot order, as printed
}

// ProcessOptions configure a ProcessHost.
type ProcessOptions struct {
	// Command starts one phone and prints its address; Env is added to
	// the process's environment.
	Command []string
	Env     []string
	// Platform is what Command starts (default Android): an Android
	// phone, reached at the adbd address it prints, or an iPhone, at its
	// WebDriverAgent URL.
	Platform device.Platform
	// Start bounds the wait for the address (default 30s).
	Start time.Duration
	// Driver and IOSDriver configure the drivers Open returns.
	Driver    *android.Options
	IOSDriver *ios.Options
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
	switch opts.Platform {
	case "":
		opts.Platform = device.Android
	case device.Android, device.IOS:
	default:
		return nil, fmt.Errorf("hub: a process host boots android or ios phones, not %q", opts.Platform)
	}
	return &ProcessHost{name: name, opts: opts, procs: newProcTable(name)}, nil
}

// Name is the prefix of the host's device IDs.
func (h *ProcessHost) Name() string { return h.name }

// Platform is the platform of the phones this host boots.
func (h *ProcessHost) Platform() device.Platform { return h.opts.Platform }

// direct is the host over the phones booted so far.
func (h *ProcessHost) direct() (device.Host, error) {
	h.mu.Lock()
	addrs := slices.Clone(h.addrs)
	h.mu.Unlock()
	if h.opts.Platform == device.IOS {
		return ios.NewHost(addrs, &ios.HostOptions{Name: h.name, Driver: h.opts.IOSDriver})
	}
	return android.NewDirectHost(h.name, addrs, h.opts.Driver), nil
}

// Targets lists the phones this host booted and has not shut down.
func (h *ProcessHost) Targets(ctx context.Context) ([]device.Target, error) {
	d, err := h.direct()
	if err != nil {
		return nil, err
	}
	return d.Targets(ctx)
}

// Open opens a phone this host booted.
func (h *ProcessHost) Open(ctx context.Context, serial string) (device.Driver, error) {
	if err := h.procs.check(serial); err != nil {
		return nil, err
	}
	d, err := h.direct()
	if err != nil {
		return nil, err
	}
	return d.Open(ctx, serial)
}

// addrRe finds the address in `apex sim`'s device line: adbd's or
// WebDriverAgent's.
var addrRe = lazy.Regexp(`\b(adb|wda)\t(\S+)`)

// kind is the word before the address in `apex sim`'s line for a phone of
// this host's platform.
func (h *ProcessHost) kind() string {
	if h.opts.Platform == device.IOS {
		return "wda"
	}
	return "adb"
}

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
			if m := addrRe().FindStringSubmatch(sc.Text()); m != nil && m[1] == h.kind() {
				addr <- m[2]
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
	var printed string
	select {
	case printed = <-addr:
	case <-exited:
		return device.Booted{}, fmt.Errorf("hub: the phone process (%s) ended before printing its address: run the command by hand to see why", strings.Join(h.opts.Command, " "))
	case <-time.After(h.opts.Start):
		stop()
		return device.Booted{}, fmt.Errorf("hub: the phone process printed no address within %v", h.opts.Start)
	case <-ctx.Done():
		stop()
		return device.Booted{}, ctx.Err()
	}
	serial := printed
	if h.opts.Platform == device.IOS {
		if _, err := ios.NewHost([]string{printed}, nil); err != nil {
			stop()
			return device.Booted{}, fmt.Errorf("hub: the phone process printed %q: %w", printed, err)
		}
		serial = ios.Serial(printed)
	}
	h.procs.add(serial, cmd)
	h.mu.Lock()
	h.addrs = append(h.addrs, printed)
	h.mu.Unlock()
	t := device.Target{ID: device.QualifiedID(h.name, serial), Host: h.name, Serial: serial, Platform: h.opts.Platform, State: "device"}
	return device.Booted{Target: t, PID: cmd.Process.Pid, Cmdline: cmdline(cmd.Process.Pid)}, nil
}

// Shutdown stops a phone process this host booted.
func (h *ProcessHost) Shutdown(ctx context.Context, serial string) error {
	h.mu.Lock()
	h.addrs = slices.DeleteFunc(h.addrs, func(a string) bool { return a == serial || ios.Serial(a) == serial })
	h.mu.Unlock()
	return h.procs.stop(ctx, serial, 5*time.Second)
}
