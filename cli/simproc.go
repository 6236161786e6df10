//go:build !apexlite

package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/internal/supervise"
)

// openSimProcess starts a simulated Android phone as `apex sim`, a
// subprocess of this binary kept running by a supervisor (restarted with
// backoff on the same port, each crash reported on stderr and to
// onEvent when set, as are the crashes of the phone's own H.264 encoder
// it relays), so the phone's crash cannot take the server down; and
// opens it. The phone
// keeps its state in stateFile (apex sim --state-file): started again
// after a crash, or opened again, it comes back with the apps, settings
// and app in front it had. The returned func stops the phone.
func openSimProcess(ctx context.Context, env *Env, f *DeviceFlags, stateFile string, onEvent func(supervise.Event)) (device.Driver, device.Target, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, device.Target{}, nil, fmt.Errorf("starting the simulated phone: this program's path: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, device.Target{}, nil, fmt.Errorf("starting the simulated phone: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := []string{"sim", "--android", "1", "--port-base", strconv.Itoa(port), "--wda-port-base", "0",
		"--state-file", stateFile}
	for _, a := range f.Apps {
		args = append(args, "--app", a)
	}
	// The phone's own supervised processes (its H.264 encoder) report on
	// a pipe, read here for as long as the phone runs, by every run.
	evr, evw, err := os.Pipe()
	if err != nil {
		return nil, device.Target{}, nil, fmt.Errorf("starting the simulated phone: %w", err)
	}
	args = append(args, "--events-fd", "3")
	relayed := make(chan struct{})
	go func() {
		defer close(relayed)
		_ = supervise.ReadRelayed(evr, func(e supervise.Event) {
			if e.Kind == supervise.Exited {
				fmt.Fprintf(env.Err, "apex: the simulated phone's %v\n", e)
			}
			if onEvent != nil {
				onEvent(e)
			}
		})
	}()
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = supervise.Run(sctx, supervise.Options{Name: "the simulated phone (apex sim)", Log: env.Log,
			OnEvent: func(e supervise.Event) {
				if e.Kind == supervise.Exited {
					fmt.Fprintf(env.Err, "apex: %v\n", e)
				}
				if onEvent != nil {
					onEvent(e)
				}
			}},
			supervise.Command(func(ctx context.Context) (*exec.Cmd, error) {
				cmd := exec.CommandContext(ctx, self, args...)
				cmd.ExtraFiles = []*os.File{evw} // fd 3
				return cmd, nil
			}, 2*time.Second))
	}()
	release := func() {
		stop()
		<-done
		evw.Close() // the last writer: the reader sees the end
		<-relayed
		evr.Close()
	}
	if err := waitListening(ctx, addr, 30*time.Second); err != nil {
		release()
		return nil, device.Target{}, nil, fmt.Errorf("starting the simulated phone: %w", err)
	}
	d, err := android.OpenDirect(ctx, addr, &android.Options{Log: env.Log})
	if err != nil {
		release()
		return nil, device.Target{}, nil, err
	}
	info, err := d.Info(ctx)
	if err != nil {
		d.Close()
		release()
		return nil, device.Target{}, nil, err
	}
	t := device.Target{ID: device.QualifiedID("sim", addr), Host: "sim", Serial: addr,
		Platform: device.Android, State: "device", Model: info.Model, Width: info.Width, Height: info.Height}
	return d, t, func() { d.Close(); release() }, nil
}

// freePort asks the system for a free loopback TCP port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening waits until something accepts connections at addr.
func waitListening(ctx context.Context, addr string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nothing listens at %s after %v: %w", addr, limit, err)
		case <-tick.C:
		}
	}
}
