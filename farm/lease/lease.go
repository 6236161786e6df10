// Package lease grants exclusive farm leases on resources (a device, a
// project's run slot): a key created in a JetStream KV bucket whose TTL
// ends it unless the holder renews it, fenced by the revision that created
// it. A holder that cannot renew in time fences itself off: its Lease's
// Done channel closes, and it must stop driving the device.
package lease

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
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
	Fence uint64    `json:"fence"`
	Since time.Time `json:"since"`
	// Renewed is when the last write of the lease was sent (by the
	// writer's clock): its TTL runs from a moment after it.
	Renewed time.Time `json:"renewed"`
	// Project is the project the resource is held for: its members see
	// who holds it (the farm API hides the holder from everyone else).
	Project string `json:"project,omitempty"`
	// KeyHash is the SHA-256 (hex) of the lease's key: a host answers a
	// call on the resource only when it carries the key (Check), so
	// learning the fence is not enough to drive a device.
	KeyHash string `json:"key_hash,omitempty"`
	// Key is the lease's secret, known to its taker only: Take returns
	// it, and it is never stored.
	Key string `json:"-"`
}

// HashKey is what Record.KeyHash keeps of a lease key.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// ErrHeld matches (errors.Is) the *HeldError of a resource someone else holds.
var ErrHeld = errors.New("lease: held")

// ErrLost is why a Lease ended without Release: the holder could not renew
// in time, or someone broke or took the lease.
var ErrLost = errors.New("lease: lost")

// ErrStaleFence is a command carrying a fence that is not the current
// lease's: its holder lost the lease.
var ErrStaleFence = errors.New("lease: stale fence")

// ErrBadKey is a command carrying the current fence but not the lease's
// key: it does not come from the lease's holder.
var ErrBadKey = errors.New("lease: not the holder's key")

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
	// wrote keeps, by resource, the last lease record this Leaser wrote
	// and its revision: renewing it is then one compare-and-swap against
	// that revision, without reading the lease from the bucket's leader
	// first (two round trips through a busy cluster made renewals late).
	// An entry goes when this Leaser releases the lease or finds it lost,
	// and, for leases another member renewed or released since, when it
	// is older than the TTL at the next Take: the map holds about the
	// leases this Leaser wrote within a TTL.
	wrote sync.Map // resource → written
	now   func() time.Time
}

// written is a lease record as a Leaser wrote it, and its revision.
type written struct {
	rec Record
	rev uint64
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
	return &Leaser{js: js, kv: kv, ttl: st.TTL(), now: time.Now}, nil
}

// TTL is how long a lease lives without renewal.
func (l *Leaser) TTL() time.Duration { return l.ttl }

// Acquire takes the lease of want.Resource for want.Holder (see Take), or
// fails at once with a *HeldError. The lease is renewed every third of the TTL until Release;
// when renewals fail for two thirds of the TTL the Lease ends with ErrLost
// (before the key can expire, so no one else can hold it yet).
func (l *Leaser) Acquire(ctx context.Context, want Record) (*Lease, error) {
	rec, err := l.Take(ctx, want)
	if err != nil {
		return nil, err
	}
	return Hold(rec, l.ttl, l), nil
}

// Take creates the lease of want.Resource for want.Holder (with its Run
// and Project) and returns its record, with a new Key, without keeping
// it: the caller renews it (Renew) every third of the TTL and releases it
// (Release). It fails with a *HeldError while someone else holds it.
func (l *Leaser) Take(ctx context.Context, want Record) (Record, error) {
	now := l.now()
	l.forget(now)
	resource, holder, run := want.Resource, want.Holder, want.Run
	key := rand.Text()
	rec := Record{Resource: resource, Holder: holder, Run: run, Project: want.Project, Since: now, Renewed: now, KeyHash: HashKey(key)}
	data, _ := json.Marshal(rec)
	k := farm.Key(resource)
	rev, err := l.kv.Create(ctx, k, data)
	if errors.Is(err, jetstream.ErrKeyExists) {
		if e, gerr := l.kv.Get(ctx, k); gerr == nil {
			var cur Record
			if json.Unmarshal(e.Value(), &cur) == nil {
				return Record{}, &HeldError{Record: cur}
			}
		}
		return Record{}, &HeldError{Record: Record{Resource: resource, Holder: "another holder"}}
	}
	if err != nil {
		return Record{}, fmt.Errorf("lease: acquire %s: %w", resource, err)
	}
	// Store the fence in the record, so others can check commands against
	// it. This write restarts the TTL: the holder's clock starts here, not
	// after the audit log below (slow on a busy cluster).
	rec.Fence, rec.Renewed = rev, l.now()
	data, _ = json.Marshal(rec)
	rev2, err := l.kv.Update(ctx, k, data, rev)
	if err != nil {
		l.kv.Delete(context.WithoutCancel(ctx), k, jetstream.LastRevision(rev))
		return Record{}, fmt.Errorf("lease: acquire %s: %w", resource, err)
	}
	l.wrote.Store(resource, written{rec, rev2})
	if err := audit.Log(ctx, l.js, audit.Event{Kind: audit.LeaseAcquired, Actor: holder, Resource: resource, Run: run, Fence: rev}); err != nil {
		l.kv.Delete(context.WithoutCancel(ctx), k, jetstream.LastRevision(rev))
		return Record{}, err
	}
	rec.Key = key
	return rec, nil
}

