package api_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/api"
	"github.com/apexagent/apex/farm/audit"
	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/plane"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/records"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/internal/patience"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// twoProjects starts a farm with projects A and B, a tester alice of A
// (her token), a device of each project (h1/A, h1/B, labelled with it)
// and a run of each, queued by the admin.
func twoProjects(ctx context.Context, t *testing.T) (*plane.Plane, jetstream.JetStream, string, map[string]queue.Run) {
	t.Helper()
	p := farmtest.StartToken(ctx, t, "the-farm-admin-token", 0)
	_, adminJS := p.Conn()
	token := farmtest.Users(ctx, t, p, []string{"A", "B"}, farmtest.Member{User: "alice", Role: auth.Tester, Projects: []string{"A"}})["alice"]
	reg, err := registry.Open(ctx, adminJS)
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(ctx, adminJS)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]queue.Run{}
	for _, proj := range []string{"A", "B"} {
		d := registry.Device{ID: "h1/" + proj, Host: "h1", Serial: proj, Platform: "android",
			Labels: map[string]string{"project": proj}, Health: registry.Health{State: "device"}}
		if err := reg.PutDevice(ctx, d); err != nil {
			t.Fatal(err)
		}
		r, err := q.Submit(ctx, queue.Run{Project: proj, Name: proj + ".yaml", Script: []byte("tasks: []"), Pin: "nowhere/" + proj})
		if err != nil {
			t.Fatal(err)
		}
		runs[proj] = r
	}
	return p, adminJS, token, runs
}

// TestMembershipOnEveryRequest: a tester of project A queues, cancels,
// leases and reads in A, and is refused each in project B — through the
// farm API with an error naming B and the role it needs, and directly on
// NATS, where its connection may not write runs or leases nor read B's
// records.
func TestMembershipOnEveryRequest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p, adminJS, token, runs := twoProjects(ctx, t)
	// Each run has a record.
	rs, err := records.Open(ctx, adminJS)
	if err != nil {
		t.Fatal(err)
	}
	for proj, r := range runs {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "report.html"), []byte("<html>"+proj), 0o644)
		if _, err := rs.Upload(ctx, r, dir); err != nil {
			t.Fatal(err)
		}
	}

	nc, js, err := farm.Connect(farm.ConnectOptions{URL: p.ClientURL(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := api.NewClient(nc, token, "")
	refused := func(t *testing.T, err error, project, role string) {
		t.Helper()
		if !errors.Is(err, auth.ErrForbidden) || !strings.Contains(err.Error(), "project "+project) || !strings.Contains(err.Error(), role) {
			t.Errorf("got %v, want a refusal naming project %s and the role %s", err, project, role)
		}
	}
	ops := []struct {
		name string
		do   func(project string) error
		role string
	}{
		{"queue", func(proj string) error {
			_, err := c.Submit(ctx, queue.Run{Project: proj, Name: "q.yaml", Script: []byte("tasks: []"), Pin: "nowhere/x"})
			return err
		}, "tester"},
		{"lease", func(proj string) error {
			l, err := c.Lease(ctx, "h1/"+proj, "", "test")
			if err == nil {
				if l.Record().Holder != "alice (test)" {
					t.Errorf("the lease's holder: %q, want alice's", l.Record().Holder)
				}
				l.Release(ctx)
			}
			return err
		}, "tester"},
		{"read", func(proj string) error { _, err := c.Run(ctx, runs[proj].ID); return err }, "viewer"},
		{"cancel", func(proj string) error { _, err := c.Cancel(ctx, runs[proj].ID); return err }, "tester"},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			if err := op.do("A"); err != nil {
				t.Errorf("in her project A: %v", err)
			}
			refused(t, op.do("B"), "B", op.role)
		})
	}
	t.Run("list", func(t *testing.T) {
		got, err := c.Runs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			if r.Project != "A" || r.Script != nil {
				t.Errorf("listed run %s of project %s (script %q): want project A's only, without scripts", r.ID, r.Project, r.Script)
			}
		}
		if len(got) == 0 {
			t.Error("no runs listed; want project A's")
		}
	})
	t.Run("lease for another project", func(t *testing.T) {
		_, err := c.Lease(ctx, "h1/B", "A", "test")
		if !errors.Is(err, auth.ErrForbidden) || !strings.Contains(err.Error(), "serves project B only") {
			t.Errorf("got %v, want the device's project named", err)
		}
	})

	// The same on NATS directly: each is refused by the plane's permissions.
	direct := []struct {
		name string
		do   func(ctx context.Context) error
	}{
		{"queue", func(ctx context.Context) error {
			_, err := js.Publish(ctx, farm.PoolSubject("android"), []byte(runs["B"].ID))
			return err
		}},
		{"write a run", func(ctx context.Context) error {
			kv, err := js.KeyValue(ctx, farm.BucketRuns)
			if err == nil {
				_, err = kv.Create(ctx, "rmallory", []byte(`{"project":"B"}`))
			}
			return err
		}},
		{"lease", func(ctx context.Context) error {
			ls, err := lease.New(ctx, js)
			if err == nil {
				_, err = ls.Take(ctx, lease.Record{Resource: "h1/B", Holder: "alice"})
			}
			return err
		}},
		{"read B's records", func(ctx context.Context) error {
			obs, err := js.ObjectStore(ctx, records.Bucket("B"))
			if err == nil {
				_, err = obs.GetBytes(ctx, runs["B"].ID+"/report.html")
			}
			return err
		}},
	}
	for _, d := range direct {
		t.Run("direct "+d.name, func(t *testing.T) {
			dctx, dcancel := context.WithTimeout(ctx, 3*time.Second)
			defer dcancel()
			if err := d.do(dctx); err == nil {
				t.Error("done on NATS directly; want it refused")
			}
		})
	}
	// Her own project's records she reads directly.
	obs, err := js.ObjectStore(ctx, records.Bucket("A"))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := obs.GetBytes(ctx, runs["A"].ID+"/report.html"); err != nil || string(b) != "<html>A" {
		t.Errorf("project A's record: %q, %v", b, err)
	}
}

