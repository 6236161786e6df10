package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/queue"
	"github.com/nats-io/nats.go"
)

// Client calls the farm API with a token. Safe for concurrent use.
type Client struct {
	nc    *nats.Conn
	token string
	as    string
}

// NewClient calls the API on nc with token (empty on a farm without
// tokens); as names the caller there ("user@machine").
func NewClient(nc *nats.Conn, token, as string) *Client {
	return &Client{nc: nc, token: token, as: as}
}

// Error is a refusal or failure the API answered with; it wraps the
// sentinel it names (auth.ErrForbidden, queue.ErrNoRun, …).
type Error struct {
	Msg  string
	kind error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.kind }

func (c *Client) call(ctx context.Context, op string, req request, result any) error {
	req.As = c.as
	data, _ := json.Marshal(req)
	m := nats.NewMsg(Prefix + op)
	m.Data = data
	if c.token != "" {
		m.Header.Set(TokenHeader, c.token)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Minute)
		defer cancel()
	}
	res, err := c.nc.RequestMsgWithContext(ctx, m)
	if errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("farm: %s: no control plane answers the farm API (is apex farm serve running, and as new as this apex?): %w", op, err)
	}
	if err != nil {
		return fmt.Errorf("farm: %s: %w", op, err)
	}
	var rep reply
	if err := json.Unmarshal(res.Data, &rep); err != nil {
		return fmt.Errorf("farm: %s: bad answer: %w", op, err)
	}
	if rep.Kind == "held" && rep.Held != nil {
		return &lease.HeldError{Record: *rep.Held}
	}
	if rep.Error != "" {
		return &Error{Msg: rep.Error, kind: errKinds[rep.Kind]}
	}
	if result != nil && len(rep.Result) > 0 {
		return json.Unmarshal(rep.Result, result)
	}
	return nil
}

// Submit queues r in its project (the caller must drive it).
func (c *Client) Submit(ctx context.Context, r queue.Run) (queue.Run, error) {
	var out queue.Run
	err := c.call(ctx, opSubmit, request{Run: &r}, &out)
	return out, err
}

// Cancel cancels run id (see queue.Queue.Cancel).
func (c *Client) Cancel(ctx context.Context, id string) (queue.Run, error) {
	var out queue.Run
	err := c.call(ctx, opCancel, request{ID: id}, &out)
	return out, err
}

// Run reads run id.
func (c *Client) Run(ctx context.Context, id string) (queue.Run, error) {
	var out queue.Run
	err := c.call(ctx, opGet, request{ID: id}, &out)
	return out, err
}

// Runs lists the runs of the projects the caller may see, oldest first,
// without their scripts.
func (c *Client) Runs(ctx context.Context) ([]queue.Run, error) {
	var out []queue.Run
	err := c.call(ctx, opList, request{}, &out)
	return out, err
}

// Events returns run id's events after stream sequence after (0: from the
// start), waiting up to wait (at most 10s) for the first when there are
// none yet, with the run as it was when asked. Follow a run by asking
// again with the last event's Seq.
func (c *Client) Events(ctx context.Context, id string, after uint64, wait time.Duration) (Events, error) {
	var out Events
	err := c.call(ctx, opEvents, request{ID: id, After: after, Wait: wait}, &out)
	return out, err
}

// Leases lists the leases held now; one in a project the caller is not a
// member of shows only its resource and Hidden as its holder.
func (c *Client) Leases(ctx context.Context) ([]lease.Record, error) {
	var out []lease.Record
	err := c.call(ctx, opLeases, request{}, &out)
	return out, err
}

// Devices lists the registered devices with their leases, shown as
// Leases shows them.
func (c *Client) Devices(ctx context.Context) ([]Device, error) {
	var out []Device
	err := c.call(ctx, opDevices, request{}, &out)
	return out, err
}

// Allow fails unless the caller may do a on project (auth.Store.Allow).
func (c *Client) Allow(ctx context.Context, a auth.Action, project string) error {
	return c.call(ctx, opAllow, request{Action: a, Project: project}, nil)
}

// Lease leases farm device id for command (e.g. "apex run") and project
// ("" for the device's own, see LeaseProject), which the caller must
// drive. The lease is kept through the API until Release.
func (c *Client) Lease(ctx context.Context, id, project, command string) (*lease.Lease, error) {
	var rep leaseReply
	// The lease's TTL runs from a moment after this (by this machine's
	// clock; the control plane's may differ).
	asked := time.Now()
	if err := c.call(ctx, opLease, request{ID: id, Project: project, Command: command}, &rep); err != nil {
		return nil, err
	}
	rep.Record.Key, rep.Record.Renewed = rep.Key, asked
	return lease.Hold(rep.Record, rep.TTL, keeper{c}), nil
}

// keeper renews and releases a client's leases through the API.
type keeper struct{ c *Client }

func (k keeper) Renew(ctx context.Context, rec lease.Record) error {
	return k.c.call(ctx, opRenew, request{Lease: rec}, nil)
}

func (k keeper) Release(ctx context.Context, rec lease.Record, lost error) {
	req := request{Lease: rec}
	if lost != nil {
		req.Lost = lost.Error()
	}
	k.c.call(ctx, opRelease, req, nil)
}
