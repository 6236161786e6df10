// Package store records runs, their steps and agent events: the index in
// SQLite (dir/apex.db, WAL mode) and the bulky parts — screenshots and
// per-step JSON — as files under dir/<run-id>/, so a run that crashes midway
// leaves everything written so far readable.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// DBName is the SQLite file inside a store's directory.
const DBName = "apex.db"

// ErrNotFound is returned (wrapped) for a run that does not exist.
var ErrNotFound = errors.New("not found")

// Options tune a Store. The zero value (or nil) means defaults.
type Options struct {
	Log *slog.Logger // default: discard
	// Now is the clock for run IDs and default timestamps; default time.Now.
	Now func() time.Time
	// BusyTimeout bounds how long a write waits for another process holding
	// the database lock; default 10s.
	BusyTimeout time.Duration
	// Retention is applied each time a run finishes (FinishRun): the runs
	// it does not keep are deleted with their files. Zero keeps every run.
	Retention Retention
}

// Store is a directory of runs. It is safe for concurrent use by many
// goroutines; several processes may share one directory (SQLite locking,
// bounded by Options.BusyTimeout).
type Store struct {
	dir  string
	keep Retention // applied as runs finish
	log  *slog.Logger
	now  func() time.Time
	// wdb has a single connection: writes from goroutines of this process
	// queue here instead of contending for SQLite's lock.
	wdb *sql.DB
	rdb *sql.DB
	ids idGen

	eventSeq atomic.Uint64 // makes assigned event IDs unique within the process

	stepMu  sync.Mutex     // guards nextIdx
	nextIdx map[string]int // run ID -> next step index to hand out
}

// Open opens (creating if needed) the store in dir with default options.
func Open(dir string) (*Store, error) { return OpenWith(dir, nil) }

// OpenWith opens (creating if needed) the store in dir and migrates its
// database to the current schema.
func OpenWith(dir string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("store: open %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("store: open %q: create the directory: %w", dir, err)
	}
	s := &Store{dir: abs, log: opts.Log, now: opts.Now, keep: opts.Retention}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	path := filepath.Join(abs, DBName)
	if s.wdb, err = openDB(path, busy, false); err != nil {
		return nil, err
	}
	s.wdb.SetMaxOpenConns(1)
	if err := migrate(context.Background(), s.wdb, migrations); err != nil {
		s.wdb.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if s.rdb, err = openDB(path, busy, true); err != nil {
		s.wdb.Close()
		return nil, err
	}
	s.rdb.SetMaxOpenConns(4)
	// A run its dead process left "running" would show so forever.
	if _, err := s.markLost(context.Background()); err != nil {
		s.log.Warn("could not mark the runs of dead processes lost", "err", err)
	}
	return s, nil
}

func openDB(path string, busy time.Duration, readOnly bool) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	// NORMAL in WAL mode loses nothing when the process dies, only (at
	// worst) the last commits when the machine loses power.
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		// Take the write lock at BEGIN so a transaction never has to
		// upgrade a read lock, which SQLite cannot wait for.
		q.Set("_txlock", "immediate")
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w (is it a SQLite database, and writable?)", path, err)
	}
	return db, nil
}

// Dir is the absolute directory of the store.
func (s *Store) Dir() string { return s.dir }

// RunDir is the directory holding the files of run id.
func (s *Store) RunDir(id string) string { return filepath.Join(s.dir, id) }

// Close closes the database. Files already written stay as they are.
func (s *Store) Close() error {
	return errors.Join(s.rdb.Close(), s.wdb.Close())
}

var _ io.Closer = (*Store)(nil)
