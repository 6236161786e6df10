package lease_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/plane"
)

// TestLeaseExclusiveAndFenced: a held device refuses a second holder and
// names the first; a broken lease ends its holder's Lease with ErrLost
// (the holder stops at its next renewal), its fence goes stale, and the
// next holder's fence is higher.
func TestLeaseExclusiveAndFenced(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := plane.Start(ctx, plane.Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Farm: farm.Config{LeaseTTL: 3 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, js := p.Conn()
	ls, err := lease.New(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	const dev = "h1/127.0.0.1:5555" // ':' is not allowed in keys: encoded
	a, err := ls.Acquire(ctx, lease.Record{Resource: dev, Holder: "alice", Run: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ls.Acquire(ctx, lease.Record{Resource: dev, Holder: "bob", Run: "r2"})
	var held *lease.HeldError
	if !errors.As(err, &held) || !errors.Is(err, lease.ErrHeld) || held.Record.Holder != "alice" || held.Record.Fence != a.Fence() {
		t.Fatalf("second acquire: %v (%+v), want held by alice with fence %d", err, held, a.Fence())
	}
	if err := ls.Check(ctx, dev, a.Fence(), a.Record().Key); err != nil {
		t.Errorf("the holder's fence: %v", err)
	}
	if err := ls.Break(ctx, dev, "admin"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatal("the holder of a broken lease was not stopped")
	}
	if !errors.Is(a.Err(), lease.ErrLost) {
		t.Errorf("Err of a broken lease: %v, want ErrLost", a.Err())
	}
	if err := ls.Check(ctx, dev, a.Fence(), a.Record().Key); !errors.Is(err, lease.ErrStaleFence) {
		t.Errorf("the broken lease's fence: %v, want ErrStaleFence", err)
	}
	b, err := ls.Acquire(ctx, lease.Record{Resource: dev, Holder: "bob", Run: "r2"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Fence() <= a.Fence() {
		t.Errorf("fences %d then %d, want them to grow", a.Fence(), b.Fence())
	}
	b.Release(ctx)
	if _, ok, err := ls.Current(ctx, dev); ok || err != nil {
		t.Errorf("after release: held %v, %v", ok, err)
	}
}

// renewals records when a Keeper was asked to renew; each renewal takes
// took.
type renewals struct {
	mu   sync.Mutex
	at   []time.Time
	took time.Duration
}

func (k *renewals) Renew(ctx context.Context, rec lease.Record) error {
	k.mu.Lock()
	k.at = append(k.at, time.Now())
	k.mu.Unlock()
	select {
	case <-time.After(k.took):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (k *renewals) Release(context.Context, lease.Record, error) {}

// TestRenewalsFollowTheLastWrite: a lease is renewed a third of its TTL
// after its last write was sent — the record's Renewed, not when Hold
// started keeping it (taking a lease on a busy cluster spends seconds in
// the audit log after the write that starts its TTL; renewals timed from
// Hold came after the key expired) — and a slow renewal moves the next
// one earlier, not later.
func TestRenewalsFollowTheLastWrite(t *testing.T) {
	const ttl = 30 * time.Second
	tests := []struct {
		name string
		ago  time.Duration // since the lease's last write when Hold starts
		took time.Duration // each renewal's round trip
		want []time.Duration
	}{
		{"held at once", 0, 0, []time.Duration{10 * time.Second, 20 * time.Second}},
		{"taking it took 8s", 8 * time.Second, 0, []time.Duration{2 * time.Second, 12 * time.Second}},
		{"taking it took 15s", 15 * time.Second, 0, []time.Duration{0, 10 * time.Second}},
		{"renewals take 4s", 0, 4 * time.Second, []time.Duration{10 * time.Second, 20 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				k := &renewals{took: tt.took}
				l := lease.Hold(lease.Record{Resource: "d", Renewed: start.Add(-tt.ago)}, ttl, k)
				time.Sleep(tt.want[len(tt.want)-1] + time.Second)
				synctest.Wait()
				l.Release(context.Background())
				time.Sleep(tt.took) // a renewal under way ends
				synctest.Wait()
				k.mu.Lock()
				defer k.mu.Unlock()
				if len(k.at) < len(tt.want) {
					t.Fatalf("renewed at %v, want %v", k.at, tt.want)
				}
				for i, w := range tt.want {
					if got := k.at[i].Sub(start); got != w {
						t.Errorf("renewal %d at %v after Hold, want %v", i+1, got, w)
					}
				}
				if l.Err() != nil {
					t.Errorf("the lease ended: %v", l.Err())
				}
			})
		})
	}
}

// TestRenewIsOneRoundTrip: the Leaser that wrote a lease last renews it
// with one compare-and-swap, without reading it from the bucket's leader
// first; another (a control-plane member renewing for an API client)
// reads it, and after that so does the first, once, to renew it again.
func TestRenewIsOneRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := farmtest.Start(ctx, t, 0)
	nc, _ := p.Conn()
	reads, err := nc.SubscribeSync("$JS.API.STREAM.MSG.GET.KV_" + farm.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	read := func() int {
		t.Helper()
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		n, _, _ := reads.Pending()
		for range n {
			reads.NextMsg(time.Second)
		}
		return n
	}
	// Two control-plane members' Leasers.
	a, b := farmtest.Leases(ctx, t, p), farmtest.Leases(ctx, t, p)
	rec, err := a.Take(ctx, lease.Record{Resource: "h1/d1", Holder: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	read()
	for i, step := range []struct {
		who   *lease.Leaser
		reads bool
	}{{a, false}, {a, false}, {b, true}, {b, false}, {a, true}, {a, false}} {
		if err := step.who.Renew(ctx, rec); err != nil {
			t.Fatalf("renewal %d: %v", i+1, err)
		}
		if n := read(); (n > 0) != step.reads {
			t.Errorf("renewal %d read the lease %d times, want reads=%v", i+1, n, step.reads)
		}
	}
}

// TestWrittenLeasesAreForgotten: what a Leaser keeps of the leases it
// wrote (for one-round-trip renewals) goes when the lease is lost to it,
// and, for a lease another member released, once it is older than the TTL
// — while a lease it keeps renewing stays.
func TestWrittenLeasesAreForgotten(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := farmtest.Start(ctx, t, 0)
	// Two control-plane members' Leasers.
	a, b := farmtest.Leases(ctx, t, p), farmtest.Leases(ctx, t, p)
	var later time.Duration // a's clock runs this far ahead
	lease.SetClock(a, func() time.Time { return time.Now().Add(later) })
	take := func(l *lease.Leaser, resource string) lease.Record {
		t.Helper()
		rec, err := l.Take(ctx, lease.Record{Resource: resource, Holder: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	want := func(step string, n int) {
		t.Helper()
		if got := lease.Written(a); got != n {
			t.Errorf("%s: a keeps %d written leases, want %d", step, got, n)
		}
	}
	d1 := take(a, "h1/d1")
	if err := b.Renew(ctx, d1); err != nil {
		t.Fatal(err)
	}
	b.Release(ctx, d1, nil) // another member ends it: a does not know
	d2 := take(a, "h1/d2")
	want("two taken, one released elsewhere", 2)

	later = a.TTL() * 2 / 3
	if err := a.Renew(ctx, d2); err != nil {
		t.Fatal(err)
	}
	later = a.TTL() * 4 / 3
	take(a, "h1/d3")
	want("a TTL on, after renewing d2", 2) // d1 gone; d2 renewed; d3

	if err := b.Break(ctx, "h1/d2", "admin"); err != nil {
		t.Fatal(err)
	}
	if err := a.Renew(ctx, d2); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("renew a broken lease: %v, want ErrLost", err)
	}
	want("d2 lost", 1)
}
