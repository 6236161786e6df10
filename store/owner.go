package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"time"
)

// Owner is the process that started a run. Start tells the process apart
// from a later one that got the same PID: it is the process's start time as
// the operating system keeps it (Linux: clock ticks since boot), 0 where
// Apex cannot read it.
type Owner struct {
	PID   int    `json:"pid"`
	Host  string `json:"host"`
	Start int64  `json:"start,omitempty"`
}

// self is this process as a run's owner, read once.
var self = sync.OnceValue(func() Owner {
	host, _ := os.Hostname()
	o := Owner{PID: os.Getpid(), Host: host}
	o.Start, _ = processStart(o.PID)
	return o
})

// gone reports whether o is certainly not running: it ran on this host and
// no process has its PID, or the one that has it started at another time.
// A run of another host, or one whose owner cannot be checked, is not gone.
func (o Owner) gone() bool {
	me := self()
	if o.PID <= 0 || o.Host == "" || o.Host != me.Host {
		return false
	}
	if o.PID == me.PID && o.Start == me.Start {
		return false
	}
	alive, start, known := processState(o.PID)
	if !known {
		return false
	}
	if !alive {
		return true
	}
	return o.Start != 0 && start != 0 && start != o.Start
}

// markLost marks the runs whose owner is gone as lost, each with a reason
// naming the owner; a run ends when its last recorded step did (its start
// when it recorded none). It returns how many it marked.
func (s *Store) markLost(ctx context.Context) (int, error) {
	rows, err := s.wdb.QueryContext(ctx,
		`SELECT id, owner_pid, owner_host, owner_start FROM runs WHERE status = ? AND owner_pid > 0`, StatusRunning)
	if err != nil {
		return 0, fmt.Errorf("store: find lost runs: %w", err)
	}
	type lost struct {
		id    string
		owner Owner
	}
	var found []lost
	for rows.Next() {
		var l lost
		if err := rows.Scan(&l.id, &l.owner.PID, &l.owner.Host, &l.owner.Start); err != nil {
			rows.Close()
			return 0, fmt.Errorf("store: find lost runs: %w", err)
		}
		if l.owner.gone() {
			found = append(found, l)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: find lost runs: %w", err)
	}
	me := self()
	for _, l := range found {
		reason := fmt.Sprintf("lost: the process that ran it (pid %d on %s) ended without finishing it (killed or crashed); "+
			"found by pid %d at %s. Its steps up to then are recorded.",
			l.owner.PID, l.owner.Host, me.PID, s.now().UTC().Format(time.RFC3339))
		// Only while still running: another process may mark it first.
		res, err := s.wdb.ExecContext(ctx, `UPDATE runs SET status = ?, reason = ?,
			ended = COALESCE((SELECT MAX(started + duration) FROM steps WHERE run_id = runs.id), started)
			WHERE id = ? AND status = ?`, StatusLost, reason, l.id, StatusRunning)
		if err != nil {
			return 0, fmt.Errorf("store: mark run %s lost: %w", l.id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue
		}
		if err := s.rewriteRunFile(ctx, l.id); err != nil {
			return 0, fmt.Errorf("store: mark run %s lost: %w", l.id, err)
		}
		s.log.Info("run lost", "id", l.id, "owner_pid", l.owner.PID, "owner_host", l.owner.Host)
	}
	return len(found), nil
}

// rewriteRunFile writes run.json from the database's row.
func (s *Store) rewriteRunFile(ctx context.Context, id string) error {
	row := s.wdb.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id)
	r, err := s.scanRun(row)
	if err == sql.ErrNoRows {
		return fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return err
	}
	return writeJSONFile(r.Dir+"/run.json", r)
}
