package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apexagent/apex/device"
)

// Step statuses.
const (
	StepPassed  = "passed"
	StepFailed  = "failed"
	StepSkipped = "skipped"
	// StepCanceled is a step the run's cancellation (Ctrl-C) stopped
	// while it ran: it did not fail.
	StepCanceled = "canceled"
)

// Step is one step of a run: what was done, what the screen looked like
// before and after, and how long it took.
type Step struct {
	RunID string `json:"run_id"`
	// Index numbers the steps of a run from 1. AddStep assigns the next
	// number when Index is 0; an explicit Index must be unused in the run.
	Index  int             `json:"index"`
	Task   string          `json:"task,omitempty"` // the script task the step belongs to
	Name   string          `json:"name,omitempty"` // the step as the script wrote it
	Action string          `json:"action,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Status string          `json:"status"` // passed|failed|skipped
	Error  string          `json:"error,omitempty"`

	Started    time.Time     `json:"started"`
	Duration   time.Duration `json:"duration"`    // nanoseconds, wall time of the whole step
	DeviceTime time.Duration `json:"device_time"` // nanoseconds spent waiting on the device
	Point      *device.Point `json:"point,omitempty"`

	// Before and After are PNG screenshots. AddStep writes them as files;
	// Steps leaves them nil and fills BeforePath and AfterPath instead.
	Before []byte `json:"-"`
	After  []byte `json:"-"`
	// Scene is the Scene the step saw (JSON). AddStep writes it as a file;
	// Steps reads it back.
	Scene  json.RawMessage `json:"scene,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`

	// Paths of the step's files relative to Run.Dir, filled by the store
	// ("" when the step has no such file).
	BeforePath string `json:"before_path,omitempty"`
	AfterPath  string `json:"after_path,omitempty"`
	ScenePath  string `json:"scene_path,omitempty"`
}

// JSONPath is the file holding the whole step record, relative to Run.Dir.
func (st Step) JSONPath() string { return fmt.Sprintf("steps/%04d.json", st.Index) }

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

func (st *Step) validate() error {
	if err := checkID(st.RunID); err != nil {
		return err
	}
	switch st.Status {
	case StepPassed, StepFailed, StepSkipped, StepCanceled:
	default:
		return fmt.Errorf("status %q: use passed, failed, skipped or canceled", st.Status)
	}
	if st.Index < 0 {
		return fmt.Errorf("index %d: use 0 (next) or a positive number", st.Index)
	}
	for _, f := range []struct {
		name string
		v    json.RawMessage
	}{{"params", st.Params}, {"scene", st.Scene}, {"result", st.Result}} {
		if len(f.v) > 0 && !json.Valid(f.v) {
			return fmt.Errorf("%s: not valid JSON", f.name)
		}
	}
	for _, f := range []struct {
		name string
		v    []byte
	}{{"before", st.Before}, {"after", st.After}} {
		if len(f.v) > 0 && !bytes.HasPrefix(f.v, pngMagic) {
			return fmt.Errorf("%s screenshot: not a PNG image", f.name)
		}
	}
	return nil
}

