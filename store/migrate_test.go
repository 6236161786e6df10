package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/event"
)

// A database written by an older apex (schema 1: no events table) opens,
// migrates to the current schema, and keeps its data.
func TestMigrateFromOlderVersion(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, DBName)
	db, err := openDB(path, time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, db, migrations[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO runs (id, script, status, started) VALUES ('old-run', 'old.yaml', 'passed', 1)`); err != nil {
		t.Fatal(err)
	}
	if v := userVersion(t, db); v != 1 {
		t.Fatalf("old database at schema %d; want 1", v)
	}
	db.Close()
	if err := os.MkdirAll(filepath.Join(dir, "old-run", "steps"), 0o755); err != nil {
		t.Fatal(err)
	}

	s := openTest(t, dir)
	if v := userVersion(t, s.wdb); v != SchemaVersion() || SchemaVersion() < 2 {
		t.Fatalf("after Open schema = %d; want %d (> 1)", v, SchemaVersion())
	}
	r, err := s.Run(ctx, "old-run")
	if err != nil || r.Script != "old.yaml" || r.Platform != "" {
		t.Fatalf("old run after migration = %+v, %v", r, err)
	}
	if err := s.AddEvent(ctx, event.Event{TaskID: "old-run", ActionType: "note"}); err != nil {
		t.Fatalf("events table missing after migration: %v", err)
	}
	if _, err := s.AddStep(ctx, Step{RunID: "old-run", Status: StepPassed}); err != nil {
		t.Fatal(err)
	}
	// Opening again is a no-op.
	s.Close()
	s2 := openTest(t, dir)
	if ev, err := s2.Events(ctx, "old-run"); err != nil || len(ev) != 1 {
		t.Fatalf("events after reopen = %v, %v", ev, err)
	}
}

func TestMigrateRefusesNewerSchema(t *testing.T) {
	dir := t.TempDir()
	db, err := openDB(filepath.Join(dir, DBName), time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(dir)
	if err == nil || !strings.Contains(err.Error(), "newer than this apex") {
		t.Fatalf("Open of a newer schema err = %v", err)
	}
}

// A failing migration leaves the database at the last complete version.
func TestMigrateIsTransactional(t *testing.T) {
	ctx := context.Background()
	db, err := openDB(filepath.Join(t.TempDir(), DBName), time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list := []string{migrations[0], `CREATE TABLE half (x INTEGER); THIS IS NOT SQL;`}
	if err := migrate(ctx, db, list); err == nil || !strings.Contains(err.Error(), "schema 2") {
		t.Fatalf("migrate err = %v; want one naming schema 2", err)
	}
	if v := userVersion(t, db); v != 1 {
		t.Errorf("schema after failed migration = %d; want 1", v)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'half'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("table from the failed migration exists (%d, %v)", n, err)
	}
}

func userVersion(t *testing.T, db *sql.DB) int {
	t.Helper()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenNotADatabase(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, DBName), []byte(strings.Repeat("not sqlite ", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err == nil {
		t.Fatal("Open of a non-database file succeeded")
	}
}
