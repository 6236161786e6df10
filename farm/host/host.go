// Package host is the farm's host agent: it runs next to phones, dials the
// control plane (and opens no port), registers its devices with a
// heartbeat, and pulls the queued runs its free devices can serve.
package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/artifact"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/records"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/runner"
	"github.com/apexagent/apex/script"
	"github.com/apexagent/apex/store"
	"github.com/nats-io/nats.go/jetstream"
)

// Options configure a host agent.
type Options struct {
	// ID names the host in the farm (default: the machine's host name).
	ID     string
	Labels map[string]string
	// Projects are the only projects whose runs the host takes (its join
	// token's, see auth.Store.CreateJoinToken); none: every project.
	Projects []string
	// Sim is the number of simulated phones to serve.
	Sim int
	// SimMax, past Sim, lets the host boot more simulated phones, up to
	// SimMax, while queued runs they could take wait for a free one;
	// one booted so that has been idle SimIdle (default 30s) is shut
	// down again. They are checked every Relist.
	SimMax  int
	SimIdle time.Duration
	// Devices are real device hosts (adb server, WebDriverAgent) whose
	// ready devices are served too.
	Devices []device.Host
	// RunsDir is where runs are recorded on this machine before their
	// records are uploaded.
	RunsDir string
	// Load parses a run's script.
	Load func(data []byte, name string) (*script.Script, error)
	// AppCache is where fetched app artifacts are kept (default
	// RunsDir/app-cache), at most AppCacheBytes (default
	// artifact.DefaultCacheBytes), least recently used first out.
	AppCache      string
	AppCacheBytes int64
	// Relist is how often the devices of Devices are listed again
	// (default 5s): ones plugged in later are served, ones gone are
	// registered offline.
	Relist time.Duration
	// Runner is a template for each run's runner options (timings).
	Runner runner.Options
	// Playground, when set, builds the playground of a device (its web
	// API, screenshot and MJPEG stream) that the console's front door
	// proxies to, over NATS, for the device's lease holder. open opens the
	// device (its id, if not "", must be the device's), as
	// server.Options.Open does.
	Playground func(dev registry.Device, open OpenFunc) http.Handler
	// Ready, when set, is called once the host and the devices it found
	// at start are registered and serve: a farm lists them from then on.
	Ready func()
	Log   *slog.Logger
}

// OpenFunc opens a device for a playground session.
type OpenFunc func(ctx context.Context, id string) (device.Driver, device.Target, func(), error)

// openTarget opens the slot's device as its playground's session.
func (s *slot) openTarget(ctx context.Context, id string) (device.Driver, device.Target, func(), error) {
	if id != "" && id != s.reg.ID {
		return nil, device.Target{}, nil, fmt.Errorf("this playground serves %s, not %s", s.reg.ID, id)
	}
	d, end, err := s.open(ctx, nil, nil)
	if err != nil {
		return nil, device.Target{}, nil, err
	}
	s.sessions.Add(1)
	var once sync.Once
	return d, s.reg.Target(), func() { once.Do(func() { s.sessions.Add(-1); end() }) }, nil
}

// Agent is a running host agent.
type Agent struct {
	o      Options
	js     jetstream.JetStream
	reg    *registry.Registry
	leases *lease.Leaser
	q      *queue.Queue
	store  *store.Store
	log    *slog.Logger
	// slots are the devices served; real ones are added as they are
	// plugged in (relist). wg holds every loop of the agent.
	mu    sync.Mutex
	slots []*slot
	wg    sync.WaitGroup
	// records keeps each run's record in its project's store.
	records *records.Store
	// apps resolves and caches the app artifacts runs install.
	artifacts *artifact.Store
	apps      *artifact.Cache
	// cancels holds the cancel func of each run in progress, by run ID.
	cancels sync.Map
}

