package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/internal/lazy"
	"github.com/apexagent/apex/report"
	"github.com/apexagent/apex/runner"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// retryDelay is how long a run this host cannot take now waits before
// another host (or this one) is offered it again.
const retryDelay = 250 * time.Millisecond

// serve pulls runs for one device until ctx ends: a host fetches only for
// a device that is free, so capacity drives dispatch.
func (a *Agent) serve(ctx context.Context, s *slot) {
	var cons jetstream.Consumer
	pinned := a.pinned(ctx, s)
	for ctx.Err() == nil {
		if s.offline.Load() {
			farm.Sleep(ctx, time.Second)
			continue
		}
		if msg := pinned(); msg != nil {
			a.take(ctx, s, msg)
			continue
		}
		if cons == nil {
			c, err := a.js.Consumer(ctx, farm.StreamRuns, "pool-"+s.reg.Platform)
			if err != nil {
				farm.Sleep(ctx, time.Second)
				continue
			}
			cons = c
		}
		msg, err := cons.Next(jetstream.FetchMaxWait(2 * time.Second))
		if err != nil {
			// An idle fetch ends in nats.ErrTimeout: nothing to look up again.
			if !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil {
				// The consumer's leader may have died with its member:
				// look the consumer up again.
				a.log.Debug("fetch", "err", err)
				cons = nil
				farm.Sleep(ctx, 250*time.Millisecond)
			}
			continue
		}
		a.take(ctx, s, msg)
	}
}

// take decides about one queued run: it leases the device (and a project
// slot when the project has a limit), claims the run by CAS, and only then
// acks the message, so a host that dies before the claim leaves the run
// to be delivered again, and one that dies after leaves it to the reaper.
func (a *Agent) take(ctx context.Context, s *slot, msg jetstream.Msg) {
	id := string(msg.Data())
	r, err := a.q.Get(ctx, id)
	if err != nil {
		msg.NakWithDelay(retryDelay) // the control plane may be electing a leader
		return
	}
	if r.State != queue.Queued {
		msg.Ack() // canceled while queued, or already claimed
		return
	}
	if s.offline.Load() || slices.Contains(r.Avoid, a.o.ID) || !s.reg.Matches(r.Labels) || r.Pin != "" && r.Pin != s.reg.ID ||
		len(a.o.Projects) > 0 && !slices.Contains(a.o.Projects, r.Project) {
		msg.NakWithDelay(retryDelay)
		return
	}
	slotLease, err := a.projectSlot(ctx, r)
	if err != nil {
		msg.NakWithDelay(retryDelay)
		return
	}
	dev, err := a.leases.Acquire(ctx, lease.Record{Resource: s.reg.ID, Holder: a.o.ID, Run: r.ID, Project: r.Project})
	if err != nil {
		releaseAll(slotLease)
		msg.NakWithDelay(retryDelay)
		return
	}
	r, err = a.q.Update(ctx, id, func(r *queue.Run) error {
		if err := queue.From(r, queue.Queued); err != nil {
			return err
		}
		r.State, r.Host, r.Device, r.Fence, r.Leased = queue.Leased, a.o.ID, s.reg.ID, dev.Fence(), time.Now()
		return nil
	})
	if err != nil {
		releaseAll(dev, slotLease)
		if errors.Is(err, queue.ErrState) {
			msg.Ack()
		} else {
			msg.NakWithDelay(retryDelay)
		}
		return
	}
	msg.DoubleAck(ctx)
	s.busy.Store(true)
	defer s.busy.Store(false)
	a.execute(ctx, s, r, dev, slotLease)
}

// projectSlot holds one of the project's run slots when it has a limit
// (nil lease when it has none); every slot held fails the call.
func (a *Agent) projectSlot(ctx context.Context, r queue.Run) (*lease.Lease, error) {
	n, err := a.q.Limit(ctx, r.Project)
	if err != nil || n <= 0 {
		return nil, err
	}
	for i := range n {
		l, err := a.leases.Acquire(ctx, lease.Record{Resource: "project/" + r.Project + "/slot-" + strconv.Itoa(i), Holder: a.o.ID, Run: r.ID, Project: r.Project})
		if err == nil {
			return l, nil
		}
	}
	return nil, fmt.Errorf("project %s runs %d at once already", r.Project, n)
}

func releaseAll(ls ...*lease.Lease) {
	for _, l := range ls {
		if l != nil {
			l.Release(context.Background())
		}
	}
}

