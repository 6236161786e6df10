package host_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apexagent/apex/farm/host"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/plane"
	"github.com/apexagent/apex/farm/queue"
)

// BenchmarkFarmLease acquires and releases a lease on a one-member plane:
// leases per second is 1e9 / ns/op.
func BenchmarkFarmLease(b *testing.B) {
	ctx := context.Background()
	p, err := plane.Start(ctx, plane.Options{DataDir: b.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	_, js := p.Conn()
	ls, err := lease.New(ctx, js)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		l, err := ls.Acquire(ctx, lease.Record{Resource: "bench/dev-" + strconv.Itoa(i%20), Holder: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		l.Release(ctx)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leases/s")
}

// BenchmarkFarmSchedule queues runs one after another onto a host with
// four idle simulated phones and reports how long each waited from queued
// to running (p50, p99): the farm's own scheduling latency, without
// waiting for a busy device.
func BenchmarkFarmSchedule(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := plane.Start(ctx, plane.Options{DataDir: b.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	_, js := p.Conn()
	q, err := queue.Open(ctx, js)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- host.Run(ctx, js, host.Options{ID: "h1", Sim: 4, RunsDir: b.TempDir(), Load: load}) }()
	defer func() { cancel(); <-done }()
	var waits []time.Duration
	b.ResetTimer()
	for b.Loop() {
		r, err := q.Submit(ctx, queue.Run{Name: "wifi.yaml", Script: []byte(wifiOff)})
		if err != nil {
			b.Fatal(err)
		}
		var end queue.Run
		if err := q.Watch(ctx, r.ID, func(cur queue.Run) bool { end = cur; return !queue.Final(cur.State) }); err != nil {
			b.Fatal(err)
		}
		if end.State != queue.Passed {
			b.Fatalf("run %s: %s: %s", r.ID, end.State, end.Reason)
		}
		waits = append(waits, end.Started.Sub(end.Queued))
	}
	slices.Sort(waits)
	b.ReportMetric(float64(waits[len(waits)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds())/1000, "p99-ms")
}
