package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/nats-io/nats.go/jetstream"
)

// Event is one thing that happened in a run, streamed live to the console
// and `apex farm run --follow`: a state change, a finished step, the end.
type Event struct {
	Seq    uint64    `json:"seq,omitempty"` // stream sequence, a resume cursor
	Kind   string    `json:"kind"`          // state, step, end
	Time   time.Time `json:"time"`
	State  string    `json:"state,omitempty"`
	Reason string    `json:"reason,omitempty"`
	Host   string    `json:"host,omitempty"`
	Device string    `json:"device,omitempty"`
	Report string    `json:"report,omitempty"`
	Step   int       `json:"step,omitempty"`
	Steps  int       `json:"steps,omitempty"`
	Name   string    `json:"name,omitempty"`
	Status string    `json:"status,omitempty"`
	Error  string    `json:"error,omitempty"`
}

// Publish appends an event of run id.
func (q *Queue) Publish(ctx context.Context, id string, e Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	data, _ := json.Marshal(e)
	_, err := q.js.Publish(ctx, "events."+id+"."+e.Kind, data)
	return err
}

// Events returns run id's events after stream sequence after (0: from the
// start), at most max of them. When there are none yet it waits up to
// wait for the first; once one came, it returns what follows at once.
// Callers follow a run by asking again with the last event's Seq.
func (q *Queue) Events(ctx context.Context, id string, after uint64, max int, wait time.Duration) ([]Event, error) {
	c, err := q.js.OrderedConsumer(ctx, farm.StreamEvents, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{"events." + id + ".>"}, DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq: after + 1, InactiveThreshold: wait + 5*time.Second})
	if err != nil {
		return nil, fmt.Errorf("queue: events of run %s: %w", id, err)
	}
	it, err := c.Messages(jetstream.PullMaxMessages(max))
	if err != nil {
		return nil, err
	}
	defer it.Stop()
	if info := c.CachedInfo(); info == nil || info.NumPending == 0 {
		// None yet: Stop ends a Next still waiting at the wait's end.
		if wait <= 0 {
			return nil, nil
		}
		t := time.AfterFunc(wait, it.Stop)
		defer t.Stop()
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	var out []Event
	for len(out) < max {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			break // stopped: the wait ended
		}
		var e Event
		if json.Unmarshal(m.Data(), &e) != nil {
			continue
		}
		md, err := m.Metadata()
		if err != nil {
			continue
		}
		e.Seq = md.Sequence.Stream
		out = append(out, e)
		if md.NumPending == 0 {
			break // no more ready: answer now
		}
	}
	return out, nil
}