// TestRevokedTokenStopsAtOnce: revoking alice's token closes the NATS
// connection she made with it, refuses her reconnection and her API
// requests (also sent over someone else's connection), and is in the
// audit log.
func TestRevokedTokenStopsAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := farmtest.StartToken(ctx, t, "the-farm-admin-token", 0)
	_, adminJS := p.Conn()
	tokens := farmtest.Users(ctx, t, p, []string{"A"}, farmtest.Member{User: "alice", Role: auth.Tester, Projects: []string{"A"}},
		farmtest.Member{User: "bob", Role: auth.Tester, Projects: []string{"A"}})
	nc, _, err := farm.Connect(farm.ConnectOptions{URL: p.ClientURL(), Token: tokens["alice"]})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	dropped := make(chan struct{}, 1)
	nc.SetDisconnectErrHandler(func(*nats.Conn, error) {
		select {
		case dropped <- struct{}{}:
		default:
		}
	})
	bob, _, err := farm.Connect(farm.ConnectOptions{URL: p.ClientURL(), Token: tokens["bob"]})
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	run := queue.Run{Project: "A", Name: "a.yaml", Script: []byte("tasks: []"), Pin: "nowhere/x"}
	if _, err := api.NewClient(nc, tokens["alice"], "").Submit(ctx, run); err != nil {
		t.Fatalf("before the revocation: %v", err)
	}
	st, err := auth.Open(ctx, adminJS)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := st.Revoke(ctx, nil, []string{"alice"}, "admin"); n != 1 || err != nil {
		t.Fatalf("revoke alice's tokens: %d, %v", n, err)
	}
	select {
	case <-dropped:
	case <-ctx.Done():
		t.Fatal("alice's connection stayed open after her token was revoked")
	}
	if c, _, err := farm.Connect(farm.ConnectOptions{URL: p.ClientURL(), Token: tokens["alice"]}); err == nil {
		c.Close()
		t.Error("alice connected again with a revoked token")
	}
	if _, err := api.NewClient(bob, tokens["alice"], "").Submit(ctx, run); !errors.Is(err, auth.ErrBadToken) {
		t.Errorf("an API request with the revoked token: %v, want ErrBadToken", err)
	}
	if _, err := api.NewClient(bob, tokens["bob"], "").Submit(ctx, run); err != nil {
		t.Errorf("bob's token after alice's revocation: %v", err)
	}
	events, err := audit.Read(ctx, adminJS)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events, func(e audit.Event) bool { return e.Kind == audit.AdminTokenRevoked && e.Resource == "user/alice" }) {
		t.Error("no revocation of alice's token in the audit log")
	}
}

