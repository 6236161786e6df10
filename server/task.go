package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/store"
)

// keepTasks is how many finished tasks /task-progress still answers for.
const keepTasks = 100

// Progress is one entry of a task's progress as a client shows it: a
// projection of one of the agent's events (or the runner's steps), or the
// task's end. A task's entries are numbered 1, 2, … in the order they
// happened; its end is always the last.
type Progress struct {
	Seq    int       `json:"seq"`
	Time   time.Time `json:"time"`
	Type   string    `json:"type"` // the event's action_type: plan, acted, verdict, step_summary…; end for the task's end
	Role   string    `json:"role"`
	Status string    `json:"status,omitempty"`
	Step   int       `json:"step,omitempty"`
	Text   string    `json:"text,omitempty"`
}

// endType is the Type of a task's last progress entry, its end: Status is
// the task's and Text its error.
const endType = "end"

// TaskView is a task as /execute, /task-progress and /cancel answer it.
type TaskView struct {
	RequestID string `json:"requestId"`
	// Kind is goal, step or action; Goal is the goal, or the step or
	// action as given.
	Kind string `json:"kind"`
	Goal string `json:"goal"`
	// Status is running, then done, failed, review_required or canceled,
	// or error when the task could not run to its end.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Result is the runtime's *agent.Result for a goal, the runner's
	// outcome for a step or an action.
	Result any `json:"result,omitempty"`
	// RunID is the task's run in the store (apex report RUN-ID);
	// Report says where its HTML report is served, once it has ended.
	RunID  string     `json:"runId,omitempty"`
	Report *reportRef `json:"report,omitempty"`
	// ReportHTML is the report itself, one HTML file with its screenshots
	// inside: in the answer of a synchronous /execute that asks for it
	// (ExecuteRequest.ReportHTML, and every Midscene request).
	ReportHTML string `json:"reportHTML,omitempty"`
	// ExecutionDump is the progress as Midscene's client shows it, for a
	// task asked for in Midscene's shape (MidsceneRequest).
	ExecutionDump *ExecutionDump `json:"executionDump,omitempty"`
	// Dump is the task's whole record once it has ended: the run, its
	// steps (with each Scene) and its agent events; past
	// Limits.InlineRecord it is left out and read at DumpURL.
	Dump    *Dump  `json:"dump,omitempty"`
	DumpURL string `json:"dumpUrl,omitempty"`
	// Omitted says what the answer left out for its size, and where to
	// read it.
	Omitted []string `json:"omitted,omitempty"`
	// Progress is the task's progress after the seq asked for; once the
	// task has ended, its last entry is the end (type end).
	Progress []Progress `json:"progress"`
}

// Dump is a task's record, as the store keeps it.
type Dump struct {
	Run    store.Run     `json:"run"`
	Steps  []store.Step  `json:"steps"`
	Events []event.Event `json:"events"`
}

const statusRunning = "running"

// task is one job run in the background.
type task struct {
	id     string
	job    job
	cancel context.CancelFunc
	done   chan struct{} // closed after the session is free again

	// start is the id of the last event published before the task began
	// (GET /tasks?since=).
	start uint64

	mu        sync.Mutex
	status    string
	err       string
	result    any
	progress  []Progress
	runID     string
	reportURL string
}

// add gives p the task's next seq and publishes it, under the task's lock,
// so that every reader (the event stream, /task-progress) has a task's
// entries in seq order, and one who sees the end has seen every entry
// before it. An ended task takes no more.
func (t *task) add(b *broker, p Progress) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status != statusRunning {
		return
	}
	p.Seq = len(t.progress) + 1
	t.progress = append(t.progress, p)
	b.publish(Message{Type: "progress", RequestID: t.id, Progress: &p})
}

// end ends t: its status, result and error, and its end entry after its
// last progress, published as the task message.
func (t *task) end(b *broker, status string, res any, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.status, t.result = status, res
	if err != nil {
		t.err = err.Error()
	}
	p := Progress{Seq: len(t.progress) + 1, Time: time.Now(), Type: endType, Role: "playground", Status: status, Text: t.err}
	t.progress = append(t.progress, p)
	v := t.viewLocked(p.Seq)
	b.publish(Message{Type: "task", RequestID: t.id, Progress: &p, Task: &v})
}

// view is the task with the progress after seq since.
func (t *task) view(since int) TaskView {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.viewLocked(since)
}

