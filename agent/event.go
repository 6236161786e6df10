package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/apexagent/apex/store"
)

// Event is one interaction between roles: {task_id, event_id, source_role,
// target_role, timestamp, action_type, payload, status, confidence}. It is
// the store's event, so what the bus publishes is what the store keeps.
type Event = store.Event

// The roles. Roles talk only through the orchestrator and events.
const (
	RoleOrchestrator = "orchestrator"
	RolePlanner      = "planner"
	RoleObserver     = "observer"
	RoleExecutor     = "executor"
	RoleValidator    = "validator"
	RoleRecovery     = "recovery"
	RoleReporter     = "reporter"
	RoleTracer       = "tracer"
)

// Event types (action_type).
const (
	EvTaskStarted  = "task_started"  // payload: taskInfo
	EvState        = "state"         // payload: {state}; the orchestrator's state machine
	EvPlanRequest  = "plan_request"  // orchestrator → planner: {goal, scene summary, progress}
	EvPlan         = "plan"          // planner → orchestrator: planEvent
	EvObserved     = "observed"      // observer → orchestrator: observation
	EvSkipped      = "step_skipped"  // validator: the expected state already held (idempotency)
	EvActRequest   = "act_request"   // orchestrator → executor: {step, idempotency_key}
	EvActed        = "acted"         // executor → orchestrator: actedEvent
	EvVerdict      = "verdict"       // validator → orchestrator: verdictEvent
	EvSignal       = "signal"        // tracer → orchestrator: Signal
	EvRetry        = "retry"         // recovery → orchestrator: retryEvent
	EvStepSummary  = "step_summary"  // orchestrator: ≤50-char summary replacing the step's log
	EvContext      = "context"       // orchestrator: compressed context every five steps
	EvModelCall    = "model_call"    // a role's model call: usage
	EvTaskFinished = "task_finished" // reporter → orchestrator: finishEvent
)

// Event statuses.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
	StatusReview = "review_required"
	StatusInfo   = "info"
)

// bus publishes a task's events in order: to the store (when there is one),
// to subscribers, and to the in-memory log the reporter and Replay read.
// Publishing never fails the task: a store error is logged and kept.
type bus struct {
	mu      sync.Mutex
	taskID  string
	store   *store.Store
	subs    []func(Event)
	events  []Event
	seq     int
	now     func() time.Time
	log     *slog.Logger
	saveErr error
}

func newBus(taskID string, st *store.Store, log *slog.Logger, subs ...func(Event)) *bus {
	b := &bus{taskID: taskID, store: st, now: time.Now, log: log}
	for _, s := range subs {
		if s != nil {
			b.subs = append(b.subs, s)
		}
	}
	return b
}

// publish records one event. ctx may be cancelled: the event is still
// written, so a cancelled task leaves a consistent record.
func (b *bus) publish(ctx context.Context, src, dst, typ string, payload any, status string, confidence float64) Event {
	raw, err := json.Marshal(payload)
	if err != nil {
		raw, _ = json.Marshal(map[string]string{"error": fmt.Sprintf("encode payload: %v", err)})
	}
	b.mu.Lock()
	b.seq++
	e := Event{TaskID: b.taskID, ID: fmt.Sprintf("%05d", b.seq), SourceRole: src, TargetRole: dst,
		Time: b.now().UTC(), ActionType: typ, Payload: raw, Status: status, Confidence: confidence}
	b.events = append(b.events, e)
	subs := b.subs
	if b.store != nil {
		if err := b.store.AddEvent(context.WithoutCancel(ctx), e); err != nil && b.saveErr == nil {
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
func (b *bus) all() []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Event(nil), b.events...)
}
