package android

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/device"
)

// HostOptions configure a Host; nil means defaults.
type HostOptions struct {
	// Name is the host's prefix in device IDs (default "adb").
	Name string
	// StartServer starts the adb server when none answers, as adb does.
	StartServer bool
	// Driver options for the devices this host opens.
	Driver *Options
	// WatchPoll is how often Watch re-reads the device list to catch the
	// changes adb does not report (0 = 2 s).
	WatchPoll time.Duration
	// NoLabels makes Targets leave ready devices' model and screen size
	// empty: labelling asks each one a shell command, which finding the
	// device a command opens does not need.
	NoLabels bool
	Log      *slog.Logger
}

// Host is the devices of one adb server.
type Host struct {
	c    *adb.Client
	opts HostOptions
}

var _ device.Host = (*Host)(nil)

// NewHost returns a host over the adb server c talks to.
func NewHost(c *adb.Client, opts *HostOptions) *Host {
	h := &Host{c: c}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.Name == "" {
		h.opts.Name = "adb"
	}
	return h
}

// Name is the prefix of this host's device IDs.
func (h *Host) Name() string { return h.opts.Name }

// Client is the adb server client.
func (h *Host) Client() *adb.Client { return h.c }

// labelTimeout bounds the `wm size` asked of each ready device to label it.
const labelTimeout = 2 * time.Second

// Targets lists the server's devices, ready ones labelled with their
// resolution and the others with a hint of what to do.
func (h *Host) Targets(ctx context.Context) ([]device.Target, error) {
	devs, err := h.c.Devices(ctx)
	if err != nil && h.opts.StartServer {
		if serr := h.c.StartServer(ctx); serr != nil {
			return nil, fmt.Errorf("listing adb devices: %w", h.startError(err, serr))
		}
		devs, err = h.c.Devices(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("listing adb devices: %w", err)
	}
	ts := h.targets(devs)
	if h.opts.NoLabels {
		return ts, nil
	}
	var wg sync.WaitGroup
	for i, d := range devs {
		if d.State == "device" {
			wg.Go(func() { label(ctx, h.c.Device(d.Serial), &ts[i]) })
		}
	}
	wg.Wait()
	return ts, nil
}

// startError explains a server that could not be started after cause (nil
// when none was tried first). A missing adb binary is the usual reason on
// a fresh machine, so it gets its own message.
func (h *Host) startError(cause, serr error) error {
	if errors.Is(serr, exec.ErrNotFound) || errors.Is(serr, fs.ErrNotExist) {
		if h.opts.Log != nil {
			h.opts.Log.Debug("starting the adb server", "addr", h.c.Addr(), "err", serr)
		}
		return fmt.Errorf("no adb server answers at %s and adb is not installed to start one: install it (Debian, Ubuntu: apt install adb) or point ADB_SERVER_SOCKET at a running server", h.c.Addr())
	}
	if cause == nil {
		return serr
	}
	return fmt.Errorf("%w (starting a server: %v)", cause, serr)
}

// targets names the server's devices as this host's targets, each with
// the hint for its state.
func (h *Host) targets(devs []adb.DeviceInfo) []device.Target {
	ts := make([]device.Target, len(devs))
	for i, d := range devs {
		ts[i] = device.Target{
			ID: device.QualifiedID(h.Name(), d.Serial), Host: h.Name(), Serial: d.Serial,
			Platform: device.Android, State: d.State, Model: d.Model, Hint: d.Hint(),
		}
	}
	return ts
}

// watchPoll is how often Watch re-reads host:devices-l by default.
const watchPoll = 2 * time.Second

// Watch yields the server's devices each time the list changes, starting
// with the current list, until ctx is done or the loop stops (neither is
// an error); a server that goes away yields its error once and ends the
// sequence. Changes come from host:track-devices, which is immediate, and
// from re-reading host:devices-l every HostOptions.WatchPoll, because adb
// does not report every change on track-devices (Debian's adb 29 misses a
// network device turning offline or unauthorized). The targets are not
// labelled with their resolution (that costs a shell call per device per
// change): call Targets for it.
func (h *Host) Watch(ctx context.Context) iter.Seq2[[]device.Target, error] {
	return func(yield func([]device.Target, error) bool) {
		if h.opts.StartServer {
			if err := h.c.StartServer(ctx); err != nil {
				if ctx.Err() == nil {
					yield(nil, fmt.Errorf("watching adb devices: %w", h.startError(nil, err)))
				}
				return
			}
		}
		tctx, cancel := context.WithCancel(ctx)
		tracked := h.track(tctx)
		defer func() {
			cancel()
			for range tracked { // let the tracking goroutine end
			}
		}()
		poll := h.opts.WatchPoll
		if poll <= 0 {
			poll = watchPoll
		}
		tick := time.NewTicker(poll)
		defer tick.Stop()
		last, started := "", false
		emit := func(devs []adb.DeviceInfo) bool {
			if k := devicesKey(devs); !started || k != last {
				started, last = true, k
				return yield(h.targets(devs), nil)
			}
			return true
		}
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-tracked:
				switch {
				case !ok:
					return
				case ev.err != nil && ctx.Err() != nil:
					return // the caller stopped watching: not a failure
				case ev.err != nil:
					if !yield(nil, fmt.Errorf("watching adb devices: %w", ev.err)) {
						return
					}
				case !emit(h.withModels(ctx, ev.devs)):
					return
				}
			case <-tick.C:
				// A failure here is the server going away, which the
				// tracking connection reports.
				if devs, err := h.c.Devices(ctx); err == nil && !emit(devs) {
					return
				}
			}
		}
	}
}