func (t *task) viewLocked(since int) TaskView {
	v := TaskView{RequestID: t.id, Kind: t.job.kind, Goal: t.job.title, Status: t.status, Error: t.err, Result: t.result,
		RunID: t.runID, Progress: []Progress{}}
	if t.reportURL != "" {
		v.Report = newReportRef(t.runID, t.reportURL)
	}
	if since < len(t.progress) {
		v.Progress = append(v.Progress, t.progress[max(since, 0):]...)
	}
	if t.job.midscene != "" {
		v.ExecutionDump = t.executionDumpLocked()
		if t.status != statusRunning {
			v.Result = midsceneResult(t.job.midscene, t.status, t.err, t.result)
		}
	}
	return v
}

// recordID is the task's run in the store ("" before it has one).
func (t *task) recordID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.runID
}

func (t *task) setRun(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.runID = id
}

// project summarises an event's payload in one line.
func project(e event.Event) Progress {
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
			p.Text = cutText(s, maxProgressText)
			break
		}
	}
	if e.ActionType == event.EvPlan && p.Text == "" {
		var steps []json.RawMessage
		if json.Unmarshal(pl.Steps, &steps) == nil {
			p.Text = fmt.Sprintf("%d steps", len(steps))
		}
	}
	return p
}

// maxProgressText bounds the text of one progress entry a task keeps.
const maxProgressText = 4 << 10

// cutText is s cut to at most n bytes (on a rune boundary), marked when cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + fmt.Sprintf("… [%d bytes cut]", len(s)-n)
}

// kept is what a finished task keeps of its result for /task-progress:
// never the agent's events (the store has them), and past
// Limits.KeptResult only the status, reason and summary, with where the
// whole record is.
func (s *Server) kept(runID string, res any) any {
	if r, ok := res.(*agent.Result); ok && r != nil {
		c := *r
		c.Events = nil
		res = &c
	}
	b, err := json.Marshal(res)
	if err != nil || len(b) <= s.opts.Limits.KeptResult {
		return res
	}
	var head struct {
		Status  string `json:"status"`
		Reason  string `json:"reason"`
		Summary string `json:"summary"`
	}
	_ = json.Unmarshal(b, &head)
	out := map[string]any{"status": head.Status, "reason": cutText(head.Reason, maxProgressText),
		"summary": cutText(head.Summary, maxProgressText),
		"omitted": fmt.Sprintf("the result is %d bytes, over the %d a task keeps: read the whole record at %s", len(b), s.opts.Limits.KeptResult, replayURL(runID))}
	return out
}

// replayURL is where a run's whole record (Dump) is served.
func replayURL(runID string) string { return "/reports/" + runID + "/replay" }

// taskTable keeps the running task and the last finished ones.
type taskTable struct {
	mu    sync.Mutex
	m     map[string]*task
	order []string
}

// add keeps t, unless its id is taken.
func (tt *taskTable) add(t *task) bool {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.m == nil {
		tt.m = map[string]*task{}
	}
	if _, taken := tt.m[t.id]; taken {
		return false
	}
	tt.m[t.id] = t
	tt.order = append(tt.order, t.id)
	if len(tt.order) > keepTasks {
		delete(tt.m, tt.order[0])
		tt.order = tt.order[1:]
	}
	return true
}

// since lists the kept tasks that began after event id, oldest first.
func (tt *taskTable) since(id uint64) []*task {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	var out []*task
	for _, k := range tt.order {
		if t := tt.m[k]; t.start >= id {
			out = append(out, t)
		}
	}
	return out
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
	return ss.device(), nil
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

// onEvent routes the runtime's events to the running task: one task runs
// at a time, and its events arrive before Act returns.
func (s *Server) onEvent(e event.Event) {
	s.sess.mu.Lock()
	t := s.sess.running
	s.sess.mu.Unlock()
	if t == nil {
		s.log.Debug("event with no task running", "type", e.ActionType)
		return
	}
	t.add(&s.events, project(e))
}

// listTasks answers GET /tasks?since=ID: the tasks kept that began after
// event ID (all kept without since), oldest first, each without its
// progress and result (GET /task-progress/ID has them). A page whose
// event stream resumed past a gap reads what it missed here.
func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) {
	var since uint64
	if q := r.URL.Query().Get("since"); q != "" {
		n, err := strconv.ParseUint(q, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("since=%q: want the id of the last event seen", q))
			return
		}
		since = n
	}
	out := []TaskView{}
	for _, t := range s.tasks.since(since) {
		v := t.view(math.MaxInt)
		v.Result, v.ExecutionDump = nil, nil
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"tasks": out, "lastEventId": s.events.last()})
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
	writeJSON(w, http.StatusOK, s.withDump(r.Context(), t.view(since)))
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
	writeJSON(w, http.StatusOK, s.withDump(r.Context(), t.view(0)))
}
