package plane_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/api"
	"github.com/apexagent/apex/farm/artifact"
	"github.com/apexagent/apex/farm/audit"
	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/plane"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/records"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/internal/patience"
	"github.com/nats-io/nats.go"
)

// TestTokensAndRoles: an admin makes users, a project and tokens; each
// token gets in with its role's powers on the farm's NATS — a viewer
// reads but queues nothing, a tester queues (through the farm API, in its
// project), a host's join token
// registers devices, none of them reads the tokens — and every admin
// action is in the audit log.
func TestTokensAndRoles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	const root = "the-admins-own-farm-token"
	p := farmtest.StartToken(ctx, t, root, 0)
	nc, js, err := farm.Connect(farm.ConnectOptions{URL: p.ClientURL(), Token: root})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	st, err := auth.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.AddUser(ctx, "alice", "root"))
	must(st.AddUser(ctx, "bob", "root"))
	must(st.AddProject(ctx, "shop", "root"))
	must(st.AddMember(ctx, "shop", "alice", "root"))
	if _, err := st.CreateToken(ctx, "carol", auth.Tester, "root"); err == nil {
		t.Error("a token for a user who does not exist was made")
	}
	viewer, err := st.CreateToken(ctx, "bob", auth.Viewer, "root")
	must(err)
	tester, err := st.CreateToken(ctx, "alice", auth.Tester, "root")
	must(err)
	join, err := st.CreateJoinToken(ctx, "root")
	must(err)
	if len(tester) < len("apexu_")+32 {
		t.Errorf("token %q is shorter than 16 random bytes", tester)
	}

	tests := []struct {
		name, token             string
		connects, queues, joins bool
	}{
		{"viewer", viewer, true, false, false},
		{"tester", tester, true, true, false},
		{"join token", join, true, false, true},
		{"unknown token", "apexu_0123456789abcdef0123456789abcdef0123456789abcdef", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc, js, err := farm.Connect(farm.ConnectOptions{URL: p.ClientURL(), Token: tt.token})
			if (err == nil) != tt.connects {
				t.Fatalf("connect: %v, want connected=%v", err, tt.connects)
			}
			if err != nil {
				return
			}
			defer nc.Close()
			reg, err := registry.Open(ctx, js)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := reg.Devices(ctx); err != nil {
				t.Errorf("list devices: %v", err)
			}
			qctx, qcancel := context.WithTimeout(ctx, 3*time.Second)
			_, err = api.NewClient(nc, tt.token, "").Submit(qctx, queue.Run{Project: "shop", Name: "a.yaml", Script: []byte("tasks: []")})
			qcancel()
			if (err == nil) != tt.queues {
				t.Errorf("queue a run: %v, want queued=%v", err, tt.queues)
			}
			jctx, jcancel := context.WithTimeout(ctx, 3*time.Second)
			err = reg.PutDevice(jctx, registry.Device{ID: "h/" + tt.name, Host: "h", Serial: tt.name, Platform: "android"})
			jcancel()
			if tt.joins && err != nil {
				t.Errorf("register a device: %v", err)
			}
			if !tt.queues && !tt.joins && err == nil {
				t.Error("a viewer registered a device")
			}
			actx, acancel := context.WithTimeout(ctx, 3*time.Second)
			defer acancel()
			s, err := auth.Open(actx, js)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Users(actx); (err == nil) != tt.joins {
				t.Errorf("list the users: %v, want listed=%v (hosts read projects to check membership)", err, tt.joins)
			}
			if err := s.AddUser(actx, "mallory-"+strings.Fields(tt.name)[0], tt.name); err == nil {
				t.Error("a non-admin added a user")
			}
			// Only an admin creates streams: adding a project makes its
			// records and app artifacts stores.
			octx, ocancel := context.WithTimeout(ctx, 10*time.Second)
			defer ocancel()
			if _, err := artifact.New(js).List(octx, "shop"); (err == nil) != (tt.queues || tt.joins) {
				t.Errorf("list project shop's apps: %v, want listed=%v (bob is no member)", err, tt.queues || tt.joins)
			}
			if tt.joins {
				rs, err := records.Open(octx, js)
				if err != nil {
					t.Fatal(err)
				}
				dir := t.TempDir()
				must(os.WriteFile(filepath.Join(dir, "report.html"), []byte("<html>"), 0o644))
				if _, err := rs.Upload(octx, queue.Run{ID: "r1", Project: "shop"}, dir); err != nil {
					t.Errorf("a host uploads a run's record into project shop: %v", err)
				}
			}
		})
	}

	events, err := audit.Read(ctx, js)
	must(err)
	var admin []string
	for _, e := range events {
		switch e.Kind {
		case audit.AdminUserAdded, audit.AdminProjectAdded, audit.AdminMemberAdded, audit.AdminTokenCreated, audit.AdminJoinTokenCreated:
			admin = append(admin, e.Kind)
		}
	}
	if len(admin) != 7 {
		t.Errorf("admin actions in the audit log: %v, want 7", admin)
	}
}

