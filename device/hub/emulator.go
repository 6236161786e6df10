package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apexagent/apex/device"

	"github.com/apexagent/apex/internal/tail"
)

// Emulator is the Android SDK's emulator on this machine and its virtual
// devices (AVDs), each of which it can boot.
type Emulator struct {
	Path string   `json:"path"`
	AVDs []string `json:"avds"`
}

// ErrNoEmulator is the error of DetectEmulator on a machine without the
// SDK's emulator or without an AVD.
var ErrNoEmulator = errors.New("no Android emulator")

// DetectEmulator finds the SDK's emulator ($ANDROID_HOME/emulator,
// $ANDROID_SDK_ROOT/emulator, then $PATH) and lists its AVDs with
// `emulator -list-avds`. Emulators are optional: the error says what to
// install when there is none.
func DetectEmulator(ctx context.Context, getenv func(string) string) (Emulator, error) {
	var path string
	for _, root := range []string{getenv("ANDROID_HOME"), getenv("ANDROID_SDK_ROOT")} {
		if root == "" {
			continue
		}
		p := filepath.Join(root, "emulator", "emulator")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			path = p
			break
		}
	}
	if path == "" {
		p, err := exec.LookPath("emulator")
		if err != nil {
			return Emulator{}, fmt.Errorf("%w: the SDK's emulator is not in $ANDROID_HOME/emulator nor on $PATH: install it with sdkmanager emulator to boot Android emulators", ErrNoEmulator)
		}
		path = p
	}
	out, err := exec.CommandContext(ctx, path, "-list-avds").Output()
	if err != nil {
		return Emulator{Path: path}, fmt.Errorf("%w: %s -list-avds: %v", ErrNoEmulator, path, err)
	}
	e := Emulator{Path: path}
	for _, l := range strings.Split(string(out), "\n") {
		// The emulator prints INFO lines to stdout too.
		if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, " ") {
			e.AVDs = append(e.AVDs, l)
		}
	}
	if len(e.AVDs) == 0 {
		return e, fmt.Errorf("%w: %s has no AVDs: create one with avdmanager create avd", ErrNoEmulator, path)
	}
	return e, nil
}

// EmulatorOptions configure an EmulatorHost.
type EmulatorOptions struct {
	// AVD is the virtual device Boot starts (default: the first the
	// emulator lists).
	AVD string
	// ADB is the adb binary Boot waits for the device with (default:
	// platform-tools/adb beside the emulator's SDK, else adb on $PATH).
	ADB string
	// Env is added to the environment of the emulator and of adb.
	Env []string
	// Ready bounds a boot: the emulator started, the device on adb and
	// sys.boot_completed set (default 5m).
	Ready time.Duration
	Log   *slog.Logger
}

// EmulatorHost boots the Android SDK's emulators, one process each
// (`emulator -avd NAME -no-window -port P`), waits for them on adb (`adb
// -s emulator-P wait-for-device`, then sys.boot_completed), and opens
// them through the adb server's host. It lists only the emulators it
// booted.
type EmulatorHost struct {
	name string
	emu  Emulator
	opts EmulatorOptions
	adb  device.Host // the adb server's host, which sees the emulators

	procs *procTable // by serial (emulator-P)
}

var _ device.Booter = (*EmulatorHost)(nil)

