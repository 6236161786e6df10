package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/store"
)

// keepTasks is how many finished tasks /task-progress still answers for.
const keepTasks = 100

// Progress is one event of a task as a client shows it: a projection of
// the agent's event, not the event itself.
type Progress struct {
	Seq    int       `json:"seq"`
	Time   time.Time `json:"time"`
	Type   string    `json:"type"` // the event's action_type: plan, acted, verdict, step_summary…
	Role   string    `json:"role"`
	Status string    `json:"status,omitempty"`
	Step   int       `json:"step,omitempty"`
	Text   string    `json:"text,omitempty"`
}

// TaskView is a task as /task-progress and /cancel answer it.
type TaskView struct {
	RequestID string `json:"requestId"`
	Goal      string `json:"goal"`
	// Status is running, then the agent's done, failed, review_required
	// or canceled, or error when the task could not run at all.
	Status string        `json:"status"`
	Error  string        `json:"error,omitempty"`
	Result *agent.Result `json:"result,omitempty"`
	// RunID is the task's run in the store (apex report RUN-ID).
	RunID    string     `json:"runId,omitempty"`
	Progress []Progress `json:"progress"`
}

const statusRunning = "running"

// task is one goal run in the background.
type task struct {
	id, goal string
	cancel   context.CancelFunc
	done     chan struct{} // closed after the session is free again

	mu       sync.Mutex
	status   string
	err      string
	result   *agent.Result
	progress []Progress
	runID    string
}

func (t *task) add(e agent.Event) Progress {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := project(e)
	p.Seq = len(t.progress) + 1
	t.progress = append(t.progress, p)
	return p
}

// view is the task with the progress after seq since.
func (t *task) view(since int) TaskView {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := TaskView{RequestID: t.id, Goal: t.goal, Status: t.status, Error: t.err, Result: t.result, RunID: t.runID, Progress: []Progress{}}
	if since < len(t.progress) {
		v.Progress = append(v.Progress, t.progress[max(since, 0):]...)
	}
	return v
}

func (t *task) finish(res *agent.Result, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.result = res
	t.status = "error"
	if res != nil {
		t.status = res.Status
	}
	if err != nil {
		t.err = err.Error()
	}
}

// project summarises an event's payload in one line.
func project(e agent.Event) Progress {
	p := Progress{Time: e.Time, Type: e.ActionType, Role: e.SourceRole, Status: e.Status}
	var pl struct {
		Step    int             `json:"step_id"`
		Steps   json.RawMessage `json:"steps"`
		Summary string          `json:"summary"`
		State   string          `json:"state"`
		Reason  string          `json:"reason"`
		Error   string          `json:"error"`
		Goal    string          `json:"goal"`
	}
	_ = json.Unmarshal(e.Payload, &pl)
	p.Step = pl.Step
	for _, s := range []string{pl.Summary, pl.Error, pl.Reason, pl.State, pl.Goal} {
		if s != "" {
			p.Text = s
			break
		}
	}
	if e.ActionType == agent.EvPlan && p.Text == "" {
		var steps []json.RawMessage
		if json.Unmarshal(pl.Steps, &steps) == nil {
			p.Text = fmt.Sprintf("%d steps", len(steps))
		}
	}
	return p
}

// taskTable keeps the running task and the last finished ones.
type taskTable struct {
	mu    sync.Mutex
	m     map[string]*task
	order []string
}

func (tt *taskTable) add(t *task) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.m == nil {
		tt.m = map[string]*task{}
	}
	tt.m[t.id] = t
	tt.order = append(tt.order, t.id)
	if len(tt.order) > keepTasks {
		delete(tt.m, tt.order[0])
		tt.order = tt.order[1:]
	}
}

func (tt *taskTable) get(id string) *task {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.m[id]
}

// begin makes t the session's running task.
func (ss *session) begin(t *task) (sessionDevice, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case ss.state == StateRunning:
		return sessionDevice{}, runningError(ss.running)
	case ss.state != StateReady:
		return sessionDevice{}, errNoSession
	}
	ss.state, ss.running = StateRunning, t
	return sessionDevice{ss.drv, ss.target, ss.space}, nil
}

// end frees the session of t, whatever became of it.
func (ss *session) end(t *task) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.running != t {
		return
	}
	ss.running = nil
	if ss.state == StateRunning {
		ss.state = StateReady
	}
}

