package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/host"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/internal/patience"
)

// TestHostBootsSimsForQueuedRuns: a host with --sim 1 --sim-max 3 boots
// more simulated phones while runs wait for its one, serves the runs on
// them, and shuts the extra phones down once they have been idle.
func TestHostBootsSimsForQueuedRuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p := farmtest.Start(ctx, t, 0)
	_, js := p.Conn()
	farmtest.StartHost(ctx, t, js, host.Options{ID: "h1", Sim: 1, SimMax: 3, SimIdle: time.Second, Relist: 100 * time.Millisecond, RunsDir: t.TempDir()})
	reg, err := registry.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	served := func() int {
		hs, _ := reg.Hosts(ctx)
		for _, h := range hs {
			if h.ID == "h1" {
				return h.Devices
			}
		}
		return 0
	}
	waitServed := func(what string, ok func(n int) bool) int {
		t.Helper()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if n := served(); ok(n) {
				return n
			}
			select {
			case <-tick.C:
			case <-ctx.Done():
				t.Fatalf("the host never served %s (now %d phones)", what, served())
			}
		}
	}
	waitServed("its one phone", func(n int) bool { return n == 1 })

	q := farmtest.Queue(ctx, t, p)
	ids := farmtest.SubmitN(ctx, t, q, 6, queue.Run{Name: "wifi.yaml", Script: []byte(wifiOff)})
	most := waitServed("more phones for the queued runs", func(n int) bool { return n > 1 })
	devices := map[string]bool{}
	for _, id := range ids {
		var last queue.Run
		if err := q.Watch(ctx, id, func(r queue.Run) bool { last = r; most = max(most, served()); return !queue.Final(r.State) }); err != nil {
			t.Fatal(err)
		}
		if last.State != queue.Passed {
			t.Errorf("run %s on %s: %s: %s", id, last.Device, last.State, last.Reason)
		}
		devices[last.Device] = true
	}
	if most > 3 {
		t.Errorf("the host served %d phones; want at most --sim-max 3", most)
	}
	if len(devices) < 2 {
		t.Errorf("the runs ran on %v; want the phones booted for them too", devices)
	}
	waitServed("only its own phone once the others idled", func(n int) bool { return n == 1 })
}
