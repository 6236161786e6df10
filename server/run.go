package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/report"
	"github.com/apexagent/apex/runner"
	"github.com/apexagent/apex/store"
)

// execute starts a task: a goal, a step or an action (ExecuteRequest).
// One task runs at a time: a second gets 409 with the running task's id.
// The answer waits for the task's end and carries its result, record and
// report, unless the request asks for async (202 with the requestId).
func (s *Server) execute(w http.ResponseWriter, r *http.Request) {
	var req ExecuteRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, 0, err)
		return
	}
	dev, err := s.sess.open(false)
	if err != nil {
		writeError(w, 0, err)
		return
	}
	j, err := s.parseJob(req, dev.space)
	if err != nil {
		writeError(w, 0, err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	id := req.RequestID
	if id == "" {
		id = newID()
	}
	t := &task{id: id, job: j, cancel: cancel, done: make(chan struct{}), status: statusRunning, start: s.events.last()}
	if dev, err = s.sess.begin(t); err != nil {
		cancel()
		writeError(w, 0, err)
		return
	}
	if !s.tasks.add(t) {
		s.sess.end(t)
		cancel()
		writeError(w, 0, duplicateID(id))
		return
	}
	s.publishSession()
	// The task keeps the runtime in force when it began; settings that
	// arrive while it runs wait for the next task.
	go s.run(ctx, t, dev, s.models.current())
	if req.Async {
		writeJSON(w, http.StatusAccepted, map[string]any{"requestId": t.id})
		return
	}
	select {
	case <-t.done:
		v := s.withDump(r.Context(), t.view(0))
		if req.Type != "" || req.ReportHTML {
			v = s.withReportHTML(r.Context(), v)
		}
		writeJSON(w, http.StatusOK, v)
	case <-r.Context().Done():
		// The client left; the task goes on (POST /cancel/ID stops it).
	}
}

// run carries out t and frees the session however it ends.
func (s *Server) run(ctx context.Context, t *task, dev sessionDevice, rt agent.AI) {
	status, res, err := "error", any(nil), fmt.Errorf("task %s: the runtime panicked", t.id)
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("task panicked", "task", t.id, "panic", p)
		}
		canceled := ctx.Err() != nil
		t.cancel()
		s.record(t)
		if canceled || status == "error" {
			s.settle(t, dev)
		} else {
			s.sess.end(t)
		}
		// The task shows its end once the session is free for the next.
		t.end(&s.events, status, s.kept(t.recordID(), res), err)
		close(t.done)
		s.publishSession()
	}()
	s.input.Lock()
	defer s.input.Unlock()
	st, serr := s.store()
	if serr != nil {
		err = serr
		return
	}
	if t.job.kind != "goal" {
		status, res, err = s.runScript(ctx, t, dev, st, rt)
		return
	}
	status, res, err = s.runGoal(ctx, t, dev, st, rt)
}

func (s *Server) runGoal(ctx context.Context, t *task, dev sessionDevice, st *store.Store, rt agent.AI) (string, any, error) {
	// Recorded even when cancelled at once: the runtime then ends it as
	// canceled, with its events.
	run, err := st.StartRun(context.WithoutCancel(ctx), store.Run{Name: "playground: " + t.job.title, Device: dev.target.ID, Platform: string(dev.target.Platform)})
	if err != nil {
		return "error", nil, fmt.Errorf("record the task: %w", err)
	}
	t.setRun(run.ID)
	res, err := rt.Act(ctx, agent.Task{Goal: t.job.title, Driver: dev.drv, DeviceID: dev.target.ID, Space: dev.space, Store: st, RunID: run.ID,
		Steps: st.StepRecorder(run.ID)})
	status, reason := agent.RunStatus(res, err)
	if ferr := st.FinishRun(context.WithoutCancel(ctx), run.ID, status, reason); ferr != nil {
		s.log.Warn("finish the record", "run", run.ID, "err", ferr)
	}
	if res == nil {
		return "error", nil, err
	}
	return res.Status, res, err
}

// runScript runs the task's one-step script as apex run would; ai* steps
// reach the runtime.
func (s *Server) runScript(ctx context.Context, t *task, dev sessionDevice, st *store.Store, rt agent.AI) (string, any, error) {
	res, err := runner.Run(ctx, dev.drv, t.job.script, &runner.Options{
		Store: st, Space: dev.space, Device: dev.target.ID, Name: "playground: " + t.job.title, Log: s.log, AI: rt, Perception: s.opts.Perception,
		MaxSteps: s.opts.Limits.TaskSteps,
		OnStep: func(p runner.Progress) {
			t.setRun(p.RunID)
			t.add(&s.events, Progress{Time: time.Now(), Type: "step", Role: "runner", Status: p.Status, Step: p.Step, Text: stepText(p)})
		},
	})
	if res == nil {
		return "error", nil, err
	}
	t.setRun(res.Run.ID)
	out := map[string]any{"status": res.Status, "reason": res.Reason, "outputs": res.Outputs, "steps": res.Steps}
	switch res.Status {
	case store.StatusPassed:
		return agent.Done, out, err
	case store.StatusCanceled:
		return agent.Canceled, out, err
	case store.StatusFailed:
		return agent.Failed, out, cmpErr(err, res.Reason)
	}
	return "error", out, cmpErr(err, res.Reason)
}

