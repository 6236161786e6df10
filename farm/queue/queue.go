// Package queue is the farm's run queue: each run's state lives in a KV
// bucket and moves only by compare-and-swap (queued → leased → running →
// passed|failed|error|canceled|timed_out|lost), while a work-queue stream
// hands queued runs to the hosts that have a free matching device.
package queue

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/audit"
	"github.com/nats-io/nats.go/jetstream"
)

// Run states.
const (
	Queued   = "queued"
	Leased   = "leased"
	Running  = "running"
	Passed   = "passed"
	Failed   = "failed"
	Error    = "error"
	Canceled = "canceled"
	TimedOut = "timed_out"
	Lost     = "lost"
)

// Final reports whether a run in state s is over.
func Final(s string) bool { return s != Queued && s != Leased && s != Running }

// Run is one script run on the farm.
type Run struct {
	ID      string            `json:"id"`
	Project string            `json:"project"`
	Name    string            `json:"name"`   // the script's file name
	Script  []byte            `json:"script"` // its YAML
	Labels  map[string]string `json:"labels,omitempty"`
	// Platform picks the pool: android (default) or ios.
	Platform string        `json:"platform"`
	Timeout  time.Duration `json:"timeout,omitempty"`
	// Retries is how many more attempts a lost run may get; Attempt
	// counts from 0, and RetryOf names the run this one retries.
	Retries int      `json:"retries,omitempty"`
	Attempt int      `json:"attempt,omitempty"`
	RetryOf string   `json:"retry_of,omitempty"`
	Avoid   []string `json:"avoid,omitempty"` // hosts this run must not run on
	// Reset names apps to clear before the run starts (besides the app
	// the script launches).
	Reset []string `json:"reset,omitempty"`
	// Apps are artifacts (SHA-256 hashes) the host installs first.
	Apps []string `json:"apps,omitempty"`
	// Pin is the one device (its farm ID) the run may run on.
	Pin string `json:"pin,omitempty"`
	By  string `json:"by,omitempty"` // who queued it

	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	Host   string `json:"host,omitempty"`
	Device string `json:"device,omitempty"`
	Fence  uint64 `json:"fence,omitempty"`
	// CancelRequested asks the host running it to stop.
	CancelRequested bool   `json:"cancel_requested,omitempty"`
	RetriedBy       string `json:"retried_by,omitempty"`
	Steps           int    `json:"steps,omitempty"`
	Passed          int    `json:"passed,omitempty"`
	Report          string `json:"report,omitempty"` // object name in the records store

	Queued  time.Time `json:"queued_at"`
	Leased  time.Time `json:"leased_at,omitzero"`
	Started time.Time `json:"started_at,omitzero"`
	Ended   time.Time `json:"ended_at,omitzero"`
}

// ErrState is a transition from a state that does not allow it.
var ErrState = errors.New("queue: run is not in a state that allows this")

// ErrNoRun is a run ID the farm does not know.
var ErrNoRun = errors.New("queue: no run")

// Queue reads and writes runs. Safe for concurrent use.
type Queue struct {
	js     jetstream.JetStream
	runs   jetstream.KeyValue
	config jetstream.KeyValue
}

// Open opens the queue's buckets.
func Open(ctx context.Context, js jetstream.JetStream) (*Queue, error) {
	runs, err := js.KeyValue(ctx, farm.BucketRuns)
	if err != nil {
		return nil, fmt.Errorf("queue: open %s: %w (is the control plane provisioned?)", farm.BucketRuns, err)
	}
	cfg, err := js.KeyValue(ctx, farm.BucketConfig)
	if err != nil {
		return nil, fmt.Errorf("queue: open %s: %w", farm.BucketConfig, err)
	}
	return &Queue{js: js, runs: runs, config: cfg}, nil
}

