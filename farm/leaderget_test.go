package farm_test

import (
	"context"
	"testing"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestLeaderGetOutlivesALostRequest: a read from a bucket's leader whose
// first request goes unanswered (lost with a member that died, or sent
// while the dead leader was not yet replaced) or is answered "no leader" is
// sent again, even by a caller whose context has no deadline — hosts and
// the reaper hung there for good when a control-plane member died.
func TestLeaderGetOutlivesALostRequest(t *testing.T) {
	const answer = `{"type":"io.nats.jetstream.api.v1.stream_msg_get_response","message":{"subject":"$KV.b.k","seq":7,"data":"dg==","time":"2026-01-01T00:00:00Z"}}`
	tests := []struct {
		name  string
		first string // "" leaves the first request unanswered
	}{
		{"first request lost", ""},
		{"first answer: no leader", `{"type":"io.nats.jetstream.api.v1.stream_msg_get_response","error":{"code":503,"err_code":10008,"description":"JetStream system temporarily unavailable"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A NATS server without JetStream: only the fake leader below
			// answers the read.
			ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true})
			if err != nil {
				t.Fatal(err)
			}
			ns.Start()
			defer ns.Shutdown()
			if !ns.ReadyForConnections(10 * time.Second) {
				t.Fatal("nats server did not start")
			}
			nc, err := nats.Connect(ns.ClientURL())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			requests := 0
			sub, err := nc.Subscribe("$JS.API.STREAM.MSG.GET.KV_b", func(m *nats.Msg) {
				requests++
				switch {
				case requests > 1:
					m.Respond([]byte(answer))
				case tt.first != "":
					m.Respond([]byte(tt.first))
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()
			nc.Flush()
			js, err := jetstream.New(nc)
			if err != nil {
				t.Fatal(err)
			}
			type result struct {
				data []byte
				rev  uint64
				ok   bool
				err  error
			}
			done := make(chan result, 1)
			go func() {
				data, rev, ok, err := farm.LeaderGet(context.Background(), js, "b", "k")
				done <- result{data, rev, ok, err}
			}()
			select {
			case r := <-done:
				if r.err != nil || !r.ok || string(r.data) != "v" || r.rev != 7 {
					t.Errorf("LeaderGet = %q, %d, %v, %v; want \"v\", 7, true, nil", r.data, r.rev, r.ok, r.err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("LeaderGet without a deadline still waits for an answer to a request that was lost")
			}
		})
	}
}
