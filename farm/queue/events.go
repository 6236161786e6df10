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

// Follow replays run id's events from the start and then tails them,
// calling fn with each until fn returns false or ctx ends.
func (q *Queue) Follow(ctx context.Context, id string, fn func(Event) bool) error {
	c, err := q.js.OrderedConsumer(ctx, farm.StreamEvents, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{"events." + id + ".>"}, DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return fmt.Errorf("queue: follow run %s: %w", id, err)
	}
	it, err := c.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		var e Event
		if json.Unmarshal(m.Data(), &e) != nil {
			continue
		}
		if md, err := m.Metadata(); err == nil {
			e.Seq = md.Sequence.Stream
		}
		if !fn(e) {
			return nil
		}
	}
}