// NewID returns a fresh run ID, sortable by time.
func NewID() string {
	var b [4]byte
	rand.Read(b[:])
	return "r" + strconv.FormatInt(time.Now().UnixMilli(), 36) + hex.EncodeToString(b[:])
}

// Submit queues r: its record first, then its message, deduplicated by ID,
// so a client may call it again with the same ID after an error.
func (q *Queue) Submit(ctx context.Context, r Run) (Run, error) {
	if r.ID == "" {
		r.ID = NewID()
	}
	if r.Platform == "" {
		r.Platform = "android"
		if p := r.Labels["platform"]; p != "" {
			r.Platform = p
		}
	}
	if r.Platform != "android" && r.Platform != "ios" {
		return r, fmt.Errorf("queue: platform %q: use android or ios", r.Platform)
	}
	if r.Project == "" {
		r.Project = "default"
	}
	r.State, r.Queued = Queued, time.Now()
	data, _ := json.Marshal(r)
	// A submit that is tried again finds its record and queues it once:
	// the stream drops the second message by its ID.
	if _, err := q.runs.Create(ctx, r.ID, data); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return r, fmt.Errorf("queue: record run %s: %w", r.ID, err)
	}
	subject := farm.PoolSubject(r.Platform)
	if r.Pin != "" {
		subject = farm.DeviceSubject(r.Pin)
	}
	if _, err := q.js.Publish(ctx, subject, []byte(r.ID), jetstream.WithMsgID(r.ID)); err != nil {
		return r, fmt.Errorf("queue: queue run %s: %w", r.ID, err)
	}
	audit.Log(ctx, q.js, audit.Event{Kind: audit.RunQueued, Actor: r.By, Run: r.ID, State: Queued})
	return r, nil
}

// Get reads a run.
func (q *Queue) Get(ctx context.Context, id string) (Run, error) {
	r, _, err := q.get(ctx, id)
	return r, err
}

func (q *Queue) get(ctx context.Context, id string) (Run, uint64, error) {
	data, rev, ok, err := farm.LeaderGet(ctx, q.js, farm.BucketRuns, id)
	if err != nil {
		return Run{}, 0, err
	}
	if !ok {
		return Run{}, 0, fmt.Errorf("%w %s (see apex farm runs)", ErrNoRun, id)
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return Run{}, 0, fmt.Errorf("queue: run %s: %w", id, err)
	}
	return r, rev, nil
}

// Update changes run id by compare-and-swap: change sees the current
// record and returns an error (ErrState) to refuse. It retries when another
// writer got there first, so change may be called more than once.
func (q *Queue) Update(ctx context.Context, id string, change func(*Run) error) (Run, error) {
	var tried [][]byte // writes whose answer did not come
	for {
		data, rev, ok, err := farm.LeaderGet(ctx, q.js, farm.BucketRuns, id)
		if err != nil {
			return Run{}, err
		}
		if !ok {
			return Run{}, fmt.Errorf("queue: no run %s (see apex farm runs)", id)
		}
		var r Run
		if err := json.Unmarshal(data, &r); err != nil {
			return Run{}, fmt.Errorf("queue: run %s: %w", id, err)
		}
		if slices.ContainsFunc(tried, func(t []byte) bool { return bytes.Equal(t, data) }) {
			// A write that timed out was stored after all.
			return r, nil
		}
		before := r.State
		if err := change(&r); err != nil {
			return r, err
		}
		next, _ := json.Marshal(r)
		_, err = q.runs.Update(ctx, id, next, rev)
		if err == nil {
			if r.State != before {
				audit.Log(ctx, q.js, audit.Event{Kind: audit.RunState, Actor: r.Host, Run: r.ID, State: r.State,
					Resource: r.Device, Fence: r.Fence, Detail: r.Reason})
			}
			return r, nil
		}
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		if !farm.Conflict(err) {
			tried = append(tried, next)
			farm.Sleep(ctx, 100*time.Millisecond)
		}
	}
}

