package store

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Retention says which runs Prune keeps. A zero field sets no limit; both
// zero keep everything.
type Retention struct {
	// Keep is how many of the newest runs to keep.
	Keep int
	// MaxAge is how long a run is kept after it started.
	MaxAge time.Duration
}

// Prune deletes the runs Retention does not keep — beyond the newest Keep,
// or started more than MaxAge ago — with their steps, events and files.
// A run still running is never deleted. It returns the runs it deleted,
// newest first; with dryRun it only says which it would delete.
func (s *Store) Prune(ctx context.Context, keep Retention, dryRun bool) ([]Run, error) {
	if keep.Keep < 0 || keep.MaxAge < 0 {
		return nil, fmt.Errorf("store: prune: keep %d runs, max age %v: neither can be negative", keep.Keep, keep.MaxAge)
	}
	if keep.Keep == 0 && keep.MaxAge == 0 {
		return nil, nil
	}
	runs, err := s.Runs(ctx, 0)
	if err != nil {
		return nil, err
	}
	cutoff := s.now().Add(-keep.MaxAge)
	var doomed []Run
	for i, r := range runs {
		old := keep.MaxAge > 0 && r.Started.Before(cutoff)
		beyond := keep.Keep > 0 && i >= keep.Keep
		if (old || beyond) && r.Status != StatusRunning {
			doomed = append(doomed, r)
		}
	}
	if dryRun {
		return doomed, nil
	}
	var deleted []Run
	for _, r := range doomed {
		ok, err := s.deleteRun(ctx, r)
		if err != nil {
			return deleted, err
		}
		if ok {
			deleted = append(deleted, r)
		}
	}
	return deleted, nil
}

// deleteRun deletes one run's rows (its steps go with it) and events, then
// its directory. It deletes nothing, and says false, when the run has
// started running again meanwhile (a retry of the same ID) or is gone.
func (s *Store) deleteRun(ctx context.Context, r Run) (bool, error) {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: delete run %s: %w", r.ID, err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ? AND status != ?`, r.ID, StatusRunning)
	n := int64(0)
	if err == nil {
		n, err = res.RowsAffected()
	}
	if err == nil && n > 0 {
		_, err = tx.ExecContext(ctx, `DELETE FROM events WHERE substr(task_id, 1, ?) = ?`, len(r.ID)+1, r.ID+"/")
	}
	if err != nil {
		tx.Rollback()
		return false, fmt.Errorf("store: delete run %s: %w", r.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: delete run %s: %w", r.ID, err)
	}
	if n == 0 {
		return false, nil
	}
	if err := os.RemoveAll(s.RunDir(r.ID)); err != nil {
		return true, fmt.Errorf("store: delete run %s: its files: %w", r.ID, err)
	}
	return true, nil
}
