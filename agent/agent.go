// Package agent is Apex's AI runtime: role-split agents (orchestrator,
// planner, observer, executor, validator, recovery, reporter, tracer) that
// talk only through recorded events, with an offline rule planner for a
// controlled language, a replay cache and hard rules on retries.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/perceive"
)

// Config configures a Runtime. The zero value runs offline: the rule
// planner, rule-based executor and validator.
type Config struct {
	// LLM configures the roles' models (llm.LoadConfig); nil or
	// unconfigured means offline: the rule planner, rule executor and
	// rule validator.
	LLM *llm.Config
	// Models, when set, gives the roles' clients instead of LLM (tests,
	// embedders with their own clients).
	Models Models
	Log    *slog.Logger
	// OnEvent sees every event of every task, in order, from the
	// goroutine running the task.
	OnEvent func(event.Event)
	// Cache is the replay cache; nil keeps one in memory only (per Runtime).
	Cache *Cache
	// Perception is how tasks observe the screen: when OCR reads pixels
	// (stale tree after an action, system windows only, text in pixels),
	// the OCR engine (nil starts a Tesseract in a task on first need, when
	// it is installed), Scene options, settle and poll timing.
	Perception perceive.Options
	// CheckTimeout is how long an expected state is re-checked before the
	// step counts as failed (default 2s); WaitTimeout bounds wait steps (10s).
	CheckTimeout, WaitTimeout time.Duration
	// MaxReplans bounds re-planning per task (default 1; negative: none).
	MaxReplans int
}

// Runtime runs tasks. It is safe for concurrent use; each task has its own
// state machine and event stream.
type Runtime struct {
	cfg   Config
	log   *slog.Logger
	cache *Cache
}

// Task is one goal on one device.
type Task struct {
	Goal     string
	Driver   device.Driver
	DeviceID string
	// Space is the action space; nil picks action.ForPlatform of the device.
	Space *action.Space
	// Store records the task's events (nil: in memory only); store.Store
	// is one.
	Store event.Recorder
	// Steps records every step the task runs on the device, with its
	// screenshots, Scene, target and verdict (store.StepRecorder of the
	// run); nil records none.
	Steps engine.Recorder
	// RunID ties the task to a run of the store; its task IDs start with it.
	RunID string
}

// Result is how a task ended, rebuilt from its events by Replay.
type Result struct {
	TaskID  string `json:"task_id"`
	Goal    string `json:"goal"`
	Status  string `json:"status"` // done, failed, review_required, canceled
	Reason  string `json:"reason,omitempty"`
	Summary string `json:"summary"`
	// State is the orchestrator's last state (DONE, FAILED, STEP_3_RETRYING…).
	State   string        `json:"state"`
	Plan    []Step        `json:"plan"`
	Steps   []StepResult  `json:"steps"`
	Replans int           `json:"replans"`
	Events  []event.Event `json:"-"`
	Usage   llm.Usage     `json:"usage"`
	// ModelCalls and MaxPromptTokens account the task's model use.
	ModelCalls      int           `json:"model_calls"`
	MaxPromptTokens int           `json:"max_prompt_tokens"`
	Duration        time.Duration `json:"duration"`
}

// New returns a Runtime.
func New(cfg Config) (*Runtime, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	cfg.Perception.Timing = cfg.Perception.Timing.WithDefaults()
	def(&cfg.CheckTimeout, 2*time.Second)
	def(&cfg.WaitTimeout, 10*time.Second)
	switch {
	case cfg.MaxReplans == 0:
		cfg.MaxReplans = 1
	case cfg.MaxReplans < 0:
		cfg.MaxReplans = 0
	}
	rt := &Runtime{cfg: cfg, log: cfg.Log, cache: cfg.Cache}
	if rt.cache == nil {
		rt.cache = &Cache{entries: map[string]CacheEntry{}}
	}
	return rt, nil
}

// Offline reports whether the runtime has no model.
func (rt *Runtime) Offline() bool { return !configured(rt.models()) }

// models is where the roles' clients come from: Models, else LLM.
func (rt *Runtime) models() Models {
	if rt.cfg.Models != nil {
		return rt.cfg.Models
	}
	if rt.cfg.LLM == nil {
		return nil
	}
	return rt.cfg.LLM
}

// session is what every kind of task shares: its ID, bus, observer and the
// roles' models.
type session struct {
	id    string
	bus   *bus
	obs   *observer
	space *action.Space
	usage llm.Usage
	maxP  int
	mu    sync.Mutex
}

