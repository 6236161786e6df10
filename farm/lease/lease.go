// Package lease grants exclusive farm leases on resources (a device, a
// project's run slot): a key created in a JetStream KV bucket whose TTL
// ends it unless the holder renews it, fenced by the revision that created
// it. A holder that cannot renew in time fences itself off: its Lease's
// Done channel closes, and it must stop driving the device.
package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/audit"
	"github.com/nats-io/nats.go/jetstream"
)

// Record is what a lease key holds.
type Record struct {
	Resource string `json:"resource"`
	Holder   string `json:"holder"` // who drives it, e.g. "host-a" or "alice (apex run)"
	Run      string `json:"run,omitempty"`
	// Fence is the revision that created the lease; it stays the same
	// across renewals, and every command on the resource carries it.
	Fence   uint64    `json:"fence"`
	Since   time.Time `json:"since"`
	Renewed time.Time `json:"renewed"`
}

// ErrHeld matches (errors.Is) the *HeldError of a resource someone else holds.
var ErrHeld = errors.New("lease: held")

// ErrLost is why a Lease ended without Release: the holder could not renew
// in time, or someone broke or took the lease.
var ErrLost = errors.New("lease: lost")

// ErrStaleFence is a command carrying a fence that is not the current
// lease's: its holder lost the lease.
var ErrStaleFence = errors.New("lease: stale fence")

// HeldError names the holder of a resource.
type HeldError struct{ Record Record }

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s is leased by %s since %s", e.Record.Resource, e.Record.Holder, e.Record.Since.Format(time.RFC3339))
}
func (e *HeldError) Is(t error) bool { return t == ErrHeld }

// Leaser grants leases from the farm's lease bucket. Safe for concurrent use.
type Leaser struct {
	js  jetstream.JetStream
	kv  jetstream.KeyValue
	ttl time.Duration
}

