package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/apexagent/apex/event"
	"os"
	"path/filepath"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Run statuses.
const (
	StatusRunning  = event.RunRunning
	StatusPassed   = event.RunPassed
	StatusFailed   = event.RunFailed
	StatusError    = event.RunError
	StatusCanceled = event.RunCanceled
	// StatusLost is a run whose process ended (killed, crashed, machine
	// restarted) without finishing it: a later process that opened the
	// store found it "running" with its owner gone.
	StatusLost = event.RunLost
)

// Run is one execution of a script on a device.
type Run struct {
	ID     string `json:"id"`
	Name   string `json:"name,omitempty"`
	Script string `json:"script,omitempty"` // path of the script file
	Device string `json:"device,omitempty"` // host-qualified device ID
	// Platform is the device's platform (android, ios); "" when unknown.
	Platform string `json:"platform,omitempty"`
	Status   string `json:"status"`           // running|passed|failed|error|canceled|lost
	Reason   string `json:"reason,omitempty"` // why it failed, errored, was canceled or lost
	// Owner is the process that started the run (nil for runs recorded
	// before Apex kept it).
	Owner *Owner `json:"owner,omitempty"`
	// Dir holds the run's files; the store fills it (absolute path).
	Dir     string    `json:"dir"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"` // zero while running
}

// Duration is how long the run took, or has taken until now if running.
func (r Run) Duration(now time.Time) time.Duration {
	if r.Ended.IsZero() {
		return now.Sub(r.Started)
	}
	return r.Ended.Sub(r.Started)
}

func validRunStatus(s string) bool {
	switch s {
	case StatusRunning, StatusPassed, StatusFailed, StatusError, StatusCanceled, StatusLost:
		return true
	}
	return false
}

// StartRun records a new run with status "running" and creates its
// directory. The store assigns a time-sortable unique ID unless r.ID is set
// (then it must be a valid, unused ID). A zero r.Started means now.
func (s *Store) StartRun(ctx context.Context, r Run) (Run, error) {
	if r.Started.IsZero() {
		r.Started = s.now()
	}
	r.Started = r.Started.UTC()
	r.Status, r.Reason, r.Ended = StatusRunning, "", time.Time{}
	me := self()
	r.Owner = &me
	given := r.ID != ""
	if given {
		if err := checkID(r.ID); err != nil {
			return Run{}, fmt.Errorf("store: start run: %w", err)
		}
	}
	for attempt := 0; ; attempt++ {
		if !given {
			r.ID = s.ids.next(s.now())
		}
		_, err := s.wdb.ExecContext(ctx,
			`INSERT INTO runs (id, name, script, device, platform, status, reason, started, owner_pid, owner_host, owner_start)
			VALUES (?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?)`,
			r.ID, r.Name, r.Script, r.Device, r.Platform, r.Status, r.Started.UnixNano(), me.PID, me.Host, me.Start)
		if err == nil {
			break
		}
		if isUniqueViolation(err) && !given && attempt < 3 {
			continue // another process drew the same microsecond and suffix
		}
		if isUniqueViolation(err) {
			return Run{}, fmt.Errorf("store: start run: id %q already exists", r.ID)
		}
		return Run{}, fmt.Errorf("store: start run %q: %w", r.ID, err)
	}
	r.Dir = s.RunDir(r.ID)
	if err := os.MkdirAll(r.Dir+"/steps", 0o755); err != nil {
		return Run{}, fmt.Errorf("store: start run %s: %w", r.ID, err)
	}
	if err := writeJSONFile(r.Dir+"/run.json", r); err != nil {
		return Run{}, fmt.Errorf("store: start run %s: %w", r.ID, err)
	}
	s.log.Debug("run started", "id", r.ID, "script", r.Script, "device", r.Device)
	return r, nil
}

// FinishRun records how run id ended. status is one of passed, failed,
// error or canceled; reason says why when it did not pass.
func (s *Store) FinishRun(ctx context.Context, id, status, reason string) error {
	if !validRunStatus(status) || status == StatusRunning || status == StatusLost {
		return fmt.Errorf("store: finish run %s: status %q: use passed, failed, error or canceled", id, status)
	}
	res, err := s.wdb.ExecContext(ctx, `UPDATE runs SET status = ?, reason = ?, ended = ? WHERE id = ?`,
		status, reason, s.now().UTC().UnixNano(), id)
	if err != nil {
		return fmt.Errorf("store: finish run %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: finish run %s: %w", id, ErrNotFound)
	}
	s.stepMu.Lock()
	delete(s.nextIdx, id)
	s.stepMu.Unlock()
	r, err := s.Run(ctx, id)
	if err != nil {
		return err
	}
	if err := writeJSONFile(r.Dir+"/run.json", r); err != nil {
		return fmt.Errorf("store: finish run %s: %w", id, err)
	}
	s.log.Debug("run finished", "id", id, "status", status)
	s.retain(ctx)
	return nil
}

// retain applies Options.Retention once a run has finished. Its failure is
// a warning: the run itself is recorded.
func (s *Store) retain(ctx context.Context) {
	if s.keep == (Retention{}) {
		return
	}
	gone, err := s.Prune(context.WithoutCancel(ctx), s.keep, false)
	if err != nil {
		s.log.Warn("old runs not pruned (apex runs prune)", "dir", s.dir, "err", err)
		return
	}
	if len(gone) > 0 {
		s.log.Info("pruned old runs", "dir", s.dir, "runs", len(gone), "keep", s.keep.Keep, "max_age", s.keep.MaxAge)
	}
}

const runColumns = `id, name, script, device, platform, status, reason, started, ended, owner_pid, owner_host, owner_start`

// Run returns the run with the given ID, or an error wrapping ErrNotFound.
func (s *Store) Run(ctx context.Context, id string) (Run, error) {
	row := s.rdb.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id)
	r, err := s.scanRun(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("store: run %q: %w (list runs with `apex report`)", id, ErrNotFound)
	}
	if err != nil {
		return Run{}, fmt.Errorf("store: run %q: %w", id, err)
	}
	return r, nil
}

// Runs lists up to limit runs, newest first; limit <= 0 means all.
func (s *Store) Runs(ctx context.Context, limit int) ([]Run, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+runColumns+` FROM runs ORDER BY started DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list runs: %w", err)
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		r, err := s.scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list runs: %w", err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list runs: %w", err)
	}
	return runs, nil
}

type scanner interface{ Scan(dest ...any) error }

func (s *Store) scanRun(row scanner) (Run, error) {
	var r Run
	var started int64
	var ended sql.NullInt64
	var o Owner
	if err := row.Scan(&r.ID, &r.Name, &r.Script, &r.Device, &r.Platform, &r.Status, &r.Reason, &started, &ended, &o.PID, &o.Host, &o.Start); err != nil {
		return Run{}, err
	}
	if o.PID > 0 {
		r.Owner = &o
	}
	r.Started = time.Unix(0, started).UTC()
	if ended.Valid {
		r.Ended = time.Unix(0, ended.Int64).UTC()
	}
	r.Dir = s.RunDir(r.ID)
	return r, nil
}

func isUniqueViolation(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

func isForeignKeyViolation(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'))
}

// writeFileAtomic writes through a temporary file and a rename, so a reader
// (or a crash) sees the old file or the new one, never half of it.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
