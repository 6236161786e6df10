package llm

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"
)

type taskKey struct{}

// WithTask returns a context whose model calls are accounted to task id.
func WithTask(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, taskKey{}, id)
}

// TaskID is the task WithTask put in ctx, or "".
func TaskID(ctx context.Context) string {
	id, _ := ctx.Value(taskKey{}).(string)
	return id
}

// Tally is what a set of calls used.
type Tally struct {
	Calls   int           `json:"calls"`
	Errors  int           `json:"errors"`
	Usage   Usage         `json:"usage"`
	Latency time.Duration `json:"latency_ns"` // summed over calls
}

func (t Tally) add(u Usage, latency time.Duration, failed bool) Tally {
	t.Calls++
	if failed {
		t.Errors++
	}
	t.Usage = t.Usage.Add(u)
	t.Latency += latency
	return t
}

// TaskTally is one task's tally, split by role.
type TaskTally struct {
	Tally
	Roles map[string]Tally `json:"roles"`
}

// Accounts is a snapshot of an Accountant.
type Accounts struct {
	Total Tally                `json:"total"`
	Roles map[string]Tally     `json:"roles"`
	Tasks map[string]TaskTally `json:"tasks"`
}

// Accountant adds up tokens, cost and calls per role and per task. It is
// safe for concurrent use; the zero value is not, use NewAccountant.
type Accountant struct {
	mu    sync.Mutex
	total Tally
	roles map[string]Tally
	tasks map[string]TaskTally
}

// NewAccountant returns an empty Accountant.
func NewAccountant() *Accountant {
	return &Accountant{roles: map[string]Tally{}, tasks: map[string]TaskTally{}}
}

// Record adds one call. task "" counts toward the roles and total only.
func (a *Accountant) Record(task, role string, u Usage, latency time.Duration, failed bool) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.total = a.total.add(u, latency, failed)
	a.roles[role] = a.roles[role].add(u, latency, failed)
	if task == "" {
		return
	}
	t := a.tasks[task]
	if t.Roles == nil {
		t.Roles = map[string]Tally{}
	}
	t.Tally = t.Tally.add(u, latency, failed)
	t.Roles[role] = t.Roles[role].add(u, latency, failed)
	a.tasks[task] = t
}

// Total is every call's tally.
func (a *Accountant) Total() Tally {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.total
}

// Role is role's tally over all tasks.
func (a *Accountant) Role(role string) Tally {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.roles[role]
}

// Task is task's tally, with its split by role.
func (a *Accountant) Task(task string) TaskTally {
	a.mu.Lock()
	defer a.mu.Unlock()
	return copyTask(a.tasks[task])
}

// Snapshot copies every tally.
func (a *Accountant) Snapshot() Accounts {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := Accounts{Total: a.total, Roles: make(map[string]Tally, len(a.roles)), Tasks: make(map[string]TaskTally, len(a.tasks))}
	for k, v := range a.roles {
		s.Roles[k] = v
	}
	for k, v := range a.tasks {
		s.Tasks[k] = copyTask(v)
	}
	return s
}

// Tasks lists the task ids with calls, sorted.
func (a *Accountant) Tasks() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.tasks))
	for id := range a.tasks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func copyTask(t TaskTally) TaskTally {
	roles := make(map[string]Tally, len(t.Roles))
	for k, v := range t.Roles {
		roles[k] = v
	}
	t.Roles = roles
	return t
}

// roleClient is what Config.Client returns: a provider client bound to a
// role, pricing and accounting each call.
type roleClient struct {
	log    *slog.Logger
	role   string
	model  string
	inner  Client
	prices map[string]Price
	acct   *Accountant
	// images: the role is sent screenshots (Endpoint.Images).
	images bool
}

// SendImages reports whether the role's requests carry screenshots;
// SeesImages asks it.
func (r *roleClient) SendImages() bool { return r.images }

func (r *roleClient) Complete(ctx context.Context, req *Request) (*Response, error) {
	if req != nil && req.Role == "" {
		cp := *req
		cp.Role = r.role
		req = &cp
	}
	start := time.Now()
	resp, err := r.inner.Complete(ctx, req)
	latency := time.Since(start)
	var u Usage
	if resp != nil {
		p, ok := r.prices[resp.Model]
		if !ok {
			p = r.prices[r.model]
		}
		resp.Usage.CostUSD = p.Cost(resp.Usage)
		u = resp.Usage
	}
	role := r.role
	if req != nil && req.Role != "" {
		role = req.Role
	}
	r.acct.Record(TaskID(ctx), role, u, latency, err != nil)
	r.log.Debug("llm: call", "role", role, "model", r.model, "task", TaskID(ctx), "latency", latency,
		"prompt_tokens", u.PromptTokens, "completion_tokens", u.CompletionTokens, "cost_usd", u.CostUSD, "err", err)
	return resp, err
}