func stepText(p runner.Progress) string {
	if p.Error != "" {
		return p.Name + ": " + p.Error
	}
	return p.Name
}

// cmpErr is err, or reason as an error when err is nil.
func cmpErr(err error, reason string) error {
	if err == nil && reason != "" {
		return errors.New(reason)
	}
	return err
}

// record writes the report of t's run.
func (s *Server) record(t *task) {
	t.mu.Lock()
	id := t.runID
	t.mu.Unlock()
	st, err := s.store()
	if id == "" || err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := report.Write(ctx, st, id); err != nil {
		s.log.Warn("write the task's report", "run", id, "err", err)
		return
	}
	t.mu.Lock()
	t.reportURL = "/runs/" + id + "/" + report.FileName
	t.mu.Unlock()
}

// withDump adds an ended task's record to v, read from the store when an
// answer asks for it: the store keeps it, so the server does not (it
// remembers the last hundred tasks, and a record holds every step's Scene).
// A record over Limits.InlineRecord is left out: the answer says where it
// is served.
func (s *Server) withDump(ctx context.Context, v TaskView) TaskView {
	if v.RunID == "" || v.Status == statusRunning {
		return v
	}
	d, err := s.readDump(ctx, v.RunID)
	if err != nil {
		s.log.Warn("read the task's record", "run", v.RunID, "err", err)
		return v
	}
	if b, err := json.Marshal(d); err == nil && len(b) > s.opts.Limits.InlineRecord {
		v.DumpURL = replayURL(v.RunID)
		v.Omitted = append(v.Omitted, fmt.Sprintf("dump: the record is %d bytes, over the %d an answer carries: GET %s", len(b), s.opts.Limits.InlineRecord, v.DumpURL))
		return v
	}
	v.Dump = d
	return v
}

// readDump reads run id's whole record from the store.
func (s *Server) readDump(ctx context.Context, id string) (*Dump, error) {
	st, err := s.store()
	if err != nil {
		return nil, err
	}
	d := &Dump{Steps: []store.Step{}, Events: []event.Event{}}
	var steps []store.Step
	var events []event.Event
	if d.Run, err = st.Run(ctx, id); err == nil {
		steps, err = st.Steps(ctx, id)
	}
	if err == nil {
		events, err = st.RunEvents(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	d.Steps, d.Events = append(d.Steps, steps...), append(d.Events, events...)
	return d, nil
}

// settle follows a task that was cancelled or could not run to its end:
// the session shows recreating while the device link is checked, and the
// device is opened again only when the link is broken. The runtime is
// kept: nothing about it broke.
func (s *Server) settle(t *task, dev sessionDevice) {
	ss := &s.sess
	ss.mu.Lock()
	if ss.running != t || ss.state != StateRunning {
		// Destroyed meanwhile: the session is not ours to settle.
		ss.mu.Unlock()
		s.sess.end(t)
		return
	}
	ss.running, ss.state = nil, StateRecreating
	ss.mu.Unlock()
	s.publishSession()
	ctx, cancel := context.WithTimeout(context.Background(), linkCheckTimeout)
	defer cancel()
	if _, err := dev.drv.Info(ctx); errors.Is(err, device.ErrOffline) {
		s.log.Warn("the device link broke during a task: reopening", "device", dev.target.ID, "err", err)
		_ = s.reopen(ctx)
		return
	}
	ss.mu.Lock()
	if ss.state == StateRecreating {
		ss.state = StateReady
	}
	ss.mu.Unlock()
}

// linkCheckTimeout bounds the check and the reopening of a device link.
const linkCheckTimeout = 20 * time.Second

// scratch is a store in a temporary directory for a server given none, so
// every task still has a record and a report.
type scratch struct {
	once sync.Once
	st   *store.Store
	dir  string
	err  error
}

// store is Options.Store, or the scratch store.
func (s *Server) store() (*store.Store, error) {
	if s.opts.Store != nil {
		return s.opts.Store, nil
	}
	s.scratch.once.Do(func() {
		s.scratch.dir, s.scratch.err = os.MkdirTemp("", "apex-playground-")
		if s.scratch.err == nil {
			s.scratch.st, s.scratch.err = store.Open(s.scratch.dir)
		}
		if s.scratch.err != nil {
			s.scratch.err = fmt.Errorf("a scratch store for the task's record: %w", s.scratch.err)
		}
	})
	return s.scratch.st, s.scratch.err
}

// closeScratch removes the scratch store, if one was made.
func (s *Server) closeScratch() {
	s.scratch.once.Do(func() {}) // no store is made after Close
	if s.scratch.st != nil {
		s.scratch.st.Close()
	}
	if s.scratch.dir != "" {
		os.RemoveAll(s.scratch.dir)
	}
}
