package store

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/apexagent/apex/engine"
)

// StepRecorder records the engine's steps as steps of run runID (started
// with StartRun): screenshots, the Scene acted on, the touch, the verdict
// and the timings, whoever ran the step.
func (s *Store) StepRecorder(runID string) engine.Recorder {
	return engine.RecorderFunc(func(ctx context.Context, r *engine.Record) error {
		_, err := s.AddStep(ctx, StepOf(runID, r))
		return err
	})
}

// StepOf is the store's form of an engine step record.
func StepOf(runID string, r *engine.Record) Step {
	st := Step{RunID: runID, Task: r.Task, Name: r.Name, Action: r.Action, Params: r.Params, Status: r.Status,
		Started: r.Started, Duration: r.Duration, DeviceTime: r.DeviceTime, Point: r.Point}
	switch {
	case r.Err != nil:
		st.Error = r.Err.Error()
		if errors.Is(r.Err, context.Canceled) {
			st.Status = StepCanceled
		}
	case r.Skipped != "":
		st.Error = r.Skipped
	}
	if r.Before != nil {
		st.Before = r.Before.PNG
		st.Scene, _ = json.Marshal(r.Before.Scene)
	}
	if r.After != nil {
		st.After = r.After.PNG
	}
	if res := stepResult(r); res != nil {
		st.Result, _ = json.Marshal(res)
	}
	return st
}

// stepResult is what the record's result column holds: what a custom
// step produced, else the element touched and the verdict.
func stepResult(r *engine.Record) any {
	if r.Result != nil && r.Verdict == nil {
		return r.Result
	}
	m := map[string]any{}
	if r.Result != nil {
		m["result"] = r.Result
	}
	if r.Element != nil {
		m["element"] = r.Element
	}
	if r.Verdict != nil {
		m["check"] = r.Expect.String()
		m["pass"] = r.Verdict.Pass
		m["evidence"] = r.Verdict.Evidence
		if r.Verdict.Actual != nil {
			m["actual"] = r.Verdict.Actual
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}
