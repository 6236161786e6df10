// Package api is the farm's API on NATS, served by every control-plane
// member: the requests that act on a project — queue and cancel runs,
// lease devices, read runs, their events and leases — carry the caller's
// token and pass auth.Store.Allow before they are done with the plane's
// own rights. Users' NATS connections may not do these things directly
// (the plane's permissions deny it), so this is the one door to them.
package api

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/registry"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Prefix starts every API subject: Prefix + an operation.
const Prefix = "farm.api."

// TokenHeader carries the caller's token. Only control-plane members may
// subscribe to the API's subjects, so no one else sees it.
const TokenHeader = "Apex-Token"

// Operations.
const (
	opSubmit   = "run.submit"
	opCancel   = "run.cancel"
	opGet      = "run.get"
	opList     = "run.list"
	opLease    = "lease.take"
	opRenew    = "lease.renew"
	opRelease  = "lease.release"
	opAllow    = "allow"
	opEvents   = "run.events"
	opLeases   = "lease.list"
	opDevices  = "device.list"
	queueGroup = "farm-api"
)

// request is every operation's body; each uses the fields it needs.
type request struct {
	// As names the caller where the farm has no tokens (everyone is an
	// admin there): "user@machine". With tokens the token's user is the
	// actor.
	As      string       `json:"as,omitempty"`
	Command string       `json:"command,omitempty"` // what leases, e.g. "apex run"
	Run     *queue.Run   `json:"run,omitempty"`
	ID      string       `json:"id,omitempty"`
	Lease   lease.Record `json:"lease,omitzero"`
	Lost    string       `json:"lost,omitempty"`
	Action  auth.Action  `json:"action,omitempty"`
	Project string       `json:"project,omitempty"`
	// After and Wait page through a run's events (run.events).
	After uint64        `json:"after,omitempty"`
	Wait  time.Duration `json:"wait,omitempty"`
}

// Device is a registered device with its lease as the caller may see it
// (device.list): whole in the caller's projects, else only that it is
// held (Hidden).
type Device struct {
	registry.Device
	Lease *lease.Record `json:"lease,omitempty"`
}

// Events is a page of a run's events (run.events) and the run's state
// when the page was asked for.
type Events struct {
	Run    queue.Run     `json:"run"`
	Events []queue.Event `json:"events,omitempty"`
}

// Hidden is the holder shown for a lease in a project the caller is not
// a member of.
const Hidden = "(another project)"

// maxWait bounds how long run.events waits for the next event.
const maxWait = 10 * time.Second

type reply struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Kind names the sentinel the error wraps.
	Kind string        `json:"kind,omitempty"`
	Held *lease.Record `json:"held,omitempty"`
}

// leaseReply answers lease.take.
type leaseReply struct {
	Record lease.Record  `json:"record"`
	TTL    time.Duration `json:"ttl"`
	// Key is the lease's key (Record.Key is never marshaled): the caller
	// sends it with every call to the device.
	Key string `json:"key"`
}

var errKinds = map[string]error{
	"forbidden": auth.ErrForbidden,
	"bad_token": auth.ErrBadToken,
	"no_run":    queue.ErrNoRun,
	"state":     queue.ErrState,
	"lost":      lease.ErrLost,
}

// Options configure the API service.
type Options struct {
	// Token is the farm's --token (or its hash): with it every request
	// needs a token; without, everyone is an admin (a farm on loopback).
	Token string
	Log   *slog.Logger
}

type service struct {
	o      Options
	js     jetstream.JetStream
	auth   *auth.Store
	q      *queue.Queue
	leases *lease.Leaser
	reg    *registry.Registry
	// root holds the SHA-256 of presented tokens that matched the
	// farm's --token: a hashed --token costs a bcrypt check each time.
	root sync.Map
}