func (rt *Runtime) session(ctx context.Context, t Task, kind string) (*session, error) {
	if t.Driver == nil {
		return nil, errors.New("agent: the task has no device (Task.Driver)")
	}
	space := t.Space
	if space == nil {
		info, err := t.Driver.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("agent: read device info: %w", err)
		}
		space = action.ForPlatform(info.Platform)
	}
	id := newTaskID(t.RunID, kind)
	steps := engine.New(t.Driver, &engine.Options{Space: space, Perception: rt.cfg.Perception, ExpectTimeout: rt.cfg.CheckTimeout,
		Recorder: t.Steps, Log: rt.log})
	s := &session{id: id, space: space, bus: newBus(id, t.Store, rt.log, rt.cfg.OnEvent),
		obs: &observer{s: steps, task: truncate(t.Goal, 80)}}
	return s, nil
}

// model returns role's model on the session's bus, or nil offline or when
// the role's tier is rules (it then works as it does offline).
func (rt *Runtime) model(s *session, role string) (*roleModel, error) {
	if !configured(rt.models()) {
		return nil, nil
	}
	c, err := rt.models().Client(role)
	if errors.Is(err, llm.ErrRulesOnly) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agent: %s model: %w", role, err)
	}
	return &roleModel{role: role, c: c, bus: s.bus, mu: &s.mu, usage: &s.usage, maxPrompt: &s.maxP,
		sees: llm.SeesImages(c), obs: s.obs}, nil
}

func newTaskID(runID, kind string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	id := kind + "-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
	if runID != "" {
		return runID + "/" + id
	}
	return id
}

type taskInfo struct {
	Goal    string `json:"goal"`
	Kind    string `json:"kind"` // act, assert, query
	Device  string `json:"device,omitempty"`
	RunID   string `json:"run_id,omitempty"`
	Offline bool   `json:"offline"`
}

// Act runs a goal to its end. The error is for a task that could not
// start (no device) or be planned: a goal outside the controlled language
// with no model configured wraps ErrNeedsModel and an *UnderstandError.
// How a task that ran ended is in Result.Status.
func (rt *Runtime) Act(ctx context.Context, t Task) (*Result, error) {
	s, err := rt.session(ctx, t, "act")
	if err != nil {
		return nil, err
	}
	defer s.obs.s.Close()
	o := &orchestrator{rt: rt, task: t, id: s.id, bus: s.bus, obs: s.obs, trc: newTracer(t.Driver),
		runs: map[string]int{}, failedAt: map[string]string{}, started: time.Now()}
	pm, err := rt.model(s, event.RolePlanner)
	if err != nil {
		return nil, err
	}
	em, err := rt.model(s, event.RoleExecutor)
	if err != nil {
		return nil, err
	}
	if o.judge, err = rt.model(s, event.RoleValidator); err != nil {
		return nil, err
	}
	o.planner = &planner{model: pm, space: s.space}
	o.exec = &executor{space: s.space, obs: s.obs, model: em, cache: rt.cache, bus: s.bus}
	s.bus.publish(ctx, event.RoleOrchestrator, event.RoleOrchestrator, event.EvTaskStarted,
		taskInfo{Goal: t.Goal, Kind: "act", Device: t.DeviceID, RunID: t.RunID, Offline: rt.Offline()}, event.StatusInfo, 0)
	status, reason := o.run(ctx)
	res := rt.finish(ctx, s, status, reason)
	if errors.Is(o.planErr, ErrNeedsModel) {
		return res, fmt.Errorf("agent: %w", o.planErr)
	}
	return res, nil
}

// finish has the reporter summarise the task from its events and publish
// the end.
func (rt *Runtime) finish(ctx context.Context, s *session, status, reason string) *Result {
	summary := report(s.bus.all(), s.space, status, reason)
	s.bus.publish(ctx, event.RoleReporter, event.RoleOrchestrator, event.EvTaskFinished,
		finishEvent{Status: status, Reason: reason, Summary: summary}, statusOf(status), 0)
	res, err := replay(s.bus.all(), s.space)
	if err != nil {
		// Replay reads what publish wrote; failing here is a bug.
		rt.log.Error("agent: replay own events", "task", s.id, "err", err)
		return &Result{TaskID: s.id, Status: status, Reason: reason, Summary: summary}
	}
	return res
}

func statusOf(taskStatus string) string {
	switch taskStatus {
	case Done:
		return event.StatusOK
	case ReviewRequired:
		return event.StatusReview
	}
	return event.StatusFailed
}