// TestAllow: who may do what on which project.
func TestAllow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := plane.Start(ctx, plane.Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, js := p.Conn()
	st, err := auth.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{st.AddUser(ctx, "alice", "t"), st.AddUser(ctx, "bob", "t"), st.AddProject(ctx, "shop", "t"),
		st.AddMember(ctx, "shop", "alice", "t"), st.AddMember(ctx, "shop", "bob", "t")} {
		if err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		who     auth.Principal
		action  auth.Action
		project string
		ok      bool
	}{
		{auth.Principal{User: "alice", Role: auth.Tester}, auth.Drive, "shop", true},
		{auth.Principal{User: "alice", Role: auth.Tester}, auth.View, "shop", true},
		{auth.Principal{User: "alice", Role: auth.Tester}, auth.Drive, "bank", false},
		{auth.Principal{User: "alice", Role: auth.Tester}, auth.Manage, "shop", false},
		{auth.Principal{User: "bob", Role: auth.Viewer}, auth.View, "shop", true},
		{auth.Principal{User: "bob", Role: auth.Viewer}, auth.Drive, "shop", false},
		{auth.Principal{User: "carol", Role: auth.Admin}, auth.Manage, "bank", true},
		{auth.Principal{Host: true}, auth.View, "shop", false},
	}
	for _, tt := range tests {
		err := st.Allow(ctx, tt.who, tt.action, tt.project)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, auth.ErrForbidden)) {
			t.Errorf("Allow(%+v, %s, %s) = %v, want allowed=%v", tt.who, tt.action, tt.project, err, tt.ok)
		}
	}
}

// TestGuessingTokensIsLimited: an address that sent ten wrong tokens is
// refused for a while, even with the right one.
func TestGuessingTokensIsLimited(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const root = "the-admins-own-farm-token"
	p := farmtest.StartToken(ctx, t, root, 0)
	connect := func(token string) error {
		nc, _, err := farm.Connect(farm.ConnectOptions{URL: p.ClientURL(), Token: token})
		if err == nil {
			nc.Close()
		}
		return err
	}
	if err := connect(root); err != nil {
		t.Fatalf("the right token: %v", err)
	}
	for i := range 10 {
		if err := connect("apexu_guess" + strings.Repeat("0", i)); err == nil {
			t.Fatalf("wrong token %d got in", i)
		}
	}
	if err := connect(root); err == nil {
		t.Error("the right token after ten wrong ones from the same address got in; want it refused until the window ends")
	}
}

