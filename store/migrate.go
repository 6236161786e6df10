package store

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations is the schema history: migration i (0-based) brings a database
// from user_version i to i+1. Append only; never edit a shipped entry.
var migrations = []string{
	// 1: runs and their steps.
	`CREATE TABLE runs (
		id      TEXT PRIMARY KEY,
		name    TEXT NOT NULL DEFAULT '',
		script  TEXT NOT NULL DEFAULT '',
		device  TEXT NOT NULL DEFAULT '',
		status  TEXT NOT NULL,
		reason  TEXT NOT NULL DEFAULT '',
		started INTEGER NOT NULL, -- unix nanoseconds
		ended   INTEGER           -- unix nanoseconds; NULL while running
	);
	CREATE TABLE steps (
		run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		idx         INTEGER NOT NULL,
		task        TEXT NOT NULL DEFAULT '',
		name        TEXT NOT NULL DEFAULT '',
		action      TEXT NOT NULL DEFAULT '',
		params      TEXT,
		status      TEXT NOT NULL,
		error       TEXT NOT NULL DEFAULT '',
		started     INTEGER NOT NULL,
		duration    INTEGER NOT NULL DEFAULT 0, -- nanoseconds
		device_time INTEGER NOT NULL DEFAULT 0, -- nanoseconds
		point_x     INTEGER,
		point_y     INTEGER,
		before_path TEXT NOT NULL DEFAULT '',
		after_path  TEXT NOT NULL DEFAULT '',
		scene_path  TEXT NOT NULL DEFAULT '',
		result      TEXT,
		PRIMARY KEY (run_id, idx)
	) WITHOUT ROWID;`,

	// 2: the agent event stream (DESIGN.md "Events") and the listing index.
	`CREATE TABLE events (
		seq         INTEGER PRIMARY KEY AUTOINCREMENT,
		task_id     TEXT NOT NULL,
		event_id    TEXT NOT NULL,
		source_role TEXT NOT NULL DEFAULT '',
		target_role TEXT NOT NULL DEFAULT '',
		timestamp   INTEGER NOT NULL, -- unix nanoseconds
		action_type TEXT NOT NULL DEFAULT '',
		payload     TEXT,
		status      TEXT NOT NULL DEFAULT '',
		confidence  REAL NOT NULL DEFAULT 0,
		UNIQUE (task_id, event_id)
	);
	CREATE INDEX runs_started ON runs (started DESC, id DESC);`,

	// 3: the platform a run drove (android, ios), so a listing tells an
	// iPhone's run from an Android's without opening it; '' for older runs.
	`ALTER TABLE runs ADD COLUMN platform TEXT NOT NULL DEFAULT '';`,
	// 4: the process that started a run, so a later one can tell a run
	// whose process died (marked lost) from one still going.
	`ALTER TABLE runs ADD COLUMN owner_pid INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE runs ADD COLUMN owner_host TEXT NOT NULL DEFAULT '';
	ALTER TABLE runs ADD COLUMN owner_start INTEGER NOT NULL DEFAULT 0; -- see Owner.Start
	CREATE INDEX runs_running ON runs (status) WHERE status = 'running';`,
}

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return len(migrations) }

// migrate applies the migrations db lacks, each in its own transaction
// together with the bump of PRAGMA user_version, so a failure leaves the
// database at the last complete version.
func migrate(ctx context.Context, db *sql.DB, list []string) error {
	var have int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if have > len(list) {
		return fmt.Errorf("database schema version %d is newer than this apex understands (%d): upgrade apex or use another --dir", have, len(list))
	}
	for v := have; v < len(list); v++ {
		if err := migrateOne(ctx, db, v+1, list[v]); err != nil {
			return err
		}
	}
	return nil
}

func migrateOne(ctx context.Context, db *sql.DB, version int, ddl string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate to schema %d: %w", version, err)
	}
	defer tx.Rollback()
	// Another process may have migrated while we waited for the lock.
	var have int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return fmt.Errorf("migrate to schema %d: %w", version, err)
	}
	if have >= version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("migrate to schema %d: %w", version, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version)); err != nil {
		return fmt.Errorf("migrate to schema %d: %w", version, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate to schema %d: %w", version, err)
	}
	return nil
}
