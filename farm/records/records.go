// Package records keeps each farm run's record (its report, steps and
// screenshots) in an object store per project, keyed by run ID, lists the
// runs that have one with filters, and enforces each project's retention.
package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/report"
	"github.com/nats-io/nats.go/jetstream"
)

// bucketPrefix starts the name of every project's records store.
const bucketPrefix = "farm_records_"

// Bucket is the object store keeping project's records.
func Bucket(project string) string { return bucketPrefix + farm.Key(project) }

// Create opens project's records store, creating it if it is missing. The
// admin adding a project calls it (auth.Store.AddProject): when the farm
// has a --token, hosts may not create streams, so the store they upload
// into must exist before the project's first run.
func Create(ctx context.Context, js jetstream.JetStream, project string) (jetstream.ObjectStore, error) {
	return farm.ObjectStore(ctx, js, Bucket(project), "run records of project "+project)
}

// DefaultMaxAge is how long records of a project without a retention
// setting are kept.
const DefaultMaxAge = 30 * 24 * time.Hour

// Retention says how many of a project's records are kept and for how
// long; zero fields mean no bound of that kind (both zero: DefaultMaxAge).
type Retention struct {
	MaxAge   time.Duration `json:"max_age,omitempty"`
	MaxCount int           `json:"max_count,omitempty"`
}

// Filter picks runs; zero fields match every run.
type Filter struct {
	Project string
	State   string
	Labels  map[string]string // every one must be among the run's labels
	Since   time.Time         // queued at or after
}

// Match reports whether r passes f.
func (f Filter) Match(r queue.Run) bool {
	if f.Project != "" && r.Project != f.Project || f.State != "" && r.State != f.State ||
		!f.Since.IsZero() && r.Queued.Before(f.Since) {
		return false
	}
	for k, v := range f.Labels {
		if r.Labels[k] != v {
			return false
		}
	}
	return true
}

// Store reads and writes run records. Safe for concurrent use.
type Store struct {
	js     jetstream.JetStream
	q      *queue.Queue
	config jetstream.KeyValue
}

// Open opens the records of the farm on js.
func Open(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	q, err := queue.Open(ctx, js)
	if err != nil {
		return nil, err
	}
	cfg, err := js.KeyValue(ctx, farm.BucketConfig)
	if err != nil {
		return nil, fmt.Errorf("records: open %s: %w", farm.BucketConfig, err)
	}
	return &Store{js: js, q: q, config: cfg}, nil
}

// Upload copies the run directory dir (report, steps, screenshots) into
// the records of run r's project as <run>/<file>; it returns the report's
// object name.
func (s *Store) Upload(ctx context.Context, r queue.Run, dir string) (string, error) {
	obs, err := Create(ctx, s.js, r.Project)
	if err != nil {
		return "", err
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = obs.Put(ctx, jetstream.ObjectMeta{Name: r.ID + "/" + filepath.ToSlash(rel)}, f)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("records: upload the record of run %s: %w", r.ID, err)
	}
	return r.ID + "/" + report.FileName, nil
}

// List returns the runs f picks that have a record, newest first.
func (s *Store) List(ctx context.Context, f Filter) ([]queue.Run, error) {
	runs, err := s.q.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []queue.Run
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if r.Report != "" && f.Match(r) {
			r.Script = nil
			out = append(out, r)
		}
	}
	return out, nil
}

// ErrNoRecord is a run without a (kept) record.
var ErrNoRecord = errors.New("records: no record")

// Run reads run id when it has a record.
func (s *Store) Run(ctx context.Context, id string) (queue.Run, error) {
	r, err := s.q.Get(ctx, id)
	if err != nil {
		return r, err
	}
	if r.Report == "" {
		return r, fmt.Errorf("%w of run %s (it is %s; records of ended runs are kept as its project's retention says)", ErrNoRecord, id, r.State)
	}
	return r, nil
}

