package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/apexagent/apex/event"
)

var _ event.Recorder = (*Store)(nil)

// AddEvent appends an event to its task's stream (store.Store is an
// event.Recorder), assigning an ID when it has none and the time when it
// is zero.
func (s *Store) AddEvent(ctx context.Context, e event.Event) error {
	if e.TaskID == "" {
		return fmt.Errorf("store: add event: task_id is empty")
	}
	if len(e.Payload) > 0 && !json.Valid(e.Payload) {
		return fmt.Errorf("store: add event %q to task %s: payload: not valid JSON", e.ID, e.TaskID)
	}
	if e.Time.IsZero() {
		e.Time = s.now()
	}
	if e.ID == "" {
		e.ID = s.ids.next(e.Time) + "-" + strconv.FormatUint(s.eventSeq.Add(1), 10)
	}
	_, err := s.wdb.ExecContext(ctx, `INSERT INTO events (task_id, event_id, source_role, target_role, timestamp,
		action_type, payload, status, confidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.TaskID, e.ID, e.SourceRole, e.TargetRole, e.Time.UTC().UnixNano(), e.ActionType, nullJSON(e.Payload),
		e.Status, e.Confidence)
	if isUniqueViolation(err) {
		return fmt.Errorf("store: add event to task %s: event_id %q is already recorded", e.TaskID, e.ID)
	}
	if err != nil {
		return fmt.Errorf("store: add event %q to task %s: %w", e.ID, e.TaskID, err)
	}
	return nil
}

// Events returns the events of a task in the order they were added.
func (s *Store) Events(ctx context.Context, taskID string) ([]event.Event, error) {
	return s.events(ctx, "task "+taskID, `task_id = ?`, taskID)
}

// RunEvents returns the events of every task that belongs to a run (task
// IDs of the form RUN-ID/…, as the agent names the tasks of a run's AI
// steps), in the order they were added.
func (s *Store) RunEvents(ctx context.Context, runID string) ([]event.Event, error) {
	// substr, not LIKE: run IDs may hold LIKE's wildcards.
	return s.events(ctx, "run "+runID, `substr(task_id, 1, ?) = ?`, len(runID)+1, runID+"/")
}

func (s *Store) events(ctx context.Context, what, where string, args ...any) ([]event.Event, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT task_id, event_id, source_role, target_role, timestamp, action_type, payload,
		status, confidence FROM events WHERE `+where+` ORDER BY seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: events of %s: %w", what, err)
	}
	defer rows.Close()
	var events []event.Event
	for rows.Next() {
		var e event.Event
		var ts int64
		var payload sql.NullString
		if err := rows.Scan(&e.TaskID, &e.ID, &e.SourceRole, &e.TargetRole, &ts, &e.ActionType, &payload, &e.Status, &e.Confidence); err != nil {
			return nil, fmt.Errorf("store: events of %s: %w", what, err)
		}
		e.Time = time.Unix(0, ts).UTC()
		if payload.Valid {
			e.Payload = json.RawMessage(payload.String)
		}
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: events of %s: %w", what, err)
	}
	return events, nil
}
