package host_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/audit"
	"github.com/apexagent/apex/farm/host"
	"github.com/apexagent/apex/farm/plane"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/script"
)

// wifiOff passes only on a phone whose Settings start as the spec says
// (Wi-Fi on): a run that saw the previous run's leftovers would fail.
const wifiOff = `sim:
  launch: com.apex.settings
tasks:
  - name: wifi off
    flow:
      - tap: Network & internet
      - assert: {checked: {id: wifi}}
      - tap: {id: wifi}
      - assert: {notChecked: {id: wifi}}
`

func load(data []byte, name string) (*script.Script, error) { return script.Load(data, name, nil) }

// TestRunsPassOnCleanPhones: runs queued on a one-member plane are pulled
// by a host with two simulated phones; every run passes, which needs a
// freshly reset phone each time.
func TestRunsPassOnCleanPhones(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := plane.Start(ctx, plane.Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0",
		Farm: farm.Config{LeaseTTL: 2 * time.Second, HeartbeatTTL: 3 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, js := p.Conn()
	q, err := queue.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	hctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- host.Run(hctx, js, host.Options{ID: "h1", Sim: 2, RunsDir: t.TempDir(), Load: load}) }()
	defer func() { stop(); <-done }()
	var ids []string
	for range 6 {
		r, err := q.Submit(ctx, queue.Run{Name: "wifi.yaml", Script: []byte(wifiOff)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	for _, id := range ids {
		var last queue.Run
		err := q.Watch(ctx, id, func(r queue.Run) bool { last = r; return !queue.Final(r.State) })
		if err != nil {
			t.Fatalf("run %s: %v (last %+v)", id, err, last)
		}
		if last.State != queue.Passed {
			t.Errorf("run %s on %s: %s: %s", id, last.Device, last.State, last.Reason)
		}
	}
}

// TestAuditShowsEachLeaseOnce: every run leaves one acquisition and one
// release of its device in the audit log.
func TestAuditShowsEachLeaseOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := plane.Start(ctx, plane.Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, js := p.Conn()
	q, err := queue.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	hctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- host.Run(hctx, js, host.Options{ID: "h1", Sim: 1, RunsDir: t.TempDir(), Load: load}) }()
	defer func() { stop(); <-done }()
	r, err := q.Submit(ctx, queue.Run{Name: "wifi.yaml", Script: []byte(wifiOff)})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Watch(ctx, r.ID, func(r queue.Run) bool { return !queue.Final(r.State) }); err != nil {
		t.Fatal(err)
	}
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
