package records

import (
	"context"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/queue"
	"github.com/nats-io/nats.go/jetstream"
)

// Enforce deletes the records each project's retention no longer keeps:
// those older than its max age at now, and the oldest beyond its max
// count. The runs stay listed, without a report. It returns the IDs of the
// runs whose records it deleted.
func (s *Store) Enforce(ctx context.Context, now time.Time) ([]string, error) {
	var buckets []string
	names := s.js.ObjectStoreNames(ctx)
	for n := range names.Name() {
		if strings.HasPrefix(n, bucketPrefix) {
			buckets = append(buckets, n)
		}
	}
	if err := names.Error(); err != nil {
		return nil, fmt.Errorf("records: list the records stores: %w", err)
	}
	var deleted []string
	var errs []error
	for _, b := range buckets {
		project, ok := projectOf(b)
		if !ok {
			continue
		}
		d, err := s.enforce(ctx, project, b, now)
		deleted = append(deleted, d...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return deleted, errors.Join(errs...)
}

func (s *Store) enforce(ctx context.Context, project, bucket string, now time.Time) ([]string, error) {
	ret, err := s.Retention(ctx, project)
	if err != nil {
		return nil, err
	}
	obs, err := s.js.ObjectStore(ctx, bucket)
	if err != nil {
		return nil, err
	}
	infos, err := obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("records: list the records of %s: %w", project, err)
	}
	// A record is as old as its newest file.
	type record struct {
		run   string
		time  time.Time
		files []string
	}
	byRun := map[string]*record{}
	for _, o := range infos {
		run, _, ok := strings.Cut(o.Name, "/")
		if !ok || o.Deleted {
			continue
		}
		r := byRun[run]
		if r == nil {
			r = &record{run: run}
			byRun[run] = r
		}
		r.files = append(r.files, o.Name)
		if o.ModTime.After(r.time) {
			r.time = o.ModTime
		}
	}
	recs := make([]*record, 0, len(byRun))
	for _, r := range byRun {
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].time.After(recs[j].time) })
	var deleted []string
	for i, r := range recs {
		tooMany := ret.MaxCount > 0 && i >= ret.MaxCount
		tooOld := ret.MaxAge > 0 && now.Sub(r.time) > ret.MaxAge
		if !tooMany && !tooOld {
			continue
		}
		// The run stops naming its report first, so nobody is sent to a
		// record half deleted.
		_, err := s.q.Update(ctx, r.run, func(cur *queue.Run) error { cur.Report = ""; return nil })
		if err != nil && !errors.Is(err, queue.ErrNoRun) {
			return deleted, err
		}
		for _, f := range r.files {
			if err := obs.Delete(ctx, f); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
				return deleted, fmt.Errorf("records: delete %s of %s: %w", f, project, err)
			}
		}
		deleted = append(deleted, r.run)
	}
	return deleted, nil
}

// Keep enforces the retention every interval until ctx ends; every
// control-plane member runs it (deleting twice is harmless).
func (s *Store) Keep(ctx context.Context, interval time.Duration, log *slog.Logger) {
	farm.Every(ctx, interval, func() {
		if d, err := s.Enforce(ctx, time.Now()); err != nil && ctx.Err() == nil {
			log.Warn("records retention", "err", err)
		} else if len(d) > 0 {
			log.Info("records retention: deleted", "runs", len(d))
		}
	})
}

var keyEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)

// projectOf reads the project back from its store's name (farm.Key).
func projectOf(bucket string) (string, bool) {
	b, err := keyEncoding.DecodeString(strings.ToUpper(strings.TrimPrefix(bucket, bucketPrefix)))
	return string(b), err == nil
}