func (s *Server) execute(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Goal  string `json:"goal"`
		Async bool   `json:"async"`
	}
	if err := readJSON(r, &body); err != nil {
		writeError(w, 0, err)
		return
	}
	if strings.TrimSpace(body.Goal) == "" {
		writeError(w, http.StatusBadRequest, fmt.Errorf(`say what to do: {"goal": "tap \"Settings\""}`))
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &task{id: newID(), goal: body.Goal, cancel: cancel, done: make(chan struct{}), status: statusRunning}
	dev, err := s.sess.begin(t)
	if err != nil {
		cancel()
		writeError(w, 0, err)
		return
	}
	s.tasks.add(t)
	s.publishSession()
	go s.run(ctx, t, dev)
	writeJSON(w, http.StatusAccepted, map[string]any{"requestId": t.id})
}

// run carries out t and frees the session however it ends.
func (s *Server) run(ctx context.Context, t *task, dev sessionDevice) {
	var res *agent.Result
	err := fmt.Errorf("task %s: the runtime panicked", t.id)
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("task panicked", "task", t.id, "panic", p)
		}
		t.cancel()
		t.finish(res, err)
		s.sess.end(t)
		close(t.done)
		v := t.view(1 << 30)
		s.events.publish(Message{Type: "task", RequestID: t.id, Task: &v})
		s.publishSession()
	}()
	s.input.Lock()
	defer s.input.Unlock()
	at := agent.Task{Goal: t.goal, Driver: dev.drv, DeviceID: dev.target.ID, Space: dev.space, Store: s.opts.Store}
	if st := s.opts.Store; st != nil {
		run, rerr := st.StartRun(ctx, store.Run{Name: "playground: " + t.goal, Device: dev.target.ID})
		if rerr != nil {
			err = fmt.Errorf("record the task: %w", rerr)
			return
		}
		at.RunID = run.ID
		t.mu.Lock()
		t.runID = run.ID
		t.mu.Unlock()
		defer func() {
			status, reason := runStatus(res, err)
			if ferr := st.FinishRun(context.WithoutCancel(ctx), run.ID, status, reason); ferr != nil {
				s.log.Warn("finish the record", "run", run.ID, "err", ferr)
			}
		}()
	}
	res, err = s.models.current().Act(ctx, at)
}

// runStatus is the run record's status for how a task ended.
func runStatus(res *agent.Result, err error) (string, string) {
	switch {
	case res == nil && err != nil:
		return store.StatusError, err.Error()
	case res == nil:
		return store.StatusError, "the runtime panicked"
	case res.Status == agent.Done:
		return store.StatusPassed, ""
	case res.Status == agent.Canceled:
		return store.StatusCanceled, res.Reason
	}
	return store.StatusFailed, res.Reason
}

// onEvent routes the runtime's events to the running task: one task runs
// at a time, and its events arrive before Act returns.
func (s *Server) onEvent(e agent.Event) {
	s.sess.mu.Lock()
	t := s.sess.running
	s.sess.mu.Unlock()
	if t == nil {
		s.log.Debug("event with no task running", "type", e.ActionType)
		return
	}
	p := t.add(e)
	s.events.publish(Message{Type: "progress", RequestID: t.id, Progress: &p})
}

func (s *Server) taskProgress(w http.ResponseWriter, r *http.Request) {
	t := s.tasks.get(r.PathValue("id"))
	if t == nil {
		writeError(w, http.StatusNotFound, fmt.Errorf("no task %q", r.PathValue("id")))
		return
	}
	since := 0
	if q := r.URL.Query().Get("since"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("since=%q: want the seq of the last progress seen", q))
			return
		}
		since = n
	}
	writeJSON(w, http.StatusOK, t.view(since))
}

// cancel cancels a running task and answers once it has ended, so the next
// execute can start at once.
func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	t := s.tasks.get(r.PathValue("id"))
	if t == nil {
		writeError(w, http.StatusNotFound, fmt.Errorf("no task %q", r.PathValue("id")))
		return
	}
	select {
	case <-t.done:
		v := t.view(1 << 30)
		writeError(w, 0, &apiError{code: http.StatusConflict, err: fmt.Errorf("task %s already ended: %s", t.id, v.Status),
			fields: map[string]any{"requestId": t.id, "status": v.Status}})
		return
	default:
	}
	t.cancel()
	select {
	case <-t.done:
	case <-r.Context().Done():
		return
	}
	writeJSON(w, http.StatusOK, t.view(0))
}
