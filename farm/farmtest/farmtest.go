// Package farmtest starts a small farm for tests: a one-member control
// plane on loopback and a host of simulated phones, the same pieces
// `apex farm serve` and `apex farm host --sim N` run.
package farmtest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/host"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/plane"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/script"
)

// Start starts a control plane and, when sims > 0, the host "h1" serving
// that many simulated phones; both stop when t ends (the host first).
func Start(ctx context.Context, t testing.TB, sims int) *plane.Plane {
	t.Helper()
	return StartToken(ctx, t, "", sims)
}

// StartToken is Start with the farm's admin token root: every client but
// the plane's own connection (p.Conn) then gives a token.
func StartToken(ctx context.Context, t testing.TB, root string, sims int) *plane.Plane {
	t.Helper()
	p, err := plane.Start(ctx, plane.Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Token: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if sims > 0 {
		_, js := p.Conn()
		StartHost(ctx, t, js, host.Options{ID: "h1", Sim: sims, RunsDir: t.TempDir()})
	}
	return p
}

// StartHost runs a host on js until t ends; o.Load defaults to script.Load.
func StartHost(ctx context.Context, t testing.TB, js jetstream.JetStream, o host.Options) {
	t.Helper()
	if o.Load == nil {
		o.Load = func(data []byte, name string) (*script.Script, error) { return script.Load(data, name, nil) }
	}
	hctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- host.Run(hctx, js, o) }()
	t.Cleanup(func() { stop(); <-done })
}

// Member is a user of a test farm: its token's role and its projects.
type Member struct {
	User     string
	Role     auth.Role
	Projects []string
}

// Users adds projects (with no members yet) and members to the farm of p,
// and returns each member's token, by user.
func Users(ctx context.Context, t testing.TB, p *plane.Plane, projects []string, members ...Member) map[string]string {
	t.Helper()
	_, js := p.Conn()
	st, err := auth.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range projects {
		if err := st.AddProject(ctx, name, "farmtest"); err != nil {
			t.Fatal(err)
		}
	}
	tokens := map[string]string{}
	for _, m := range members {
		if err := st.AddUser(ctx, m.User, "farmtest"); err != nil {
			t.Fatal(err)
		}
		for _, project := range m.Projects {
			if err := st.AddMember(ctx, project, m.User, "farmtest"); err != nil {
				t.Fatal(err)
			}
		}
		if tokens[m.User], err = st.CreateToken(ctx, m.User, m.Role, "farmtest"); err != nil {
			t.Fatal(err)
		}
	}
	return tokens
}

// Leases opens the leases of p.
func Leases(ctx context.Context, t testing.TB, p *plane.Plane) *lease.Leaser {
	t.Helper()
	_, js := p.Conn()
	ls, err := lease.New(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// Queue opens the run queue of p.
func Queue(ctx context.Context, t testing.TB, p *plane.Plane) *queue.Queue {
	t.Helper()
	_, js := p.Conn()
	q, err := queue.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// WifiOff is a script that passes only on a phone whose Settings start as
// the simulated phone's spec says (Wi-Fi on): a run that saw an earlier
// run's leftovers fails.
const WifiOff = `sim:
  launch: com.apex.settings
tasks:
  - name: wifi off
    flow:
      - tap: Network & internet
      - assert: {checked: {id: wifi}}
      - tap: {id: wifi}
      - assert: {notChecked: {id: wifi}}
`

// SubmitN queues n runs like r (each with its own ID) and returns their IDs.
func SubmitN(ctx context.Context, t testing.TB, q *queue.Queue, n int, r queue.Run) []string {
	t.Helper()
	var ids []string
	for range n {
		queued, err := q.Submit(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, queued.ID)
	}
	return ids
}

// RunToEnd queues r and waits until it ends; it returns its final record.
func RunToEnd(ctx context.Context, t testing.TB, q *queue.Queue, r queue.Run) queue.Run {
	t.Helper()
	r, err := q.Submit(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	return WaitRun(ctx, t, q, r.ID, nil)
}

// WaitRun waits until run id's record satisfies until (nil: until the run
// ends) and returns it.
func WaitRun(ctx context.Context, t testing.TB, q *queue.Queue, id string, until func(queue.Run) bool) queue.Run {
	t.Helper()
	if until == nil {
		until = func(r queue.Run) bool { return queue.Final(r.State) }
	}
	var last queue.Run
	if err := q.Watch(ctx, id, func(r queue.Run) bool { last = r; return !until(r) }); err != nil {
		t.Fatalf("run %s: %v (last %s)", id, err, last.State)
	}
	return last
}

// WaitDevices waits until the farm of p has registered n devices.
func WaitDevices(ctx context.Context, t testing.TB, p *plane.Plane, n int) {
	t.Helper()
	_, js := p.Conn()
	reg, err := registry.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil {
		if devs, _ := reg.Devices(ctx); len(devs) == n {
			return
		}
	}
	t.Fatalf("the farm did not register %d devices: %v", n, ctx.Err())
}

// Raw is a bare NATS connection to the farm of p with token, as a client
// that bypasses apex's packages would make, and what the server refused it.
type Raw struct {
	*nats.Conn
	refusals chan error
}

// Dial makes a Raw connection with token; it closes when t ends.
func Dial(t testing.TB, p *plane.Plane, token string) *Raw {
	t.Helper()
	r := &Raw{refusals: make(chan error, 100)}
	nc, err := nats.Connect(p.ClientURL(), nats.UserInfo(farm.User, token), nats.CustomInboxPrefix(farm.InboxPrefix(token)),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case r.refusals <- err:
			default:
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	r.Conn = nc
	return r
}

// Refused waits until the server refuses subject on r (a permissions
// violation naming it), failing t when ctx ends first.
func (r *Raw) Refused(ctx context.Context, t testing.TB, subject string) {
	t.Helper()
	for {
		select {
		case err := <-r.refusals:
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), subject) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("the server did not refuse %s", subject)
		}
	}
}