// From refuses a change unless the run is in one of states.
func From(r *Run, states ...string) error {
	if !slices.Contains(states, r.State) {
		return fmt.Errorf("%w: run %s is %s", ErrState, r.ID, r.State)
	}
	return nil
}

// List returns every run, oldest first.
func (q *Queue) List(ctx context.Context) ([]Run, error) {
	keys, err := q.runs.ListKeys(ctx)
	if err != nil {
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			return nil, nil
		}
		return nil, err
	}
	var out []Run
	for k := range keys.Keys() {
		r, _, err := q.get(ctx, k)
		if err == nil {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Queued.Before(out[j].Queued) })
	return out, nil
}

// Cancel stops a run: a queued one is canceled at once, a leased or
// running one is asked to stop (its host cancels it and records
// canceled).
func (q *Queue) Cancel(ctx context.Context, id, actor string) (Run, error) {
	r, err := q.Update(ctx, id, func(r *Run) error {
		switch r.State {
		case Queued:
			r.State, r.Reason, r.Ended = Canceled, "canceled by "+actor+" while queued", time.Now()
		case Leased, Running:
			r.CancelRequested = true
		default:
			return fmt.Errorf("%w: run %s already ended (%s)", ErrState, r.ID, r.State)
		}
		return nil
	})
	if err == nil {
		audit.Log(ctx, q.js, audit.Event{Kind: audit.RunCanceled, Actor: actor, Run: id})
		if r.State != Canceled {
			q.js.Conn().Publish(CancelSubject, []byte(id))
		}
	}
	return r, err
}

// Watch calls fn with run id's record each time it changes, until ctx
// ends or fn returns false.
func (q *Queue) Watch(ctx context.Context, id string, fn func(Run) bool) error {
	w, err := q.runs.Watch(ctx, id)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return nil
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			var r Run
			if json.Unmarshal(e.Value(), &r) == nil && !fn(r) {
				return nil
			}
		}
	}
}

// WatchAll calls fn with every run's record, first as they are and then
// as they change, until ctx ends or fn returns false. One watch serves any
// number of runs, which matters on a cluster, where each watch is a
// consumer the members must agree on. A watch can go quiet for good when
// the member serving it dies, so after watchIdle without news it starts
// over, and fn sees every record again.
func (q *Queue) WatchAll(ctx context.Context, fn func(Run) bool) error {
	for {
		done, err := q.watchOnce(ctx, fn)
		if done || ctx.Err() != nil {
			return err
		}
		farm.Sleep(ctx, 100*time.Millisecond)
	}
}

// watchIdle is how long a watch may be silent before it is started over.
const watchIdle = 5 * time.Second

func (q *Queue) watchOnce(ctx context.Context, fn func(Run) bool) (done bool, err error) {
	w, err := q.runs.WatchAll(ctx)
	if err != nil {
		return false, err
	}
	defer w.Stop()
	idle := time.NewTimer(watchIdle)
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-idle.C:
			return false, nil
		case e, ok := <-w.Updates():
			if !ok {
				return false, nil
			}
			idle.Reset(watchIdle)
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			var r Run
			if json.Unmarshal(e.Value(), &r) == nil && !fn(r) {
				return true, nil
			}
		}
	}
}

// CancelSubject is where Cancel tells hosts to stop a run (core NATS: the
// run record keeps the request for a host that missed it).
const CancelSubject = "farm.cancel"

// SetLimit caps how many runs of project may be leased or running at once
// (0 removes the cap).
func (q *Queue) SetLimit(ctx context.Context, project string, n int) error {
	_, err := q.config.Put(ctx, "limit."+farm.Key(project), []byte(strconv.Itoa(n)))
	return err
}

// Limit is project's cap; 0 means none.
func (q *Queue) Limit(ctx context.Context, project string) (int, error) {
	e, err := q.config.Get(ctx, "limit."+farm.Key(project))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(e.Value()))
}