// Files lists the files of run r's record, relative to it.
func (s *Store) Files(ctx context.Context, r queue.Run) ([]string, error) {
	obs, err := s.js.ObjectStore(ctx, Bucket(r.Project))
	if err != nil {
		return nil, fmt.Errorf("%w of run %s: %v", ErrNoRecord, r.ID, err)
	}
	infos, err := obs.List(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, err
	}
	var out []string
	for _, o := range infos {
		if name, ok := strings.CutPrefix(o.Name, r.ID+"/"); ok && !o.Deleted {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w of run %s", ErrNoRecord, r.ID)
	}
	return out, nil
}

// Get opens one file of run r's record (report.html, a screenshot, …);
// the caller closes it.
func (s *Store) Get(ctx context.Context, r queue.Run, name string) (jetstream.ObjectResult, error) {
	if name == "" || path.Clean(name) != name || strings.HasPrefix(name, "../") || path.IsAbs(name) {
		return nil, fmt.Errorf("records: file %q: give a name inside the record (see its files)", name)
	}
	obs, err := s.js.ObjectStore(ctx, Bucket(r.Project))
	if err != nil {
		return nil, fmt.Errorf("%w of run %s: %v", ErrNoRecord, r.ID, err)
	}
	res, err := obs.Get(ctx, r.ID+"/"+name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, fmt.Errorf("%w: run %s has no file %s", ErrNoRecord, r.ID, name)
	}
	return res, err
}

// Download writes run r's record into dir; it returns the files written.
func (s *Store) Download(ctx context.Context, r queue.Run, dir string) ([]string, error) {
	names, err := s.Files(ctx, r)
	if err != nil {
		return nil, err
	}
	obs, err := s.js.ObjectStore(ctx, Bucket(r.Project))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		dst := filepath.Join(dir, filepath.FromSlash(n))
		if !strings.HasPrefix(dst, filepath.Clean(dir)+string(filepath.Separator)) {
			return out, fmt.Errorf("records: run %s has a file named %q outside its record", r.ID, n)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return out, err
		}
		if err := obs.GetFile(ctx, r.ID+"/"+n, dst); err != nil {
			return out, fmt.Errorf("records: download %s of run %s: %w", n, r.ID, err)
		}
		out = append(out, dst)
	}
	return out, nil
}

func retentionKey(project string) string { return "retention." + farm.Key(project) }

// SetRetention sets project's retention (zero: the default).
func (s *Store) SetRetention(ctx context.Context, project string, ret Retention) error {
	if ret.MaxAge < 0 || ret.MaxCount < 0 {
		return fmt.Errorf("records: retention %+v: give 0 (no bound) or more", ret)
	}
	data, _ := json.Marshal(ret)
	_, err := s.config.Put(ctx, retentionKey(project), data)
	return err
}

// Retention is project's retention; a project without one keeps records
// DefaultMaxAge.
func (s *Store) Retention(ctx context.Context, project string) (Retention, error) {
	e, err := s.config.Get(ctx, retentionKey(project))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Retention{MaxAge: DefaultMaxAge}, nil
	}
	if err != nil {
		return Retention{}, err
	}
	var ret Retention
	if err := json.Unmarshal(e.Value(), &ret); err != nil {
		return Retention{}, fmt.Errorf("records: retention of %s: %w", project, err)
	}
	if ret == (Retention{}) {
		ret.MaxAge = DefaultMaxAge
	}
	return ret, nil
}

// ParseFilter reads a filter as the CLI and the console take it: labels
// as key=value,…; since as a time (RFC 3339) or a duration back from now.
func ParseFilter(project, state, labels, since string, now time.Time) (Filter, error) {
	f := Filter{Project: project, State: state}
	if labels != "" {
		l, err := registry.ParseLabels(labels)
		if err != nil {
			return f, err
		}
		f.Labels = l
	}
	if since != "" {
		if d, err := time.ParseDuration(since); err == nil {
			f.Since = now.Add(-d)
		} else if t, err := time.Parse(time.RFC3339, since); err == nil {
			f.Since = t
		} else {
			return f, fmt.Errorf("since %q: give a duration (24h) or a time (2026-01-02T15:04:05Z)", since)
		}
	}
	return f, nil
}