// Serve answers the API on js's connection until ctx ends. Every
// control-plane member serves it, in one queue group: each request is
// answered by one of them.
func Serve(ctx context.Context, js jetstream.JetStream, o Options) error {
	s := &service{o: o, js: js}
	if s.o.Log == nil {
		s.o.Log = slog.New(slog.DiscardHandler)
	}
	var err error
	if s.auth, err = auth.Open(ctx, js); err != nil {
		return err
	}
	if s.q, err = queue.Open(ctx, js); err != nil {
		return err
	}
	if s.leases, err = lease.New(ctx, js); err != nil {
		return err
	}
	if s.reg, err = registry.Open(ctx, js); err != nil {
		return err
	}
	sub, err := js.Conn().QueueSubscribe(Prefix+">", queueGroup, func(m *nats.Msg) { go s.handle(ctx, m) })
	if err != nil {
		return fmt.Errorf("api: serve: %w", err)
	}
	context.AfterFunc(ctx, func() { sub.Unsubscribe() })
	return nil
}

func (s *service) handle(ctx context.Context, m *nats.Msg) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var rep reply
	res, err := s.do(ctx, m)
	if err != nil {
		rep.Error = err.Error()
		for k, e := range errKinds {
			if errors.Is(err, e) {
				rep.Kind = k
			}
		}
		if h := (*lease.HeldError)(nil); errors.As(err, &h) {
			rep.Kind, rep.Held = "held", &h.Record
		}
	} else if res != nil {
		rep.Result, _ = json.Marshal(res)
	}
	data, _ := json.Marshal(rep)
	m.Respond(data)
}

// principal is whom the request's token speaks for.
func (s *service) principal(ctx context.Context, m *nats.Msg, req request) (auth.Principal, error) {
	if s.o.Token == "" {
		return auth.Principal{User: cmp.Or(req.As, "local"), Role: auth.Admin}, nil
	}
	t := m.Header.Get(TokenHeader)
	sum := sha256.Sum256([]byte(t))
	if _, ok := s.root.Load(sum); ok {
		return auth.Principal{User: "admin", Role: auth.Admin}, nil
	}
	if t != "" && !strings.HasPrefix(t, "apex") && farm.TokenMatches(t, s.o.Token) {
		s.root.Store(sum, true)
		return auth.Principal{User: "admin", Role: auth.Admin}, nil
	}
	// Looked up on every request, so a revoked token stops at once.
	p, err := s.auth.Verify(ctx, t)
	if err != nil {
		return p, fmt.Errorf("%w: give your token with --token or $APEX_FARM_TOKEN (apex farm token create)", err)
	}
	if p.Host {
		return p, fmt.Errorf("%w: a host's join token may not use the farm API", auth.ErrForbidden)
	}
	return p, nil
}

func (s *service) do(ctx context.Context, m *nats.Msg) (any, error) {
	var req request
	if err := json.Unmarshal(m.Data, &req); err != nil {
		return nil, fmt.Errorf("api: bad request: %w", err)
	}
	p, err := s.principal(ctx, m, req)
	if err != nil {
		return nil, err
	}
	switch op := strings.TrimPrefix(m.Subject, Prefix); op {
	case opSubmit:
		if req.Run == nil {
			return nil, errors.New("api: run.submit without a run")
		}
		r := *req.Run
		r.Project = cmp.Or(r.Project, "default")
		if err := s.auth.Allow(ctx, p, auth.Drive, r.Project); err != nil {
			return nil, err
		}
		r.By = p.User
		return s.q.Submit(ctx, r)
	case opCancel:
		r, err := s.run(ctx, p, req.ID, auth.Drive)
		if err != nil {
			return nil, err
		}
		return s.q.Cancel(ctx, r.ID, p.User)
	case opGet:
		return s.run(ctx, p, req.ID, auth.View)
	case opList:
		runs, err := s.q.List(ctx)
		if err != nil {
			return nil, err
		}
		views := Views(ctx, s.auth, p)
		out := make([]queue.Run, 0, len(runs))
		for _, r := range runs {
			if views(r.Project) {
				r.Script = nil
				out = append(out, r)
			}
		}
		return out, nil
	case opEvents:
		r, err := s.run(ctx, p, req.ID, auth.View)
		if err != nil {
			return nil, err
		}
		r.Script = nil
		evs, err := s.q.Events(ctx, r.ID, req.After, 500, min(max(req.Wait, 0), maxWait))
		return Events{Run: r, Events: evs}, err
	case opLeases:
		recs, err := s.leases.List(ctx)
		if err != nil {
			return nil, err
		}
		views := Views(ctx, s.auth, p)
		for i := range recs {
			recs[i] = Shown(recs[i], views)
		}
		return recs, nil
	case opDevices:
		devs, err := s.reg.Devices(ctx)
		if err != nil {
			return nil, err
		}
		recs, err := s.leases.List(ctx)
		if err != nil {
			return nil, err
		}
		views := Views(ctx, s.auth, p)
		held := map[string]lease.Record{}
		for _, r := range recs {
			held[r.Resource] = Shown(r, views)
		}
		out := make([]Device, 0, len(devs))
		for _, d := range devs {
			dv := Device{Device: d}
			if r, ok := held[d.ID]; ok {
				dv.Lease = &r
			}
			out = append(out, dv)
		}
		return out, nil
	case opLease:
		return s.take(ctx, p, req)
	case opRenew, opRelease:
		if p.Role < auth.Admin && !strings.HasPrefix(req.Lease.Holder, p.User+" (") {
			return nil, fmt.Errorf("%w: the lease of %s is %s's, not %s's", auth.ErrForbidden, req.Lease.Resource, req.Lease.Holder, p.User)
		}
		if op == opRenew {
			return nil, s.leases.Renew(ctx, req.Lease)
		}
		var lost error
		if req.Lost != "" {
			lost = errors.New(req.Lost)
		}
		s.leases.Release(ctx, req.Lease, lost)
		return nil, nil
	case opAllow:
		return nil, s.auth.Allow(ctx, p, req.Action, req.Project)
	default:
		return nil, fmt.Errorf("api: unknown operation %q (is this apex older than the farm's?)", op)
	}
}

