package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/farm/lease"
	"github.com/nats-io/nats.go"
)

// Opener opens a clean session on a device; the func it returns ends it.
type Opener func(ctx context.Context) (device.Driver, func(), error)

// Serve answers calls to devices (by ID) until ctx ends. Each call's fence
// and key are checked against the device's current lease first; a call
// with a stale fence is refused, and the session it belonged to is
// closed; one without the lease's key is refused. A
// device's calls are answered one at a time, in order.
func Serve(ctx context.Context, nc *nats.Conn, leases *lease.Leaser, devices map[string]Opener, log *slog.Logger) error {
	for id, open := range devices {
		s := &session{id: id, open: open, leases: leases, log: log}
		sub, err := nc.Subscribe(Subject(id), func(m *nats.Msg) { s.handle(ctx, m) })
		if err != nil {
			return fmt.Errorf("remote: serve %s: %w", id, err)
		}
		context.AfterFunc(ctx, func() { sub.Unsubscribe(); s.end() })
	}
	return nil
}

// session is the open driver of one device under one lease.
type session struct {
	id     string
	open   Opener
	leases *lease.Leaser
	log    *slog.Logger

	mu    sync.Mutex
	fence uint64
	drv   device.Driver
	close func()
}

func (s *session) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.close != nil {
		s.close()
	}
	s.drv, s.close, s.fence = nil, nil, 0
}

func (s *session) handle(ctx context.Context, m *nats.Msg) {
	var c call
	var r reply
	if err := json.Unmarshal(m.Data, &c); err != nil {
		r.Error = "bad call: " + err.Error()
	} else if res, err := s.call(ctx, c); err != nil {
		r.Error, r.Kind = err.Error(), kindOf(err)
	} else if res != nil {
		r.Result, _ = json.Marshal(res)
	}
	data, _ := json.Marshal(r)
	m.Respond(data)
}

func (s *session) call(ctx context.Context, c call) (any, error) {
	if err := s.leases.Check(ctx, s.id, c.Fence, c.Key); err != nil {
		s.mu.Lock()
		stale := s.fence == c.Fence
		s.mu.Unlock()
		if stale {
			s.end()
		}
		return nil, err
	}
	if c.Method == "close" {
		s.end()
		return nil, nil
	}
	s.mu.Lock()
	if s.drv != nil && s.fence != c.Fence {
		s.close()
		s.drv, s.close = nil, nil
	}
	if s.drv == nil {
		drv, closeDrv, err := s.open(context.WithoutCancel(ctx))
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.drv, s.close, s.fence = drv, closeDrv, c.Fence
	}
	d := s.drv
	s.mu.Unlock()
	return dispatch(ctx, d, c)
}

func dispatch(ctx context.Context, d device.Driver, c call) (any, error) {
	var a pointArgs
	var text string
	switch c.Method {
	case "tap":
		if err := json.Unmarshal(c.Args, &a.From); err != nil {
			return nil, err
		}
	case "longpress", "swipe":
		if err := json.Unmarshal(c.Args, &a); err != nil {
			return nil, err
		}
	case "input", "key", "launch", "terminate":
		if err := json.Unmarshal(c.Args, &text); err != nil {
			return nil, err
		}
	}
	switch c.Method {
	case "info":
		return d.Info(ctx)
	case "screenshot":
		return d.Screenshot(ctx)
	case "source":
		return d.Source(ctx)
	case "foreground":
		return d.ForegroundApp(ctx)
	case "tap":
		return nil, d.Tap(ctx, a.From)
	case "longpress":
		return nil, d.LongPress(ctx, a.From, a.D)
	case "swipe":
		return nil, d.Swipe(ctx, a.From, a.To, a.D)
	case "input":
		return nil, d.InputText(ctx, text)
	case "key":
		return nil, d.PressKey(ctx, device.Key(text))
	case "launch":
		return nil, d.LaunchApp(ctx, text)
	case "terminate":
		return nil, d.TerminateApp(ctx, text)
	case "lock":
		return nil, d.Lock(ctx)
	case "unlock":
		return nil, d.Unlock(ctx)
	}
	return nil, fmt.Errorf("remote: unknown call %q: %w", c.Method, device.ErrUnsupported)
}
