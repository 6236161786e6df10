package console_test

import (
	"bufio"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/audit"
	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/internal/patience"
)

// TestRevokedTokenEndsConsoleSessions: once alice's token is revoked, the
// console refuses her session's cookie or header and her ticket, and the
// MJPEG stream she had open through the front door ends, and the lease
// the console held for her is released at once (not when it lapses), with
// the reason in the audit log.
func TestRevokedTokenEndsConsoleSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p, srv := doorFarm(ctx, t, &seen{}, nil)
	_, js := p.Conn()
	tokens := farmtest.Users(ctx, t, p, []string{"default"}, farmtest.Member{User: "alice", Role: auth.Tester, Projects: []string{"default"}})
	do := consoleClient(ctx, t, srv.URL, tokens)
	waitDevice(ctx, t, do, "alice", "h1/sim-1")
	const door = "/devices/h1/sim-1/playground"
	ticket := openPlayground(t, do, "alice", "h1/sim-1")
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+door+"/mjpeg", nil)
	req.Header.Set("Authorization", "Bearer "+tokens["alice"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("mjpeg: %v %v", resp, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "Content-Type: image/jpeg") {
	}

	st, err := auth.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Revoke(ctx, []string{tokens["alice"]}, nil, "admin"); err != nil {
		t.Fatal(err)
	}
	// The stream ends: the scanner runs out before the test's deadline.
	for sc.Scan() {
	}
	if ctx.Err() != nil {
		t.Fatal("the stream outlived the revocation of its token")
	}
	ls, err := lease.New(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, held, err := ls.Current(ctx, "h1/sim-1"); err == nil && !held {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the console kept holding the device for a revoked token")
		}
		farm.Sleep(ctx, 50*time.Millisecond)
	}
	events, err := audit.Read(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events, func(e audit.Event) bool { return e.Kind == audit.LeaseRevoked && e.Resource == "h1/sim-1" }) {
		t.Error("no lease.revoked of h1/sim-1 in the audit log")
	}
	for _, tc := range []struct{ user, path string }{
		{"alice", "/api/devices"},
		{"", door + "/screenshot?ticket=" + ticket},
	} {
		if code, data, _ := do(tc.user, "GET", tc.path, nil); code != http.StatusUnauthorized {
			t.Errorf("GET %s as %q after the revocation: %d %s, want 401", tc.path, tc.user, code, data)
		}
	}
}