// Views reports whether p may see a project's runs, run events and who
// holds its leases (auth.View); it asks st once per project.
func Views(ctx context.Context, st *auth.Store, p auth.Principal) func(project string) bool {
	may := map[string]bool{}
	return func(project string) bool {
		ok, seen := may[project]
		if !seen {
			ok = p.Role == auth.Admin || project != "" && st.Allow(ctx, p, auth.View, project) == nil
			may[project] = ok
		}
		return ok
	}
}

// Shown is the lease rec as someone who views (or not, see Views) its
// project may see it: without its key's hash; outside the viewer's
// projects only its resource, that it is held (Hidden), and since when.
func Shown(rec lease.Record, views func(string) bool) lease.Record {
	rec.KeyHash = ""
	if views(rec.Project) {
		return rec
	}
	return lease.Record{Resource: rec.Resource, Holder: Hidden, Since: rec.Since}
}

// run reads run id for p, who must be allowed a on its project.
func (s *service) run(ctx context.Context, p auth.Principal, id string, a auth.Action) (queue.Run, error) {
	r, err := s.q.Get(ctx, id)
	if err != nil {
		return r, err
	}
	if err := s.auth.Allow(ctx, p, a, r.Project); err != nil {
		return queue.Run{}, fmt.Errorf("run %s: %w", id, err)
	}
	return r, nil
}

// take leases a device for p, who must drive the project it is leased
// for (LeaseProject).
func (s *service) take(ctx context.Context, p auth.Principal, req request) (leaseReply, error) {
	dev, err := s.reg.Device(ctx, req.ID)
	if err != nil {
		return leaseReply{}, err
	}
	project, err := LeaseProject(dev, req.Project)
	if err != nil {
		return leaseReply{}, err
	}
	if err := s.auth.Allow(ctx, p, auth.Drive, project); err != nil {
		return leaseReply{}, fmt.Errorf("lease %s: %w", dev.ID, err)
	}
	rec, err := s.leases.Take(ctx, lease.Record{Resource: dev.ID, Holder: p.User + " (" + cmp.Or(req.Command, "apex") + ")", Project: project})
	if err != nil {
		return leaseReply{}, err
	}
	return leaseReply{Record: rec, TTL: s.leases.TTL(), Key: rec.Key}, nil
}

// LeaseProject is the project dev is leased for when asked for project
// asked (may be ""): a device labelled project=P serves P only; any other
// serves the project asked, by default "default".
func LeaseProject(dev registry.Device, asked string) (string, error) {
	dp := dev.Labels["project"]
	if dp != "" && asked != "" && dp != asked {
		return "", fmt.Errorf("%w: %s serves project %s only, not %s", auth.ErrForbidden, dev.ID, dp, asked)
	}
	return cmp.Or(asked, dp, "default"), nil
}
