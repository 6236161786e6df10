package lease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apexagent/apex/farm"
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