// NewEmulatorHost returns a host named name booting e's AVDs, opened
// through adbHost (the adb server's host). An Emulator without AVDs is
// refused, saying what to install.
func NewEmulatorHost(name string, e Emulator, adbHost device.Host, opts EmulatorOptions) (*EmulatorHost, error) {
	if e.Path == "" || len(e.AVDs) == 0 {
		return nil, fmt.Errorf("%w: booting emulators needs the SDK's emulator and an AVD (sdkmanager emulator, avdmanager create avd)", ErrNoEmulator)
	}
	if opts.AVD == "" {
		opts.AVD = e.AVDs[0]
	} else if !slices.Contains(e.AVDs, opts.AVD) {
		return nil, fmt.Errorf("%w: no AVD %q: the emulator has %s", ErrNoEmulator, opts.AVD, strings.Join(e.AVDs, ", "))
	}
	if opts.ADB == "" {
		opts.ADB = "adb"
		sdkADB := filepath.Join(filepath.Dir(filepath.Dir(e.Path)), "platform-tools", "adb")
		if fi, err := os.Stat(sdkADB); err == nil && !fi.IsDir() {
			opts.ADB = sdkADB
		}
	}
	if opts.Ready <= 0 {
		opts.Ready = 5 * time.Minute
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &EmulatorHost{name: name, emu: e, opts: opts, adb: adbHost, procs: newProcTable(name)}, nil
}

// Name is the prefix of the host's device IDs.
func (h *EmulatorHost) Name() string { return h.name }

// Targets lists the emulators this host booted, as adb sees them.
func (h *EmulatorHost) Targets(ctx context.Context) ([]device.Target, error) {
	ts, err := h.adb.Targets(ctx)
	var out []device.Target
	for _, t := range ts {
		if h.procs.has(t.Serial) {
			t.ID, t.Host = device.QualifiedID(h.name, t.Serial), h.name
			out = append(out, t)
		}
	}
	return out, err
}

// Open opens an emulator this host booted.
func (h *EmulatorHost) Open(ctx context.Context, serial string) (device.Driver, error) {
	if err := h.procs.check(serial); err != nil {
		return nil, err
	}
	return h.adb.Open(ctx, serial)
}

// EmulatorArgs is the emulator's command line for avd on console port
// port (its adb port is port+1, its serial emulator-PORT).
func EmulatorArgs(avd string, port int) []string {
	return []string{"-avd", avd, "-no-window", "-no-audio", "-no-boot-anim", "-no-snapshot-save", "-port", strconv.Itoa(port)}
}

// Boot starts the AVD on a free console port and returns it once adb sees
// it and it has booted (sys.boot_completed is 1).
func (h *EmulatorHost) Boot(ctx context.Context) (device.Booted, error) {
	port, err := freeEmulatorPort()
	if err != nil {
		return device.Booted{}, err
	}
	serial := "emulator-" + strconv.Itoa(port)
	cmd := exec.Command(h.emu.Path, EmulatorArgs(h.opts.AVD, port)...)
	cmd.Env = append(cmd.Environ(), h.opts.Env...)
	out := tail.New(2048)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return device.Booted{}, fmt.Errorf("hub: start the emulator %s: %w", h.emu.Path, err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if err != nil {
			err = fmt.Errorf("%w: %s", err, out.String())
		}
		exited <- err
	}()
	bctx, cancel := context.WithTimeout(ctx, h.opts.Ready)
	defer cancel()
	if err := h.waitBooted(bctx, serial, exited); err != nil {
		_ = cmd.Process.Kill()
		return device.Booted{}, fmt.Errorf("hub: boot AVD %s as %s: %w", h.opts.AVD, serial, err)
	}
	h.procs.add(serial, cmd)
	h.opts.Log.Info("emulator booted", "avd", h.opts.AVD, "serial", serial, "pid", cmd.Process.Pid)
	t := device.Target{ID: device.QualifiedID(h.name, serial), Host: h.name, Serial: serial, Platform: device.Android, State: "device", Model: h.opts.AVD}
	return device.Booted{Target: t, PID: cmd.Process.Pid, Cmdline: cmdline(cmd.Process.Pid)}, nil
}

// waitBooted runs adb -s serial wait-for-device, then polls
// sys.boot_completed, until it is 1, the emulator exits or ctx ends.
func (h *EmulatorHost) waitBooted(ctx context.Context, serial string, exited <-chan error) error {
	adb := func(args ...string) (string, error) {
		c := exec.CommandContext(ctx, h.opts.ADB, append([]string{"-s", serial}, args...)...)
		c.Env = append(c.Environ(), h.opts.Env...)
		out, err := c.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	step := func(f func() error) error {
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			return err
		case err := <-exited:
			return fmt.Errorf("the emulator exited (%v) before it booted: run it by hand to see why", err)
		}
	}
	if err := step(func() error {
		if out, err := adb("wait-for-device"); err != nil {
			return fmt.Errorf("adb wait-for-device: %v: %s", err, out)
		}
		return nil
	}); err != nil {
		return err
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		var booted bool
		if err := step(func() error {
			out, _ := adb("shell", "getprop", "sys.boot_completed")
			booted = out == "1"
			return nil
		}); err != nil {
			return err
		}
		if booted {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not booted (sys.boot_completed is not 1): %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// Shutdown stops an emulator this host booted.
func (h *EmulatorHost) Shutdown(ctx context.Context, serial string) error {
	return h.procs.stop(ctx, serial, 20*time.Second)
}

// freeEmulatorPort is an even console port of the emulators' range whose
// adb port (the next) is free too. It starts above 5585: emulators
// started by hand take 5554 on, and the adb server adopts whatever
// listens on 5555–5585 as an emulator; ours announce themselves to it.
func freeEmulatorPort() (int, error) {
	for p := 5586; p <= 5682; p += 2 {
		ok := true
		var ls []net.Listener
		for _, q := range []int{p, p + 1} {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(q)))
			if err != nil {
				ok = false
				break
			}
			ls = append(ls, l)
		}
		for _, l := range ls {
			l.Close()
		}
		if ok {
			return p, nil
		}
	}
	return 0, errors.New("hub: no free emulator port pair from 5586 to 5683: stop some emulators")
}