// Run serves until ctx ends. The device registrations lapse on their own
// after the heartbeat TTL; runs in progress are cancelled.
func Run(ctx context.Context, js jetstream.JetStream, o Options) error {
	if o.ID == "" {
		o.ID, _ = os.Hostname()
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Load == nil {
		return errors.New("host: no script loader (Options.Load)")
	}
	a := &Agent{o: o, js: js, log: o.Log.With("host", o.ID)}
	// A cluster that is electing leaders (or busy) answers again soon.
	octx, cancel := context.WithTimeout(ctx, time.Minute)
	err := farm.Retry(octx, func(ctx context.Context) (err error) {
		if a.reg, err = registry.Open(ctx, js); err != nil {
			return err
		}
		if a.leases, err = lease.New(ctx, js); err != nil {
			return err
		}
		if a.q, err = queue.Open(ctx, js); err != nil {
			return err
		}
		a.records, err = records.Open(ctx, js)
		return err
	})
	cancel()
	if err != nil {
		return fmt.Errorf("host: open the farm: %w", err)
	}
	if o.AppCache == "" {
		o.AppCache = filepath.Join(o.RunsDir, "app-cache")
	}
	a.artifacts = artifact.New(js)
	if a.apps, err = artifact.NewCache(a.artifacts, o.AppCache, o.AppCacheBytes); err != nil {
		return err
	}
	if a.store, err = store.Open(o.RunsDir); err != nil {
		return fmt.Errorf("host: runs directory %s: %w", o.RunsDir, err)
	}
	defer a.store.Close()
	var bootSim func(int) *slot
	if o.Sim > 0 {
		s, boot, err := simSlots(ctx, o.ID, o.Sim, o.Labels, o.Log)
		if err != nil {
			return err
		}
		a.slots, bootSim = append(a.slots, s...), boot
	}
	if len(o.Devices) > 0 {
		s, err := hostSlots(ctx, o.ID, o.Devices, o.Labels)
		if err != nil {
			return err
		}
		a.slots = append(a.slots, s...)
	}
	if len(a.slots) == 0 && len(o.Devices) == 0 {
		return errors.New("host: no devices to serve: give --sim N or attach a device (apex devices)")
	}
	initial := a.slots
	a.slots = nil
	if err := a.watchCancels(ctx); err != nil {
		return fmt.Errorf("host: subscribe to cancels: %w", err)
	}
	if o.Playground != nil {
		if err := a.closeLapsed(ctx); err != nil {
			return fmt.Errorf("host: watch the leases: %w", err)
		}
	}
	if err := a.addSlots(ctx, initial); err != nil {
		return err
	}
	if len(initial) == 0 { // addSlots registered nothing: register the host
		if err := a.beat(ctx); err != nil {
			return fmt.Errorf("host: register: %w", err)
		}
	}
	if o.Ready != nil {
		o.Ready()
	}
	a.wg.Go(func() { a.heartbeat(ctx) })
	if len(o.Devices) > 0 {
		a.wg.Go(func() { a.relist(ctx) })
	}
	if bootSim != nil && o.SimMax > o.Sim {
		a.wg.Go(func() { a.scaleSims(ctx, bootSim) })
	}
	a.wg.Wait()
	return nil
}

func (a *Agent) beat(ctx context.Context) error {
	slots := a.slotList()
	if err := a.reg.PutHost(ctx, registry.Host{ID: a.o.ID, Labels: a.o.Labels, Devices: len(slots)}); err != nil {
		return err
	}
	for _, s := range slots {
		if err := a.reg.PutDevice(ctx, s.registration()); err != nil {
			return err
		}
	}
	return nil
}

// heartbeat refreshes the registrations every third of their TTL; a beat
// that fails is tried again at the next tick (the control plane may be
// electing a leader).
func (a *Agent) heartbeat(ctx context.Context) {
	farm.Every(ctx, a.reg.Interval(), func() {
		if err := a.beat(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("heartbeat failed", "err", err)
		}
	})
}