// Renew keeps the lease rec (its resource, holder and fence) alive. It
// fails with an error wrapping ErrLost when the lease is no longer rec's:
// expired, broken, or taken anew. A lease this Leaser wrote last is
// renewed in one compare-and-swap; any other is read first, so any
// control-plane member (the farm API) may renew a client's lease.
func (l *Leaser) Renew(ctx context.Context, rec Record) error {
	key := farm.Key(rec.Resource)
	if v, ok := l.wrote.Load(rec.Resource); ok {
		w := v.(written)
		if w.rec.Fence == rec.Fence && w.rec.Holder == rec.Holder {
			cur := w.rec
			cur.Renewed = l.now()
			data, _ := json.Marshal(cur)
			rev, err := l.kv.Update(ctx, key, data, w.rev)
			if err == nil {
				l.wrote.CompareAndSwap(rec.Resource, v, written{cur, rev})
				return nil
			}
			if !farm.Conflict(err) {
				return err
			}
			// Someone wrote it since (another member, a break, the
			// expiry's marker): read it.
		}
	}
	for try := 0; ; try++ {
		data, rev, ok, err := farm.LeaderGet(ctx, l.js, farm.BucketLeases, key)
		if err != nil {
			return err
		}
		var cur Record
		if !ok || json.Unmarshal(data, &cur) != nil {
			l.forgetLost(rec)
			return fmt.Errorf("%w: %s is no longer leased", ErrLost, rec.Resource)
		}
		if cur.Fence != rec.Fence || cur.Holder != rec.Holder {
			l.forgetLost(rec)
			return fmt.Errorf("%w: %s is leased by %s now", ErrLost, rec.Resource, cur.Holder)
		}
		cur.Renewed = l.now()
		data, _ = json.Marshal(cur)
		// Update publishes without a per-key TTL; the bucket's TTL restarts
		// with every message, which is what renews the lease.
		rev, err = l.kv.Update(ctx, key, data, rev)
		if err == nil {
			l.wrote.Store(rec.Resource, written{cur, rev})
		}
		if err == nil || !farm.Conflict(err) || try == 2 {
			return err
		}
		// A renewal whose answer came too late (a busy cluster) may have
		// been stored after all: read again.
	}
}

// Release ends the lease rec: it logs the release (or, when lost is
// set, that its holder stopped because it could not keep it) and deletes
// the key if it is still rec's. The release is logged before the key
// goes, so the audit log never shows the next holder first.
func (l *Leaser) Release(ctx context.Context, rec Record, lost error) {
	l.forgetLost(rec)
	if lost != nil {
		audit.Log(ctx, l.js, audit.Event{Kind: audit.LeaseLost, Actor: rec.Holder, Resource: rec.Resource, Run: rec.Run,
			Fence: rec.Fence, Detail: lost.Error()})
		return
	}
	key := farm.Key(rec.Resource)
	data, rev, ok, err := farm.LeaderGet(ctx, l.js, farm.BucketLeases, key)
	var cur Record
	if err != nil || !ok || json.Unmarshal(data, &cur) != nil || cur.Fence != rec.Fence || cur.Holder != rec.Holder {
		return
	}
	audit.Log(ctx, l.js, audit.Event{Kind: audit.LeaseReleased, Actor: rec.Holder, Resource: rec.Resource, Run: rec.Run, Fence: rec.Fence})
	l.kv.Delete(ctx, key, jetstream.LastRevision(rev))
}