type tracked struct {
	devs []adb.DeviceInfo
	err  error
}

// track runs host:track-devices until ctx ends, then closes the channel.
func (h *Host) track(ctx context.Context) <-chan tracked {
	ch := make(chan tracked)
	go func() {
		defer close(ch)
		for devs, err := range h.c.TrackDevices(ctx) {
			select {
			case ch <- tracked{devs, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// devicesKey is what Watch compares to tell a changed list from the same.
func devicesKey(devs []adb.DeviceInfo) string {
	lines := make([]string, len(devs))
	for i, d := range devs {
		lines[i] = d.Serial + "\t" + d.State + "\t" + d.Model
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// withModels fills the models host:track-devices leaves out (it sends the
// short list) from one host:devices-l; a device the long list no longer
// has keeps no model.
func (h *Host) withModels(ctx context.Context, devs []adb.DeviceInfo) []adb.DeviceInfo {
	if !slices.ContainsFunc(devs, func(d adb.DeviceInfo) bool { return d.Model == "" }) {
		return devs
	}
	long, err := h.c.Devices(ctx)
	if err != nil {
		return devs
	}
	for i := range devs {
		if j := slices.IndexFunc(long, func(l adb.DeviceInfo) bool { return l.Serial == devs[i].Serial }); j >= 0 && devs[i].Model == "" {
			devs[i].Model = long[j].Model
		}
	}
	return devs
}

// label fills a target's resolution (and model, if missing) from the
// device; a device too slow to answer stays unlabelled.
func label(ctx context.Context, t adb.Transport, target *device.Target) {
	ctx, cancel := context.WithTimeout(ctx, labelTimeout)
	defer cancel()
	out, err := adb.Shell(ctx, t, infoCmd)
	if err != nil {
		return
	}
	info, err := parseInfo(string(out))
	if err != nil {
		return
	}
	target.Width, target.Height = info.Width, info.Height
	if target.Model == "" {
		target.Model = info.Model
	}
}

// Open returns a driver for a device of this server.
func (h *Host) Open(ctx context.Context, serial string) (device.Driver, error) {
	return OpenWith(ctx, h.c.Device(serial), serial, h.opts.Driver)
}

// DirectHost reaches adbds by address with no adb server: the simulated
// phones of sim/lab, or network devices that do not ask for AUTH.
type DirectHost struct {
	name string
	opts *Options

	mu    sync.Mutex
	addrs []string
}

var _ device.Host = (*DirectHost)(nil)

// NewDirectHost returns a host named name (e.g. "sim") over addrs.
func NewDirectHost(name string, addrs []string, opts *Options) *DirectHost {
	return &DirectHost{name: name, addrs: append([]string{}, addrs...), opts: opts}
}

// Name is the prefix of this host's device IDs.
func (h *DirectHost) Name() string { return h.name }

// Add registers another address.
func (h *DirectHost) Add(addr string) {
	h.mu.Lock()
	h.addrs = append(h.addrs, addr)
	h.mu.Unlock()
}

// Targets dials every address; one that does not answer is listed offline.
func (h *DirectHost) Targets(ctx context.Context) ([]device.Target, error) {
	h.mu.Lock()
	addrs := append([]string{}, h.addrs...)
	h.mu.Unlock()
	ts := make([]device.Target, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		ts[i] = device.Target{ID: device.QualifiedID(h.name, addr), Host: h.name, Serial: addr, Platform: device.Android, State: "offline",
			Hint: "nothing answers at " + addr + ": start the device (apex sim) or check the address"}
		wg.Go(func() {
			dctx, cancel := context.WithTimeout(ctx, labelTimeout)
			defer cancel()
			d, err := adb.Dial(dctx, addr, nil)
			if err != nil {
				return
			}
			defer d.Close()
			b, _ := d.Banner(dctx)
			ts[i].State, ts[i].Hint, ts[i].Model = "device", "", b.Props["ro.product.model"]
			label(dctx, d, &ts[i])
		})
	}
	wg.Wait()
	return ts, nil
}

// Open dials the adbd at serial (its address) and returns a driver that
// owns the connection.
func (h *DirectHost) Open(ctx context.Context, serial string) (device.Driver, error) {
	return OpenDirect(ctx, serial, h.opts)
}

// OpenDirect dials an adbd at addr and returns a driver owning the
// connection; Close drops it.
func OpenDirect(ctx context.Context, addr string, opts *Options) (*Driver, error) {
	d, err := adb.Dial(ctx, addr, nil)
	if err != nil {
		return nil, fmt.Errorf("android %s: %w: %v", addr, device.ErrOffline, err)
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.Close = d.Close
	drv, err := OpenWith(ctx, d, addr, &o)
	if err != nil {
		d.Close()
		return nil, err
	}
	return drv, nil
}