// TestReadsFollowMembership: a tester of project A reads A's runs, their
// events and who holds A's leases through the farm API, and of project B
// only that its devices are held; on NATS directly the server refuses
// her connection every read of runs, run events, leases and the audit
// log, and every subscription but to her own inbox.
func TestReadsFollowMembership(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p, adminJS, token, runs := twoProjects(ctx, t)
	q, err := queue.Open(ctx, adminJS)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := lease.New(ctx, adminJS)
	if err != nil {
		t.Fatal(err)
	}
	for proj, r := range runs {
		if err := q.Publish(ctx, r.ID, queue.Event{Kind: "step", Step: 1, Steps: 1, Name: "secret step of " + proj}); err != nil {
			t.Fatal(err)
		}
		if _, err := ls.Take(ctx, lease.Record{Resource: "h1/" + proj, Holder: "host-" + proj, Run: r.ID, Project: proj}); err != nil {
			t.Fatal(err)
		}
	}

	nc, _, err := farm.Connect(farm.ConnectOptions{URL: p.ClientURL(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := api.NewClient(nc, token, "")
	t.Run("events", func(t *testing.T) {
		page, err := c.Events(ctx, runs["A"].ID, 0, 0)
		if err != nil || len(page.Events) != 1 || page.Events[0].Name != "secret step of A" || page.Run.ID != runs["A"].ID {
			t.Errorf("A's events: %+v, %v", page, err)
		}
		// Asked after the last one, none come within the wait.
		if page, err := c.Events(ctx, runs["A"].ID, page.Events[0].Seq, 100*time.Millisecond); err != nil || len(page.Events) != 0 {
			t.Errorf("A's events after the last: %+v, %v", page.Events, err)
		}
		if _, err := c.Events(ctx, runs["B"].ID, 0, 0); !errors.Is(err, auth.ErrForbidden) {
			t.Errorf("B's events: %v, want ErrForbidden", err)
		}
	})
	check := func(t *testing.T, rec lease.Record) {
		t.Helper()
		if rec.KeyHash != "" {
			t.Errorf("lease of %s shows its key's hash", rec.Resource)
		}
		switch rec.Resource {
		case "h1/A":
			if rec.Holder != "host-A" || rec.Run != runs["A"].ID {
				t.Errorf("A's lease: %+v, want its holder and run", rec)
			}
		case "h1/B":
			if rec.Holder != api.Hidden || rec.Run != "" || rec.Fence != 0 || rec.Project != "" {
				t.Errorf("B's lease: %+v, want only that it is held", rec)
			}
		}
	}
	t.Run("leases", func(t *testing.T) {
		recs, err := c.Leases(ctx)
		if err != nil || len(recs) != 2 {
			t.Fatalf("leases: %+v, %v", recs, err)
		}
		for _, r := range recs {
			check(t, r)
		}
	})
	t.Run("devices", func(t *testing.T) {
		devs, err := c.Devices(ctx)
		if err != nil || len(devs) != 2 {
			t.Fatalf("devices: %+v, %v", devs, err)
		}
		for _, d := range devs {
			if d.Lease == nil {
				t.Errorf("device %s shows no lease", d.ID)
				continue
			}
			check(t, *d.Lease)
		}
	})

	// A raw connection with her token: the server refuses each read.
	raw := farmtest.Dial(t, p, token)
	direct := []struct {
		name, subject string
		do            func() error
	}{
		{"get B's run", "$JS.API.DIRECT.GET.KV_" + farm.BucketRuns, func() error {
			_, err := raw.Request("$JS.API.DIRECT.GET.KV_"+farm.BucketRuns+".$KV."+farm.BucketRuns+"."+runs["B"].ID, nil, 2*time.Second)
			return err
		}},
		{"get B's lease", "$JS.API.DIRECT.GET.KV_" + farm.BucketLeases, func() error {
			_, err := raw.Request("$JS.API.DIRECT.GET.KV_"+farm.BucketLeases+".$KV."+farm.BucketLeases+"."+farm.Key("h1/B"), nil, 2*time.Second)
			return err
		}},
		{"watch the runs", "$JS.API.CONSUMER.CREATE.KV_" + farm.BucketRuns, func() error {
			_, err := raw.Request("$JS.API.CONSUMER.CREATE.KV_"+farm.BucketRuns, []byte(`{"stream_name":"KV_`+farm.BucketRuns+`","config":{}}`), 2*time.Second)
			return err
		}},
		{"follow B's events", "$JS.API.CONSUMER.CREATE." + farm.StreamEvents, func() error {
			_, err := raw.Request("$JS.API.CONSUMER.CREATE."+farm.StreamEvents+".x.events."+runs["B"].ID+".>", []byte(`{}`), 2*time.Second)
			return err
		}},
		{"read the audit log", "$JS.API.STREAM.MSG.GET." + farm.StreamAudit, func() error {
			_, err := raw.Request("$JS.API.STREAM.MSG.GET."+farm.StreamAudit, []byte(`{"seq":1}`), 2*time.Second)
			return err
		}},
		{"subscribe to run events", "events.>", func() error { _, err := raw.SubscribeSync("events.>"); return err }},
		{"subscribe to lease changes", "$KV." + farm.BucketLeases + ".>", func() error {
			_, err := raw.SubscribeSync("$KV." + farm.BucketLeases + ".>")
			return err
		}},
		{"subscribe to others' answers", "_INBOX.>", func() error { _, err := raw.SubscribeSync("_INBOX.>"); return err }},
		{"subscribe to everything", "Subscription to \">\"", func() error { _, err := raw.SubscribeSync(">"); return err }},
	}
	for _, d := range direct {
		t.Run("direct "+d.name, func(t *testing.T) {
			d.do()
			raw.Refused(ctx, t, d.subject)
		})
	}
	// Her own inbox works: the farm API answers there.
	if _, err := api.NewClient(raw.Conn, token, "").Run(ctx, runs["A"].ID); err != nil {
		t.Errorf("an API request on the raw connection: %v", err)
	}
}
