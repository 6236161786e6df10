package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/audit"
	"github.com/apexagent/apex/farm/lease"
)

// Reap finds runs whose host stopped renewing their device lease and
// records them lost; a lost run with retries left is queued again as a new
// run that avoids the host it was lost on. Every control-plane member may
// reap at once: the CAS lets one of them record each loss, and the retry's
// ID is derived from the run's, so it is queued once.
//
// A run counts as lost only when its lease is missing on two passes in a
// row (missing holds the runs found so on the previous pass): a replica
// that lags may not show a lease just created.
func (q *Queue) Reap(ctx context.Context, leases *lease.Leaser, runs []Run, missing map[string]bool) error {
	var errs []error
	seen := map[string]bool{}
	for _, r := range runs {
		if r.State != Leased && r.State != Running {
			continue
		}
		cur, held, err := leases.Current(ctx, r.Device)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if held && cur.Fence == r.Fence {
			continue
		}
		seen[r.ID] = true
		if !missing[r.ID] {
			continue
		}
		lost, err := q.Update(ctx, r.ID, func(x *Run) error {
			if err := From(x, Leased, Running); err != nil || x.Fence != r.Fence {
				return errors.Join(err, ErrState)
			}
			x.State, x.Ended = Lost, time.Now()
			x.Reason = fmt.Sprintf("host %s stopped renewing the lease of %s", x.Host, x.Device)
			if x.Attempt < x.Retries {
				x.RetriedBy = retryID(x)
				x.Reason += "; retried as " + x.RetriedBy
			}
			return nil
		})
		if errors.Is(err, ErrState) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		audit.Log(ctx, q.js, audit.Event{Kind: audit.LeaseExpired, Actor: "reaper", Resource: lost.Device, Run: lost.ID, Fence: lost.Fence})
		if lost.RetriedBy != "" {
			retry := Run{ID: lost.RetriedBy, Project: lost.Project, Name: lost.Name, Script: lost.Script, Labels: lost.Labels,
				Platform: lost.Platform, Timeout: lost.Timeout, Retries: lost.Retries, Attempt: lost.Attempt + 1, RetryOf: lost.ID,
				Avoid: append(slices.Clone(lost.Avoid), lost.Host), Reset: lost.Reset, Apps: lost.Apps, Pin: lost.Pin, By: lost.By}
			if lost.Pin != "" {
				retry.Avoid = lost.Avoid // its device is on that host: wait for it to come back
			}
			if _, err := q.Submit(ctx, retry); err != nil {
				errs = append(errs, err)
			}
		}
	}
	clear(missing)
	for id := range seen {
		missing[id] = true
	}
	return errors.Join(errs...)
}

// retryID is the ID of run r's next attempt: the first attempt's ID (run
// IDs have no dash) and the attempt number.
func retryID(r *Run) string {
	root, _, _ := strings.Cut(r.ID, "-")
	return root + "-" + strconv.Itoa(r.Attempt+1)
}

// Reaper reaps every interval until ctx ends. It keeps the runs that are
// leased or running from one watch of the runs bucket, so each pass reads
// only their leases.
func (q *Queue) Reaper(ctx context.Context, leases *lease.Leaser, every time.Duration, log func(error)) {
	var mu sync.Mutex
	active := map[string]Run{}
	go func() {
		for ctx.Err() == nil {
			err := q.WatchAll(ctx, func(r Run) bool {
				mu.Lock()
				defer mu.Unlock()
				if r.State == Leased || r.State == Running {
					active[r.ID] = r
				} else {
					delete(active, r.ID)
				}
				return true
			})
			if err != nil && ctx.Err() == nil && log != nil {
				log(err)
			}
			farm.Sleep(ctx, every)
		}
	}()
	missing := map[string]bool{}
	farm.Every(ctx, every, func() {
		mu.Lock()
		runs := make([]Run, 0, len(active))
		for _, r := range active {
			runs = append(runs, r)
		}
		mu.Unlock()
		if err := q.Reap(ctx, leases, runs, missing); err != nil && ctx.Err() == nil && log != nil {
			log(err)
		}
	})
}
