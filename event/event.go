// Package event defines the events every interaction between roles, and
// every step, is recorded as: the one record that progress views, reports
// and the store read. It is a leaf: it imports nothing of Apex's, so any
// layer may emit or read events.
package event

import (
	"context"
	"encoding/json"
	"time"
)

// Event is one interaction between roles (DESIGN.md, "Events"). Every
// progress view is a projection of the event stream, so events are kept in
// the order they were added and never rewritten.
type Event struct {
	TaskID     string          `json:"task_id"`
	ID         string          `json:"event_id"` // unique within the task; a Recorder may assign one when empty
	SourceRole string          `json:"source_role"`
	TargetRole string          `json:"target_role"`
	Time       time.Time       `json:"timestamp"` // zero means now
	ActionType string          `json:"action_type"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	Status     string          `json:"status"`
	Confidence float64         `json:"confidence"`
}

// Recorder persists events (the store does). AddEvent appends e to its
// task's stream; an error means it was not kept. A Recorder is safe for
// concurrent use.
type Recorder interface {
	AddEvent(ctx context.Context, e Event) error
}

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
	EvTaskStarted  = "task_started"  // payload: the task (goal, device)
	EvState        = "state"         // payload: {state}; the orchestrator's state machine
	EvPlanRequest  = "plan_request"  // orchestrator → planner: {goal, scene summary, progress}
	EvPlan         = "plan"          // planner → orchestrator: the plan
	EvObserved     = "observed"      // observer → orchestrator: the observation
	EvSkipped      = "step_skipped"  // validator: the expected state already held (idempotency)
	EvActRequest   = "act_request"   // orchestrator → executor: {step, idempotency_key}
	EvActed        = "acted"         // executor → orchestrator: what was done
	EvVerdict      = "verdict"       // validator → orchestrator: the verdict
	EvSignal       = "signal"        // tracer → orchestrator: Signal
	EvRetry        = "retry"         // recovery → orchestrator: the changed strategy
	EvRepeat       = "repeat"        // recovery → orchestrator: whether a step's action may run again, and the evidence
	EvStepSummary  = "step_summary"  // orchestrator: ≤50-char summary replacing the step's log
	EvContext      = "context"       // orchestrator: compressed context every five steps
	EvModelCall    = "model_call"    // a role's model call: usage
	EvTaskFinished = "task_finished" // reporter → orchestrator: how the task ended
)

// Event statuses.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
	StatusReview = "review_required"
	StatusInfo   = "info"
)

// Signal is what the tracer noticed, the payload of EvSignal: found by
// rules only, never by a model.
type Signal struct {
	Kind   string `json:"kind"` // foreground, crash, anr, keyboard, slow
	App    string `json:"app,omitempty"`
	From   string `json:"from,omitempty"` // foreground: the app before
	Detail string `json:"detail,omitempty"`
}

// Signal kinds.
const (
	SigForeground = "foreground"
	SigCrash      = "crash"
	SigANR        = "anr"
	SigKeyboard   = "keyboard"
	SigSlow       = "slow"
)
