package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/host"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/internal/patience"
)

// slow runs long enough to be canceled or timed out mid-run.
const slow = wifiOff + "      - sleep: 20000\n"

// TestCancelTimeoutAndProjectLimit: a running run stops when canceled,
// one past its timeout ends timed_out, and a project limited to one run at
// a time never runs two at once although two phones are free.
func TestCancelTimeoutAndProjectLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p := farmtest.Start(ctx, t, 2)
	q := farmtest.Queue(ctx, t, p)
	wait := func(id string, until func(queue.Run) bool) queue.Run {
		t.Helper()
		return farmtest.WaitRun(ctx, t, q, id, until)
	}
	var final func(queue.Run) bool // until the run ends

	t.Run("cancel", func(t *testing.T) {
		r, err := q.Submit(ctx, queue.Run{Name: "slow.yaml", Script: []byte(slow)})
		if err != nil {
			t.Fatal(err)
		}
		wait(r.ID, func(r queue.Run) bool { return r.State == queue.Running })
		if _, err := q.Cancel(ctx, r.ID, "tester"); err != nil {
			t.Fatal(err)
		}
		if end := wait(r.ID, final); end.State != queue.Canceled {
			t.Errorf("canceled run ended %s: %s", end.State, end.Reason)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		r, err := q.Submit(ctx, queue.Run{Name: "slow.yaml", Script: []byte(slow), Timeout: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if end := wait(r.ID, final); end.State != queue.TimedOut {
			t.Errorf("run past its timeout ended %s: %s", end.State, end.Reason)
		}
	})
	t.Run("project limit", func(t *testing.T) {
		if err := q.SetLimit(ctx, "one-at-a-time", 1); err != nil {
			t.Fatal(err)
		}
		ids := farmtest.SubmitN(ctx, t, q, 2, queue.Run{Name: "wifi.yaml", Script: []byte(wifiOff), Project: "one-at-a-time"})
		a, b := wait(ids[0], final), wait(ids[1], final)
		if a.State != queue.Passed || b.State != queue.Passed {
			t.Fatalf("runs ended %s and %s", a.State, b.State)
		}
		first, second := a, b
		if b.Leased.Before(a.Leased) {
			first, second = b, a
		}
		if second.Leased.Before(first.Ended) {
			t.Errorf("the project's second run was leased at %v, before the first ended at %v", second.Leased, first.Ended)
		}
	})
}

// TestHostOfSomeProjects: a host whose join token names project A takes
// A's runs only; B's run, queued first, waits until a host of every
// project comes.
func TestHostOfSomeProjects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p := farmtest.Start(ctx, t, 0)
	_, js := p.Conn()
	farmtest.StartHost(ctx, t, js, host.Options{ID: "h1", Sim: 1, RunsDir: t.TempDir(), Projects: []string{"A"}})
	q := farmtest.Queue(ctx, t, p)
	b, err := q.Submit(ctx, queue.Run{Name: "wifi.yaml", Script: []byte(wifiOff), Project: "B"})
	if err != nil {
		t.Fatal(err)
	}
	if a := farmtest.RunToEnd(ctx, t, q, queue.Run{Name: "wifi.yaml", Script: []byte(wifiOff), Project: "A"}); a.State != queue.Passed || a.Host != "h1" {
		t.Fatalf("A's run: %s on %q: %s", a.State, a.Host, a.Reason)
	}
	if cur, err := q.Get(ctx, b.ID); err != nil || cur.State != queue.Queued {
		t.Fatalf("B's run after A's ran: %s (%v), want still queued", cur.State, err)
	}
	farmtest.StartHost(ctx, t, js, host.Options{ID: "h2", Sim: 1, RunsDir: t.TempDir()})
	if end := farmtest.WaitRun(ctx, t, q, b.ID, nil); end.State != queue.Passed || end.Host != "h2" {
		t.Errorf("B's run: %s on %q: %s, want passed on h2", end.State, end.Host, end.Reason)
	}
}