// AddStep records a step of a running run: its screenshots, Scene and full
// JSON record as files under the run's steps/ directory first, then its row
// in the database. It returns the step with Index and the paths filled.
func (s *Store) AddStep(ctx context.Context, st Step) (Step, error) {
	if err := st.validate(); err != nil {
		return Step{}, fmt.Errorf("store: add step to run %s: %w", st.RunID, err)
	}
	if st.Started.IsZero() {
		st.Started = s.now()
	}
	st.Started = st.Started.UTC()
	if st.Index == 0 {
		if _, err := os.Stat(filepath.Join(s.RunDir(st.RunID), "steps")); err != nil {
			return Step{}, fmt.Errorf("store: add step to run %s: %w (start the run with StartRun first)", st.RunID, ErrNotFound)
		}
		idx, err := s.nextIndex(ctx, st.RunID)
		if err != nil {
			return Step{}, err
		}
		st.Index = idx
	}
	dir := s.RunDir(st.RunID)
	if _, err := os.Stat(filepath.Join(dir, "steps")); err != nil {
		return Step{}, fmt.Errorf("store: add step to run %s: %w (start the run with StartRun first)", st.RunID, ErrNotFound)
	}
	base := fmt.Sprintf("steps/%04d", st.Index)
	files := []struct {
		data []byte
		path *string
		name string
	}{
		{st.Before, &st.BeforePath, base + "-before.png"},
		{st.After, &st.AfterPath, base + "-after.png"},
		{st.Scene, &st.ScenePath, base + "-scene.json"},
	}
	for _, f := range files {
		*f.path = ""
		if len(f.data) == 0 {
			continue
		}
		if err := writeFileAtomic(filepath.Join(dir, f.name), f.data); err != nil {
			return Step{}, fmt.Errorf("store: add step %d to run %s: %w", st.Index, st.RunID, err)
		}
		*f.path = f.name
	}
	rec, err := json.Marshal(st)
	if err != nil {
		return Step{}, fmt.Errorf("store: add step %d to run %s: %w", st.Index, st.RunID, err)
	}
	if err := writeFileAtomic(filepath.Join(dir, st.JSONPath()), append(rec, '\n')); err != nil {
		return Step{}, fmt.Errorf("store: add step %d to run %s: %w", st.Index, st.RunID, err)
	}
	var px, py sql.NullInt64
	if st.Point != nil {
		px = sql.NullInt64{Int64: int64(st.Point.X), Valid: true}
		py = sql.NullInt64{Int64: int64(st.Point.Y), Valid: true}
	}
	_, err = s.wdb.ExecContext(ctx, `INSERT INTO steps (run_id, idx, task, name, action, params, status, error,
		started, duration, device_time, point_x, point_y, before_path, after_path, scene_path, result)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		st.RunID, st.Index, st.Task, st.Name, st.Action, nullJSON(st.Params), st.Status, st.Error,
		st.Started.UnixNano(), int64(st.Duration), int64(st.DeviceTime), px, py,
		st.BeforePath, st.AfterPath, st.ScenePath, nullJSON(st.Result))
	if isUniqueViolation(err) {
		return Step{}, fmt.Errorf("store: add step to run %s: index %d is already recorded", st.RunID, st.Index)
	}
	if isForeignKeyViolation(err) {
		return Step{}, fmt.Errorf("store: add step to run %s: %w (start the run with StartRun first)", st.RunID, ErrNotFound)
	}
	if err != nil {
		return Step{}, fmt.Errorf("store: add step %d to run %s: %w", st.Index, st.RunID, err)
	}
	return st, nil
}

// nextIndex reserves the next step number of a run. Reservations live in
// memory so concurrent AddStep calls for one run never draw the same number;
// the first reservation for a run starts after what the database holds.
func (s *Store) nextIndex(ctx context.Context, runID string) (int, error) {
	s.stepMu.Lock()
	defer s.stepMu.Unlock()
	if s.nextIdx == nil {
		s.nextIdx = map[string]int{}
	}
	n, ok := s.nextIdx[runID]
	if !ok {
		var max sql.NullInt64
		if err := s.wdb.QueryRowContext(ctx, `SELECT MAX(idx) FROM steps WHERE run_id = ?`, runID).Scan(&max); err != nil {
			return 0, fmt.Errorf("store: add step to run %s: %w", runID, err)
		}
		n = int(max.Int64) + 1
	}
	s.nextIdx[runID] = n + 1
	return n, nil
}

// Steps returns the steps of run id in index order, with Scene read back
// from its file; Before and After stay nil (see BeforePath, AfterPath).
func (s *Store) Steps(ctx context.Context, id string) ([]Step, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT idx, task, name, action, params, status, error, started, duration,
		device_time, point_x, point_y, before_path, after_path, scene_path, result
		FROM steps WHERE run_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, fmt.Errorf("store: steps of run %s: %w", id, err)
	}
	defer rows.Close()
	var steps []Step
	for rows.Next() {
		st := Step{RunID: id}
		var params, result sql.NullString
		var started, dur, devTime int64
		var px, py sql.NullInt64
		if err := rows.Scan(&st.Index, &st.Task, &st.Name, &st.Action, &params, &st.Status, &st.Error, &started, &dur,
			&devTime, &px, &py, &st.BeforePath, &st.AfterPath, &st.ScenePath, &result); err != nil {
			return nil, fmt.Errorf("store: steps of run %s: %w", id, err)
		}
		st.Started = time.Unix(0, started).UTC()
		st.Duration, st.DeviceTime = time.Duration(dur), time.Duration(devTime)
		if px.Valid && py.Valid {
			st.Point = &device.Point{X: int(px.Int64), Y: int(py.Int64)}
		}
		if params.Valid {
			st.Params = json.RawMessage(params.String)
		}
		if result.Valid {
			st.Result = json.RawMessage(result.String)
		}
		steps = append(steps, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: steps of run %s: %w", id, err)
	}
	if len(steps) == 0 {
		if _, err := s.Run(ctx, id); err != nil {
			return nil, err
		}
	}
	dir := s.RunDir(id)
	for i := range steps {
		if steps[i].ScenePath == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, steps[i].ScenePath))
		if err != nil {
			return nil, fmt.Errorf("store: steps of run %s: scene of step %d: %w", id, steps[i].Index, err)
		}
		steps[i].Scene = data
	}
	return steps, nil
}

func nullJSON(v json.RawMessage) any {
	if len(v) == 0 {
		return nil
	}
	return string(v)
}
