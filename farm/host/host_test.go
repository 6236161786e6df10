package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/audit"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/remote"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/script"
)

// wifiOff fails on a phone that kept the previous run's leftovers.
const wifiOff = farmtest.WifiOff

func load(data []byte, name string) (*script.Script, error) { return script.Load(data, name, nil) }

// TestRunsPassOnCleanPhones: runs queued on a one-member plane are pulled
// by a host with two simulated phones; every run passes, which needs a
// freshly reset phone each time.
func TestRunsPassOnCleanPhones(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p := farmtest.Start(ctx, t, 2)
	q := farmtest.Queue(ctx, t, p)
	ids := farmtest.SubmitN(ctx, t, q, 6, queue.Run{Name: "wifi.yaml", Script: []byte(wifiOff)})
	for _, id := range ids {
		if last := farmtest.WaitRun(ctx, t, q, id, nil); last.State != queue.Passed {
			t.Errorf("run %s on %s: %s: %s", id, last.Device, last.State, last.Reason)
		}
	}
}

// TestAuditShowsEachLeaseOnce: every run leaves one acquisition and one
// release of its device in the audit log.
func TestAuditShowsEachLeaseOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := farmtest.Start(ctx, t, 1)
	_, js := p.Conn()
	farmtest.RunToEnd(ctx, t, farmtest.Queue(ctx, t, p), queue.Run{Name: "wifi.yaml", Script: []byte(wifiOff)})
	// The release is logged after the final state; wait for it.
	var kinds []string
	for ctx.Err() == nil {
		events, err := audit.Read(ctx, js)
		if err != nil {
			t.Fatal(err)
		}
		kinds = kinds[:0]
		for _, e := range events {
			if e.Resource == "h1/sim-1" && strings.HasPrefix(e.Kind, "lease.") {
				kinds = append(kinds, e.Kind)
			}
		}
		if len(kinds) == 2 {
			break
		}
	}
	if diff := cmp.Diff([]string{audit.LeaseAcquired, audit.LeaseReleased}, kinds); diff != "" {
		t.Errorf("lease events of h1/sim-1 (-want +got):\n%s", diff)
	}
}

// TestRemoteDriverFenced: a face elsewhere drives a farm device through
// its host with its lease's fence and key; once the lease is broken and
// taken by someone else, the host refuses the old fence and obeys the new
// one; someone who learned the new fence but not the key is refused.
func TestRemoteDriverFenced(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := farmtest.Start(ctx, t, 1)
	nc, _ := p.Conn()
	ls := farmtest.Leases(ctx, t, p)
	const id = "h1/sim-1"
	first, err := ls.Acquire(ctx, lease.Record{Resource: id, Holder: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	old := remote.NewDriver(nc, id, first.Record())
	// The host registers its devices before it answers: wait for it.
	var info device.Info
	for {
		info, err = old.Info(ctx)
		if !errors.Is(err, device.ErrOffline) || ctx.Err() != nil {
			break
		}
		farm.Sleep(ctx, 50*time.Millisecond)
	}
	if err != nil || info.Width == 0 {
		t.Fatalf("Info through the host: %+v, %v", info, err)
	}
	if err := old.LaunchApp(ctx, "com.apex.settings"); err != nil {
		t.Fatal(err)
	}
	if err := ls.Break(ctx, id, "admin"); err != nil {
		t.Fatal(err)
	}
	second, err := ls.Acquire(ctx, lease.Record{Resource: id, Holder: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Release(ctx)
	if err := old.Tap(ctx, device.Point{X: 10, Y: 10}); !errors.Is(err, lease.ErrStaleFence) {
		t.Errorf("a tap with the broken lease's fence: %v, want ErrStaleFence", err)
	}
	for _, key := range []string{"", first.Record().Key, "guess"} {
		thief := remote.NewDriver(nc, id, lease.Record{Fence: second.Fence(), Key: key})
		if err := thief.Tap(ctx, device.Point{X: 10, Y: 10}); !errors.Is(err, lease.ErrBadKey) {
			t.Errorf("a tap with the current fence and key %q: %v, want ErrBadKey", key, err)
		}
	}
	cur := remote.NewDriver(nc, id, second.Record())
	if app, err := cur.ForegroundApp(ctx); err != nil || app == "" {
		t.Errorf("the new holder's call: %q, %v", app, err)
	}
}