// New opens the lease bucket; its TTL is the lease TTL.
func New(ctx context.Context, js jetstream.JetStream) (*Leaser, error) {
	kv, err := js.KeyValue(ctx, farm.BucketLeases)
	if err != nil {
		return nil, fmt.Errorf("lease: open bucket %s: %w (is the control plane provisioned?)", farm.BucketLeases, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("lease: bucket status: %w", err)
	}
	return &Leaser{js: js, kv: kv, ttl: st.TTL()}, nil
}

// TTL is how long a lease lives without renewal.
func (l *Leaser) TTL() time.Duration { return l.ttl }

// Acquire takes the lease of resource for holder, or fails at once with a
// *HeldError. The lease is renewed every third of the TTL until Release;
// when renewals fail for two thirds of the TTL the Lease ends with ErrLost
// (before the key can expire, so no one else can hold it yet).
func (l *Leaser) Acquire(ctx context.Context, resource, holder, run string) (*Lease, error) {
	now := time.Now()
	rec := Record{Resource: resource, Holder: holder, Run: run, Since: now, Renewed: now}
	data, _ := json.Marshal(rec)
	key := farm.Key(resource)
	rev, err := l.kv.Create(ctx, key, data)
	if errors.Is(err, jetstream.ErrKeyExists) {
		if e, gerr := l.kv.Get(ctx, key); gerr == nil {
			var cur Record
			if json.Unmarshal(e.Value(), &cur) == nil {
				return nil, &HeldError{Record: cur}
			}
		}
		return nil, &HeldError{Record: Record{Resource: resource, Holder: "another holder"}}
	}
	if err != nil {
		return nil, fmt.Errorf("lease: acquire %s: %w", resource, err)
	}
	rec.Fence = rev
	ls := &Lease{l: l, key: key, rec: rec, rev: rev, done: make(chan struct{}), stop: make(chan struct{}), renewed: now}
	// Store the fence in the record, so others can check commands against it.
	if err := ls.renew(ctx); err != nil {
		l.kv.Delete(context.WithoutCancel(ctx), key, jetstream.LastRevision(rev))
		return nil, fmt.Errorf("lease: acquire %s: %w", resource, err)
	}
	if err := audit.Log(ctx, l.js, audit.Event{Kind: audit.LeaseAcquired, Actor: holder, Resource: resource, Run: run, Fence: rev}); err != nil {
		ls.Release(context.WithoutCancel(ctx))
		return nil, err
	}
	go ls.keep()
	return ls, nil
}

// List returns the leases held now.
func (l *Leaser) List(ctx context.Context) ([]Record, error) {
	keys, err := l.kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	var out []Record
	for k := range keys.Keys() {
		e, err := l.kv.Get(ctx, k)
		if err != nil {
			continue
		}
		var r Record
		if json.Unmarshal(e.Value(), &r) == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// Current returns the lease held on resource, or ok false. It asks the
// bucket's leader, not any replica: a replica that lags would miss a lease
// just taken, and a host would refuse its holder, or the reaper call its
// run lost.
func (l *Leaser) Current(ctx context.Context, resource string) (Record, bool, error) {
	data, _, ok, err := farm.LeaderGet(ctx, l.js, farm.BucketLeases, farm.Key(resource))
	if err != nil || !ok {
		return Record{}, false, err
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return Record{}, false, err
	}
	return r, true, nil
}

// Check fails with ErrStaleFence unless fence is the current lease's on
// resource: a host calls it before each command it is sent.
func (l *Leaser) Check(ctx context.Context, resource string, fence uint64) error {
	// A replica that lags may not have the lease yet: look again before
	// refusing.
	for try := 0; ; try++ {
		r, ok, err := l.Current(ctx, resource)
		if err != nil {
			return err
		}
		if ok && r.Fence == fence {
			return nil
		}
		if try == 2 || (ok && r.Fence > fence) {
			return fmt.Errorf("%w: %s is not leased with fence %d: lease it again", ErrStaleFence, resource, fence)
		}
		farm.Sleep(ctx, 100*time.Millisecond)
	}
}

// Break ends whoever's lease on resource (an admin action); the holder
// finds out at its next renewal and stops.
func (l *Leaser) Break(ctx context.Context, resource, actor string) error {
	r, ok, err := l.Current(ctx, resource)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("lease: %s is not leased", resource)
	}
	if err := l.kv.Delete(ctx, farm.Key(resource)); err != nil {
		return fmt.Errorf("lease: break %s: %w", resource, err)
	}
	return audit.Log(ctx, l.js, audit.Event{Kind: audit.LeaseBroken, Actor: actor, Resource: resource, Run: r.Run, Fence: r.Fence})
}

// Lease is a held lease.
type Lease struct {
	l    *Leaser
	key  string
	done chan struct{} // closed when the lease ends
	stop chan struct{} // closed by Release

	mu      sync.Mutex
	rec     Record
	rev     uint64 // last revision written
	renewed time.Time
	err     error
	once    sync.Once
}

// Fence is the lease's fencing token.
func (s *Lease) Fence() uint64 { return s.rec.Fence }

// Record is the lease as written.
func (s *Lease) Record() Record { return s.rec }

// Done closes when the lease ends: released, or lost (then Err is ErrLost).
func (s *Lease) Done() <-chan struct{} { return s.done }

// Err says why the lease ended; nil while held or after Release.
func (s *Lease) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Lease) renew(ctx context.Context) error {
	s.mu.Lock()
	rec, rev := s.rec, s.rev
	s.mu.Unlock()
	rec.Renewed = time.Now()
	data, _ := json.Marshal(rec)
	// Update publishes without a per-key TTL; the bucket's TTL restarts
	// with every message, which is what renews the lease.
	nrev, err := s.l.kv.Update(ctx, s.key, data, rev)
	if farm.Conflict(err) {
		// A renewal whose answer came too late (a busy cluster) may still
		// have been stored: the key is still ours while it has our
		// fence, since taking it anew makes a new fence.
		cur, crev, ok, gerr := farm.LeaderGet(ctx, s.l.js, farm.BucketLeases, s.key)
		var got Record
		if gerr == nil && ok && json.Unmarshal(cur, &got) == nil && got.Fence == rec.Fence && got.Holder == rec.Holder {
			rec.Renewed, nrev, err = got.Renewed, crev, nil
		}
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.rev, s.renewed = nrev, rec.Renewed
	s.mu.Unlock()
	return nil
}

// keep renews the lease until Release, and ends it when renewal fails
// for longer than is safe.
func (s *Lease) keep() {
	ttl := s.l.ttl
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		// Keep trying until the lease is two thirds through its TTL; past
		// that, stop before it can expire under a holder still driving.
		s.mu.Lock()
		deadline := s.renewed.Add(2 * ttl / 3)
		s.mu.Unlock()
		for {
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			err := s.renew(ctx)
			cancel()
			if err == nil {
				break
			}
			if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) ||
				farm.Conflict(err) || !time.Now().Before(deadline) {
				s.end(fmt.Errorf("%w: %s: %v", ErrLost, s.rec.Resource, err))
				return
			}
			select {
			case <-s.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

func (s *Lease) end(err error) {
	s.once.Do(func() {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.done)
	})
}

// Release ends the lease and deletes its key (if it is still ours). The
// release is logged before the key goes, so the audit log never shows the
// next holder first.
func (s *Lease) Release(ctx context.Context) {
	select {
	case <-s.stop:
		return
	default:
		close(s.stop)
	}
	if err := s.Err(); err != nil {
		// The holder has stopped driving the resource by now: say so, so
		// the log shows the next holder after it.
		audit.Log(ctx, s.l.js, audit.Event{Kind: audit.LeaseLost, Actor: s.rec.Holder, Resource: s.rec.Resource, Run: s.rec.Run,
			Fence: s.rec.Fence, Detail: err.Error()})
		return
	}
	s.end(nil)
	s.mu.Lock()
	rev := s.rev
	s.mu.Unlock()
	audit.Log(ctx, s.l.js, audit.Event{Kind: audit.LeaseReleased, Actor: s.rec.Holder, Resource: s.rec.Resource, Run: s.rec.Run, Fence: s.rec.Fence})
	s.l.kv.Delete(ctx, s.key, jetstream.LastRevision(rev))
}
