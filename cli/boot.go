//go:build !apexlite

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/device/hub"
	"github.com/apexagent/apex/device/ios"
	"github.com/spf13/cobra"
)

// BootCaps are the caps of the simulated phones apex mcp --boot and the
// playground start on demand, and where their sessions are recorded.
type BootCaps struct {
	RunCap   int
	IdleCap  time.Duration
	StateDir string
}

// register adds --run-cap, --idle-cap and --state-dir; what says which
// phones they bound.
func (c *BootCaps) register(cmd *cobra.Command, runCap int, what string) {
	f := cmd.Flags()
	f.IntVar(&c.RunCap, "run-cap", runCap, what+": how many booted phones of a platform may run at once (0: no cap)")
	f.DurationVar(&c.IdleCap, "idle-cap", 0, what+": stop a booted phone no session has used for this long (0: never)")
	f.StringVar(&c.StateDir, "state-dir", "", what+": where booted sessions are recorded (default $APEX_SESSIONS_DIR or ~/.local/state/apex/sessions); the orphans of a crashed apex are stopped at start")
}

// bootHostName is the host of the phones booted of a platform: "booted"
// for Android phones, "booted-ios" for iPhones.
func bootHostName(p device.Platform) string {
	if p == device.IOS {
		return "booted-ios"
	}
	return "booted"
}

// simBooter boots simulated phones on demand, each an `apex sim` process
// of this binary, under one session host per platform with the same caps.
// It is the playground's server.Booter, and its hosts are apex mcp
// --boot's.
type simBooter struct {
	hosts []*hub.SessionHost // in the order of the platforms given
}

// newSimBooter starts no phone: it stops the orphans a crashed apex left
// in the state directory and waits for Boot.
func newSimBooter(ctx context.Context, env *Env, caps BootCaps, platforms ...device.Platform) (*simBooter, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("booting simulated phones: find the apex executable: %w", err)
	}
	dir := caps.StateDir
	if dir == "" {
		dir = hub.DefaultStateDir()
	}
	b := &simBooter{}
	for _, p := range platforms {
		args := []string{exe, "sim", "--android", "1", "--port-base", "0", "--wda-port-base", "0"}
		if p == device.IOS {
			args = []string{exe, "sim", "--ios", "1", "--wda-port-base", "0"}
		}
		ph, err := hub.NewProcessHost(bootHostName(p), hub.ProcessOptions{Command: args, Platform: p,
			Driver: &android.Options{Log: env.Log}, IOSDriver: &ios.Options{Log: env.Log}})
		if err != nil {
			b.Close()
			return nil, err
		}
		sh, err := hub.NewSessionHost(ctx, ph, hub.SessionOptions{RunCap: caps.RunCap, IdleCap: caps.IdleCap, StateDir: dir, Log: env.Log})
		if err != nil {
			b.Close()
			return nil, err
		}
		b.hosts = append(b.hosts, sh)
	}
	return b, nil
}

// Platforms are the platforms it boots.
func (b *simBooter) Platforms() []device.Platform {
	out := make([]device.Platform, 0, len(b.hosts))
	for _, h := range b.hosts {
		out = append(out, platformOf(h.Name()))
	}
	return out
}

func platformOf(host string) device.Platform {
	if host == bootHostName(device.IOS) {
		return device.IOS
	}
	return device.Android
}

// Hosts are its session hosts, to list and open the phones booted.
func (b *simBooter) Hosts() []device.Host {
	out := make([]device.Host, 0, len(b.hosts))
	for _, h := range b.hosts {
		out = append(out, h)
	}
	return out
}

func (b *simBooter) host(name string) *hub.SessionHost {
	for _, h := range b.hosts {
		if h.Name() == name {
			return h
		}
	}
	return nil
}

// Boot starts a phone of platform p and returns it as its host lists it
// (model, screen size).
func (b *simBooter) Boot(ctx context.Context, p device.Platform) (device.Target, error) {
	h := b.host(bootHostName(p))
	if h == nil {
		return device.Target{}, fmt.Errorf("booting %s phones is not offered here: boot one of %v", p, b.Platforms())
	}
	bt, err := h.Boot(ctx)
	if err != nil {
		return device.Target{}, err
	}
	ts, _ := h.Targets(ctx)
	for _, t := range ts {
		if t.ID == bt.Target.ID && t.Ready() {
			return t, nil
		}
	}
	return bt.Target, nil
}

// Owns reports whether id names a phone of one of its hosts.
func (b *simBooter) Owns(id string) bool {
	name, _, ok := strings.Cut(id, "/")
	return ok && b.host(name) != nil
}

// Shutdown stops the phone id names, which Boot started.
func (b *simBooter) Shutdown(ctx context.Context, id string) error {
	name, serial, _ := strings.Cut(id, "/")
	h := b.host(name)
	if h == nil {
		return fmt.Errorf("%s: not a booted phone: %w", id, device.ErrNotFound)
	}
	return h.Shutdown(ctx, serial)
}

// Close stops every phone it booted.
func (b *simBooter) Close() error {
	var errs []error
	for _, h := range b.hosts {
		errs = append(errs, h.Close())
	}
	return errors.Join(errs...)
}

// emulatorHost is the host "emulator" booting the Android SDK's first AVD
// under a session host with caps, opened through the adb server; nil
// (and why, for a log) when this machine has no emulator or no AVD.
func emulatorHost(ctx context.Context, env *Env, caps BootCaps) (*hub.SessionHost, error) {
	e, err := hub.DetectEmulator(ctx, os.Getenv)
	if err != nil {
		return nil, err
	}
	hosts, err := deviceHosts(env)
	if err != nil {
		return nil, err
	}
	eh, err := hub.NewEmulatorHost("emulator", e, hosts[0], hub.EmulatorOptions{Log: env.Log})
	if err != nil {
		return nil, err
	}
	dir := caps.StateDir
	if dir == "" {
		dir = hub.DefaultStateDir()
	}
	return hub.NewSessionHost(ctx, eh, hub.SessionOptions{RunCap: caps.RunCap, IdleCap: caps.IdleCap, StateDir: dir, Log: env.Log})
}
