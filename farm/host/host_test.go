package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/apexagent/apex/farm"
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