// TestJoinTokenOfSomeProjects: a host joined with a token for project shop
// writes shop's records and is refused bank's, and changes no project's
// limit; a join token for a project that does not exist is not made.
func TestJoinTokenOfSomeProjects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := farmtest.StartToken(ctx, t, "the-admins-own-farm-token", 0)
	farmtest.Users(ctx, t, p, []string{"shop", "bank"})
	_, adminJS := p.Conn()
	st, err := auth.Open(ctx, adminJS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateJoinToken(ctx, "root", "nowhere"); err == nil {
		t.Error("a join token for a project that does not exist was made")
	}
	join, err := st.CreateJoinToken(ctx, "root", "shop")
	if err != nil {
		t.Fatal(err)
	}
	if hp, err := st.Verify(ctx, join); err != nil || !hp.Host || !slices.Equal(hp.Projects, []string{"shop"}) {
		t.Fatalf("the join token speaks for %+v (%v), want a host of shop", hp, err)
	}
	nc, js, err := farm.Connect(farm.ConnectOptions{URL: p.ClientURL(), Token: join})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	rs, err := records.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "report.html"), []byte("<html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		project string
		ok      bool
	}{{"shop", true}, {"bank", false}} {
		uctx, ucancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := rs.Upload(uctx, queue.Run{ID: "r-" + tc.project, Project: tc.project}, dir)
		ucancel()
		if (err == nil) != tc.ok {
			t.Errorf("upload a record into project %s: %v, want uploaded=%v", tc.project, err, tc.ok)
		}
	}
	q, err := queue.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	lctx, lcancel := context.WithTimeout(ctx, 3*time.Second)
	defer lcancel()
	if err := q.SetLimit(lctx, "shop", 1); err == nil {
		t.Error("a host set project shop's limit")
	}
}

// TestProjectsFromBeforeGetTheirStores: a project whose app artifacts
// store is missing (added before projects had one) gets it when the plane
// starts again, so its testers can upload (only an admin creates streams).
func TestProjectsFromBeforeGetTheirStores(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(time.Minute))
	defer cancel()
	const root = "the-admins-own-farm-token"
	dir := t.TempDir()
	start := func() *plane.Plane {
		p, err := plane.Start(ctx, plane.Options{DataDir: dir, Listen: "127.0.0.1:0", Token: root})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := start()
	_, js := p.Conn()
	st, err := auth.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddProject(ctx, "shop", "root"); err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteObjectStore(ctx, artifact.Bucket("shop")); err != nil {
		t.Fatal(err)
	}
	p.Close()
	p = start()
	defer p.Close()
	_, js = p.Conn()
	if _, err := js.ObjectStore(ctx, artifact.Bucket("shop")); err != nil {
		t.Errorf("shop's app artifacts store after a restart: %v", err)
	}
}

// TestOldClientIsToldToUpgrade: a client that asks with answers to the
// shared _INBOX (an apex from before each token had its own inbox) is
// refused it, and the control plane's log says to upgrade apex.
func TestOldClientIsToldToUpgrade(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(time.Minute))
	defer cancel()
	lines := make(chan string, 100)
	log := slog.New(slog.NewTextHandler(lineWriter(lines), &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, err := plane.Start(ctx, plane.Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Token: "the-admins-own-farm-token", Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	token := farmtest.Users(ctx, t, p, []string{"shop"}, farmtest.Member{User: "alice", Role: auth.Tester, Projects: []string{"shop"}})["alice"]
	old, err := nats.Connect(p.ClientURL(), nats.UserInfo(farm.User, token), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
	defer rcancel()
	if _, err := api.NewClient(old, token, "").Runs(rctx); err == nil {
		t.Error("a request answered on the shared inbox got through")
	}
	for {
		select {
		case l := <-lines:
			if strings.Contains(l, "older than this control plane") && strings.Contains(l, "upgrade apex") {
				return
			}
		case <-ctx.Done():
			t.Fatal("the control plane's log does not say to upgrade the old client")
		}
	}
}

// lineWriter hands each write (one log line) to lines, dropping it when
// lines is full.
type lineWriter chan string

func (w lineWriter) Write(b []byte) (int, error) {
	select {
	case w <- string(b):
	default:
	}
	return len(b), nil
}
