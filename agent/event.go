package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/apexagent/apex/event"
)

// bus publishes a task's events in order: to the recorder (when there is one),
// to subscribers, and to the in-memory log the reporter and Replay read.
// Publishing never fails the task: a recorder error is logged and kept.
type bus struct {
	mu      sync.Mutex
	taskID  string
	rec     event.Recorder
	subs    []func(event.Event)
	events  []event.Event
	seq     int
	now     func() time.Time
	log     *slog.Logger
	saveErr error
}

func newBus(taskID string, rec event.Recorder, log *slog.Logger, subs ...func(event.Event)) *bus {
	b := &bus{taskID: taskID, rec: rec, now: time.Now, log: log}
	for _, s := range subs {
		if s != nil {
			b.subs = append(b.subs, s)
		}
	}
	return b
}

// publish records one event. ctx may be cancelled: the event is still
// written, so a cancelled task leaves a consistent record.
func (b *bus) publish(ctx context.Context, src, dst, typ string, payload any, status string, confidence float64) event.Event {
	raw, err := json.Marshal(payload)
	if err != nil {
		raw, _ = json.Marshal(map[string]string{"error": fmt.Sprintf("encode payload: %v", err)})
	}
	b.mu.Lock()
	b.seq++
	e := event.Event{TaskID: b.taskID, ID: fmt.Sprintf("%05d", b.seq), SourceRole: src, TargetRole: dst,
		Time: b.now().UTC(), ActionType: typ, Payload: raw, Status: status, Confidence: confidence}
	b.events = append(b.events, e)
	subs := b.subs
	if b.rec != nil {
		if err := b.rec.AddEvent(context.WithoutCancel(ctx), e); err != nil && b.saveErr == nil {
			b.saveErr = err
			b.log.Error("agent: persist event", "task", b.taskID, "event", e.ID, "err", err)
		}
	}
	b.mu.Unlock()
	for _, s := range subs {
		s(e)
	}
	return e
}

// all returns a copy of the events so far.
func (b *bus) all() []event.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]event.Event(nil), b.events...)
}
