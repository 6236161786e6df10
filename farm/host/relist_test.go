package host_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/host"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/sim/lab"
)

// plugged shows the devices of a real device host (simulated phones over
// the adb protocol) only while they are plugged in.
type plugged struct {
	device.Host
	mu sync.Mutex
	in map[string]bool // serial → plugged in
}

func (p *plugged) plug(serial string, in bool) { p.mu.Lock(); p.in[serial] = in; p.mu.Unlock() }

func (p *plugged) Targets(ctx context.Context) ([]device.Target, error) {
	ts, err := p.Host.Targets(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []device.Target
	for _, t := range ts {
		if p.in[t.Serial] {
			out = append(out, t)
		}
	}
	return out, err
}

// TestHostRelistsDevicesAndPinnedRuns: a host lists its device hosts
// again and again: a phone plugged in later is registered and served (a
// run pinned to it runs there), one unplugged is registered offline and
// takes no runs until plugged in again.
func TestHostRelistsDevicesAndPinnedRuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(4*time.Minute))
	defer cancel()
	p := farmtest.Start(ctx, t, 0)
	_, js := p.Conn()
	l, err := lab.Start(ctx, lab.Options{Android: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var addrs []string
	for _, d := range l.Devices() {
		addrs = append(addrs, d.Addr)
	}
	direct := android.NewDirectHost("adbd", addrs, nil)
	ts, err := direct.Targets(ctx)
	if err != nil || len(ts) != 2 {
		t.Fatalf("the phones: %+v %v", ts, err)
	}
	ph := &plugged{Host: direct, in: map[string]bool{ts[0].Serial: true}}
	farmtest.StartHost(ctx, t, js, host.Options{ID: "h1", Devices: []device.Host{ph}, RunsDir: t.TempDir(), Relist: 100 * time.Millisecond})
	reg, err := registry.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	first, second := device.QualifiedID("h1", ts[0].ID), device.QualifiedID("h1", ts[1].ID)
	// waitStates polls the registry until each device has its state ("":
	// not registered).
	waitStates := func(want map[string]string) {
		t.Helper()
		var got map[string]string
		for ctx.Err() == nil {
			devs, _ := reg.Devices(ctx)
			got = map[string]string{}
			for _, d := range devs {
				got[d.ID] = d.Health.State
			}
			ok := true
			for id, st := range want {
				if got[id] != st {
					ok = false
				}
			}
			if ok {
				return
			}
		}
		t.Fatalf("device states %v, want %v", got, want)
	}
	waitStates(map[string]string{first: "device", second: ""})
	ph.plug(ts[1].Serial, true)
	waitStates(map[string]string{first: "device", second: "device"})

	q := farmtest.Queue(ctx, t, p)
	script := []byte("android:\n  launch: com.apex.settings\ntasks:\n  - name: wifi\n    flow:\n      - tap: Network & internet\n")
	for range 2 {
		r := farmtest.RunToEnd(ctx, t, q, queue.Run{Name: "pinned.yaml", Script: script, Pin: second})
		if r.State != queue.Passed || r.Device != second {
			t.Errorf("a run pinned to %s: %s on %s: %s", second, r.State, r.Device, r.Reason)
		}
	}

	ph.plug(ts[0].Serial, false)
	waitStates(map[string]string{first: "offline", second: "device"})
	for range 2 {
		r := farmtest.RunToEnd(ctx, t, q, queue.Run{Name: "any.yaml", Script: script})
		if r.State != queue.Passed || r.Device != second {
			t.Errorf("a run while %s is unplugged: %s on %s: %s", first, r.State, r.Device, r.Reason)
		}
	}
	ph.plug(ts[0].Serial, true)
	waitStates(map[string]string{first: "device"})
	r := farmtest.RunToEnd(ctx, t, q, queue.Run{Name: "back.yaml", Script: script, Pin: first})
	if r.State != queue.Passed || r.Device != first {
		t.Errorf("a run pinned to %s, plugged in again: %s on %s: %s", first, r.State, r.Device, r.Reason)
	}
}