// execute runs a claimed run to its end state. The run stops when the
// device lease is lost (self-fence: the reaper then records it lost), when
// its timeout passes, or when someone cancels it.
func (a *Agent) execute(ctx context.Context, s *slot, r queue.Run, dev, slotLease *lease.Lease) {
	defer releaseAll(dev, slotLease)
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if r.Timeout > 0 {
		var stop context.CancelFunc
		runCtx, stop = context.WithTimeoutCause(runCtx, r.Timeout, errTimedOut)
		defer stop()
	}
	go func() {
		select {
		case <-dev.Done():
			cancel(dev.Err())
		case <-runCtx.Done():
		}
	}()
	a.cancels.Store(r.ID, cancel)
	defer a.cancels.Delete(r.ID)
	a.event(ctx, r.ID, queue.Event{Kind: "state", State: queue.Leased, Host: a.o.ID, Device: s.reg.ID})
	r, err := a.q.Update(ctx, r.ID, func(r *queue.Run) error {
		if err := queue.From(r, queue.Leased); err != nil {
			return err
		}
		r.State, r.Started = queue.Running, time.Now()
		return nil
	})
	if err != nil {
		a.log.Warn("start run", "run", r.ID, "err", err)
		return
	}
	if r.CancelRequested { // asked before the cancel subscription could see it
		cancel(errCanceled)
	}
	a.event(ctx, r.ID, queue.Event{Kind: "state", State: queue.Running, Host: a.o.ID, Device: s.reg.ID})
	state, reason, steps, passed, recordDir := a.runScript(runCtx, s, r)
	if lost := dev.Err(); lost != nil {
		// Self-fenced: the lease is gone and someone else may hold the
		// device; the record of this run is the reaper's to write.
		a.log.Warn("lease lost during run", "run", r.ID, "err", lost)
		return
	}
	switch cause := context.Cause(runCtx); {
	case errors.Is(cause, errTimedOut):
		state, reason = queue.TimedOut, fmt.Sprintf("timed out after %v: %s", r.Timeout, reason)
	case errors.Is(cause, errCanceled):
		state = queue.Canceled
	}
	var obj string
	if recordDir != "" {
		if obj, err = a.records.Upload(context.WithoutCancel(ctx), r, recordDir); err != nil {
			a.log.Warn("upload record", "run", r.ID, "err", err)
		}
	}
	final, err := a.q.Update(context.WithoutCancel(ctx), r.ID, func(cur *queue.Run) error {
		if err := queue.From(cur, queue.Running); err != nil {
			return err
		}
		cur.State, cur.Reason, cur.Steps, cur.Passed, cur.Report, cur.Ended = state, reason, steps, passed, obj, time.Now()
		return nil
	})
	if err != nil {
		a.log.Warn("finish run", "run", r.ID, "err", err)
		return
	}
	a.event(context.WithoutCancel(ctx), r.ID, queue.Event{Kind: "end", State: final.State, Reason: final.Reason, Report: obj})
}

var (
	errTimedOut = errors.New("run timed out")
	errCanceled = errors.New("run canceled")
)

// appName is what `pm clear` may be given.
var appName = lazy.Regexp(`^[A-Za-z0-9_.]+$`)

// runScript resets the device, runs the script and returns how it went.
func (a *Agent) runScript(ctx context.Context, s *slot, r queue.Run) (state, reason string, steps, passed int, dir string) {
	sc, err := a.o.Load(r.Script, r.Name)
	if err != nil {
		return queue.Error, "the script does not load: " + err.Error(), 0, 0, ""
	}
	reset := slices.Clone(r.Reset)
	if sc.Target.Launch != "" {
		reset = append(reset, sc.Target.Launch)
	}
	for _, app := range reset {
		if !appName().MatchString(app) {
			return queue.Error, fmt.Sprintf("cannot reset app %q: not a package name", app), 0, 0, ""
		}
	}
	apps, releaseApps, err := a.fetchApps(ctx, r)
	if err != nil {
		return queue.Error, err.Error(), 0, 0, ""
	}
	defer releaseApps()
	if err := installable(s.reg.Platform, apps); err != nil {
		return queue.Error, err.Error(), 0, 0, ""
	}
	drv, closeDev, err := s.open(ctx, reset, apps)
	if err != nil {
		return queue.Error, "open the device: " + err.Error(), 0, 0, ""
	}
	defer closeDev()
	ro := a.o.Runner
	ro.Store, ro.Device, ro.Log, ro.Name = a.store, s.reg.ID, a.log, r.Name
	ro.Space = action.ForPlatform(device.Platform(s.reg.Platform))
	ro.OnStep = func(p runner.Progress) {
		a.event(ctx, r.ID, queue.Event{Kind: "step", Step: p.Step, Steps: p.Steps, Name: p.Name, Status: p.Status, Error: p.Error})
	}
	res, err := runner.Run(ctx, drv, sc, &ro)
	if err != nil {
		return queue.Error, err.Error(), 0, 0, ""
	}
	if _, err := report.Write(context.WithoutCancel(ctx), a.store, res.Run.ID); err != nil {
		a.log.Warn("write report", "run", r.ID, "err", err)
	}
	return res.Status, res.Reason, res.Steps, res.Passed, res.Run.Dir
}

func (a *Agent) event(ctx context.Context, runID string, e queue.Event) {
	if err := a.q.Publish(ctx, runID, e); err != nil {
		a.log.Debug("publish event", "run", runID, "err", err)
	}
}

// watchCancels stops the runs Cancel names while this host runs them.
func (a *Agent) watchCancels(ctx context.Context) error {
	sub, err := a.js.Conn().Subscribe(queue.CancelSubject, func(m *nats.Msg) {
		if c, ok := a.cancels.Load(string(m.Data)); ok {
			c.(context.CancelCauseFunc)(errCanceled)
		}
	})
	if err != nil {
		return err
	}
	context.AfterFunc(ctx, func() { sub.Unsubscribe() })
	return nil
}
