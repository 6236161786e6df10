// Package remote drives a farm device from anywhere: a Driver whose calls
// travel as NATS requests to the device's host, each carrying the fence and
// the key of the caller's lease, and the host side that refuses a call
// whose fence is not the device's current lease or whose key is not its
// holder's.
package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/lease"
	"github.com/nats-io/nats.go"
)

// Subject is where the host of device id answers calls.
func Subject(id string) string { return "farm.dev." + farm.Key(id) }

// call is one Driver method call.
type call struct {
	Fence  uint64          `json:"fence"`
	Key    string          `json:"key"`
	Method string          `json:"method"`
	Args   json.RawMessage `json:"args,omitempty"`
}

// reply is its answer; Kind names the sentinel an error wraps.
type reply struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Kind   string          `json:"kind,omitempty"`
}

// errKinds map sentinel errors to the names that cross the wire.
var errKinds = map[string]error{
	"offline":     device.ErrOffline,
	"not_found":   device.ErrNotFound,
	"unsupported": device.ErrUnsupported,
	"stale_fence": lease.ErrStaleFence,
	"bad_key":     lease.ErrBadKey,
}

func kindOf(err error) string {
	for k, e := range errKinds {
		if errors.Is(err, e) {
			return k
		}
	}
	return ""
}

// Driver is a farm device driven through its host. It holds no lease
// itself: the caller holds one and passes its record (fence and key).
type Driver struct {
	nc    *nats.Conn
	id    string
	fence uint64
	key   string
	// Timeout bounds a call whose context has no deadline.
	Timeout time.Duration
}

var _ device.Driver = (*Driver)(nil)

// NewDriver drives device id under the lease rec (its Fence and Key, as
// Take returned them).
func NewDriver(nc *nats.Conn, id string, rec lease.Record) *Driver {
	return &Driver{nc: nc, id: id, fence: rec.Fence, key: rec.Key, Timeout: time.Minute}
}

func (d *Driver) do(ctx context.Context, method string, args, result any) error {
	c := call{Fence: d.fence, Key: d.key, Method: method}
	if args != nil {
		c.Args, _ = json.Marshal(args)
	}
	data, _ := json.Marshal(c)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	m, err := d.nc.RequestWithContext(ctx, Subject(d.id), data)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("farm device %s: %s: %w: %v (is its host up?)", d.id, method, device.ErrOffline, err)
	}
	var r reply
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return fmt.Errorf("farm device %s: %s: bad reply: %w", d.id, method, err)
	}
	if r.Error != "" {
		if e, ok := errKinds[r.Kind]; ok {
			return fmt.Errorf("farm device %s: %s: %w: %s", d.id, method, e, r.Error)
		}
		return fmt.Errorf("farm device %s: %s: %s", d.id, method, r.Error)
	}
	if result != nil {
		return json.Unmarshal(r.Result, result)
	}
	return nil
}

type pointArgs struct {
	From, To device.Point
	D        time.Duration
}

func (d *Driver) Info(ctx context.Context) (device.Info, error) {
	var i device.Info
	err := d.do(ctx, "info", nil, &i)
	return i, err
}

func (d *Driver) Screenshot(ctx context.Context) ([]byte, error) {
	var b []byte
	err := d.do(ctx, "screenshot", nil, &b)
	return b, err
}

func (d *Driver) Source(ctx context.Context) (device.Source, error) {
	var s device.Source
	err := d.do(ctx, "source", nil, &s)
	return s, err
}

func (d *Driver) Tap(ctx context.Context, p device.Point) error { return d.do(ctx, "tap", p, nil) }

func (d *Driver) LongPress(ctx context.Context, p device.Point, dur time.Duration) error {
	return d.do(ctx, "longpress", pointArgs{From: p, D: dur}, nil)
}

func (d *Driver) Swipe(ctx context.Context, from, to device.Point, dur time.Duration) error {
	return d.do(ctx, "swipe", pointArgs{From: from, To: to, D: dur}, nil)
}

func (d *Driver) InputText(ctx context.Context, text string) error {
	return d.do(ctx, "input", text, nil)
}
func (d *Driver) PressKey(ctx context.Context, k device.Key) error { return d.do(ctx, "key", k, nil) }
func (d *Driver) LaunchApp(ctx context.Context, app string) error {
	return d.do(ctx, "launch", app, nil)
}
func (d *Driver) TerminateApp(ctx context.Context, app string) error {
	return d.do(ctx, "terminate", app, nil)
}

func (d *Driver) ForegroundApp(ctx context.Context) (string, error) {
	var s string
	err := d.do(ctx, "foreground", nil, &s)
	return s, err
}
func (d *Driver) Lock(ctx context.Context) error   { return d.do(ctx, "lock", nil, nil) }
func (d *Driver) Unlock(ctx context.Context) error { return d.do(ctx, "unlock", nil, nil) }

// Close tells the host the session is over; the lease is the caller's to
// release.
func (d *Driver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return d.do(ctx, "close", nil, nil)
}