// forgetLost drops what this Leaser wrote of lease rec, which is over.
func (l *Leaser) forgetLost(rec Record) {
	if v, ok := l.wrote.Load(rec.Resource); ok && v.(written).rec.Fence == rec.Fence {
		l.wrote.CompareAndDelete(rec.Resource, v)
	}
}

// forget drops what this Leaser wrote more than a TTL before now: those
// leases expired, or another member renewed or released them since, so a
// renewal against that revision would fail anyway.
func (l *Leaser) forget(now time.Time) {
	l.wrote.Range(func(k, v any) bool {
		if now.Sub(v.(written).rec.Renewed) > l.ttl {
			l.wrote.CompareAndDelete(k, v)
		}
		return true
	})
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
// resource, and with ErrBadKey unless key is that lease's key: a host
// calls it before each command it is sent.
func (l *Leaser) Check(ctx context.Context, resource string, fence uint64, key string) error {
	// A replica that lags may not have the lease yet: look again before
	// refusing.
	for try := 0; ; try++ {
		r, ok, err := l.Current(ctx, resource)
		if err != nil {
			return err
		}
		if ok && r.Fence == fence {
			if r.KeyHash == "" || subtle.ConstantTimeCompare([]byte(HashKey(key)), []byte(r.KeyHash)) != 1 {
				return fmt.Errorf("%w: the call on %s does not carry the key of its lease (fence %d): only its holder drives it; lease it yourself", ErrBadKey, resource, fence)
			}
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

// Keeper renews and releases held leases: a Leaser on the lease bucket, or
// the farm API for a client whose token may not write leases itself.
type Keeper interface {
	// Renew keeps rec alive; an error wrapping ErrLost ends the Lease at
	// once, any other is tried again while it is safe.
	Renew(ctx context.Context, rec Record) error
	// Release ends rec; lost is why its holder stopped, or nil.
	Release(ctx context.Context, rec Record, lost error)
}

var _ Keeper = (*Leaser)(nil)

// Lease is a held lease.
type Lease struct {
	k    Keeper
	ttl  time.Duration
	rec  Record
	done chan struct{} // closed when the lease ends
	stop chan struct{} // closed by Release

	mu      sync.Mutex
	renewed time.Time
	err     error
	once    sync.Once
}

// Hold keeps the lease rec (taken with Take) through k, renewing it a
// third of ttl after its last write (rec.Renewed, by this machine's clock:
// a client sets it to when it asked for the lease) and every third of ttl
// after; when renewals fail for two thirds of ttl, the Lease ends with
// ErrLost.
func Hold(rec Record, ttl time.Duration, k Keeper) *Lease {
	s := &Lease{k: k, ttl: ttl, rec: rec, done: make(chan struct{}), stop: make(chan struct{}), renewed: rec.Renewed}
	go s.keep()
	return s
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

// keep renews the lease until Release, and ends it when renewal fails
// for longer than is safe. Each renewal is due a third of the TTL after
// the last one was sent — not a tick of a clock started later — so time
// spent taking the lease or in a slow renewal counts against the TTL as
// it does on the server.
func (s *Lease) keep() {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		s.mu.Lock()
		last := s.renewed
		s.mu.Unlock()
		t.Reset(time.Until(last.Add(s.ttl / 3)))
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		// Keep trying until the lease is two thirds through its TTL; past
		// that, stop before it can expire under a holder still driving.
		deadline := last.Add(2 * s.ttl / 3)
		for {
			start := time.Now()
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			err := s.k.Renew(ctx, s.rec)
			cancel()
			if err == nil {
				s.mu.Lock()
				s.renewed = start
				s.mu.Unlock()
				break
			}
			if errors.Is(err, ErrLost) || !time.Now().Before(deadline) {
				if !errors.Is(err, ErrLost) {
					err = fmt.Errorf("%w: %s: %v", ErrLost, s.rec.Resource, err)
				}
				s.end(err)
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

// Release ends the lease and deletes its key (if it is still ours).
func (s *Lease) Release(ctx context.Context) {
	select {
	case <-s.stop:
		return
	default:
		close(s.stop)
	}
	// A lost lease's holder has stopped driving the resource by now: the
	// keeper says so, so the log shows the next holder after it.
	lost := s.Err()
	s.end(nil)
	s.k.Release(ctx, s.rec, lost)
}
