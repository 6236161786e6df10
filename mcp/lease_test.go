package mcp_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/mcp"
)

func TestSecondSessionIsRefused(t *testing.T) {
	l, hosts := simHosts(t, 2)
	id, other := simID(l, 0), simID(l, 1)
	s := newServer(t, &mcp.Options{Hosts: hosts})
	a, b := connect(t, s), connect(t, s)

	a.ok("device_open", map[string]any{"device": id})
	want := "device " + id + " is in use by another session"
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"device_open", map[string]any{"device": id}},
		{"device_open", map[string]any{"device": l.Devices()[0].Serial}},
		{"observe", map[string]any{"device": id}},
		{"tap", map[string]any{"device": id, "locate": "Shop"}},
		{"device_screenshot", map[string]any{"device": id}},
		{"device_close", map[string]any{"device": id}},
	} {
		if msg := b.fails(tc.tool, tc.args); !strings.Contains(msg, want) {
			t.Errorf("%s by the second session: %q, want %q", tc.tool, msg, want)
		}
	}
	if list := b.ok("device_list", nil); !strings.Contains(list, "in use by another session") {
		t.Errorf("device_list for the second session:\n%s", list)
	}
	// The other phone is free, and the first session keeps driving its own.
	b.ok("device_open", map[string]any{"device": other})
	a.ok("observe", map[string]any{"device": id})
	if msg := a.fails("observe", map[string]any{"device": other}); !strings.Contains(msg, "in use by another session") {
		t.Errorf("first session on the second's device: %s", msg)
	}

	a.ok("device_close", map[string]any{"device": id})
	b.ok("device_open", map[string]any{"device": id})
	b.ok("observe", map[string]any{"device": id})
}

func TestSessionEndReleases(t *testing.T) {
	l, hosts := simHosts(t, 1)
	id := simID(l, 0)
	s := newServer(t, &mcp.Options{Hosts: hosts})
	a, b := connect(t, s), connect(t, s)
	a.ok("device_open", map[string]any{"device": id})
	b.fails("device_open", map[string]any{"device": id})
	a.cs.Close()
	b.openWhenReleased(id)
	b.ok("observe", map[string]any{"device": id})
}

func TestIdleLeaseEnds(t *testing.T) {
	l, hosts := simHosts(t, 1)
	id := simID(l, 0)
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := newServer(t, &mcp.Options{Hosts: hosts, IdleTimeout: time.Minute, Now: clk.Now})
	a, b := connect(t, s), connect(t, s)
	a.ok("device_open", map[string]any{"device": id})
	clk.Add(50 * time.Second)
	a.ok("observe", map[string]any{"device": id}) // a tool call keeps the lease
	clk.Add(50 * time.Second)
	b.fails("device_open", map[string]any{"device": id})
	if n := s.Sweep(); n != 0 {
		t.Errorf("Sweep ended %d leases in use", n)
	}
	clk.Add(11 * time.Second)
	if list := b.ok("device_list", nil); !strings.Contains(list, "free") {
		t.Errorf("device_list after the idle timeout:\n%s", list)
	}
	b.ok("device_open", map[string]any{"device": id})
	if msg := a.fails("observe", map[string]any{"device": id}); !strings.Contains(msg, "in use by another session") {
		t.Errorf("the idle session after takeover: %s", msg)
	}

	clk.Add(2 * time.Minute)
	if n := s.Sweep(); n != 1 {
		t.Errorf("Sweep ended %d leases, want 1", n)
	}
	if msg := b.fails("observe", map[string]any{"device": id}); !strings.Contains(msg, "not open in this session") {
		t.Errorf("after the sweep: %s", msg)
	}
}

func TestDeviceErrors(t *testing.T) {
	l, hosts := simHosts(t, 1)
	s := newServer(t, &mcp.Options{Hosts: hosts})
	c := connect(t, s)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"device_open", map[string]any{"device": "nosuch"}, `device "nosuch"`},
		{"observe", map[string]any{}, `missing properties: ["device"]`},
		{"observe", map[string]any{"device": " "}, "device is required"},
		{"tap", map[string]any{"locate": "Shop"}, "device is required"},
		{"tap", map[string]any{"device": 7, "locate": "Shop"}, "device must be a string"},
		{"scene_diff", map[string]any{"device": simID(l, 0)}, "call device_open first"},
	} {
		if msg := c.fails(tc.tool, tc.args); !strings.Contains(msg, tc.want) {
			t.Errorf("%s(%v): %q, want %q", tc.tool, tc.args, msg, tc.want)
		}
	}
	// A partial id opens the one device it names; tools then want the full id.
	open := c.ok("device_open", map[string]any{"device": "sim"})
	if !strings.Contains(open, simID(l, 0)) {
		t.Errorf("device_open by part of the id: %s", open)
	}
	if msg := c.fails("scene_diff", map[string]any{"device": simID(l, 0)}); !strings.Contains(msg, "call observe first") {
		t.Errorf("scene_diff before observe: %s", msg)
	}
}

func TestLeaseAcrossProcesses(t *testing.T) {
	l, hosts := simHosts(t, 1)
	id := simID(l, 0)
	dir := t.TempDir()
	// Two servers sharing a lock directory stand for two apex mcp processes.
	a := connect(t, newServer(t, &mcp.Options{Hosts: hosts, LockDir: dir}))
	b := connect(t, newServer(t, &mcp.Options{Hosts: hosts, LockDir: dir}))
	a.ok("device_open", map[string]any{"device": id})
	want := fmt.Sprintf("device %s is in use by PID %d (apex mcp for test): it is leased until that process releases it or ends", id, os.Getpid())
	if msg := b.fails("device_open", map[string]any{"device": id}); !strings.Contains(msg, want) {
		t.Errorf("second process: %q, want %q", msg, want)
	}
	a.ok("device_close", map[string]any{"device": id})
	b.ok("device_open", map[string]any{"device": id})
	b.ok("observe", map[string]any{"device": id})
}

// TestBusyLeaseDoesNotExpire: a call running past the idle timeout (a long
// act) keeps its lease.
func TestBusyLeaseDoesNotExpire(t *testing.T) {
	l, hosts := simHosts(t, 1)
	id := simID(l, 0)
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	started, finish := make(chan struct{}), make(chan struct{})
	slow := slowAI{started: started, finish: finish, advance: func() { clk.Add(time.Hour) }}
	s := newServer(t, &mcp.Options{Hosts: hosts, IdleTimeout: time.Minute, Now: clk.Now, AI: slow})
	a, b := connect(t, s), connect(t, s)
	a.ok("device_open", map[string]any{"device": id})
	done := make(chan string)
	go func() { done <- textOf(a.call("act", map[string]any{"device": id, "goal": "something slow"})) }()
	<-started
	if n := s.Sweep(); n != 0 {
		t.Errorf("Sweep ended %d leases during a call", n)
	}
	if msg := b.fails("device_open", map[string]any{"device": id}); !strings.Contains(msg, "in use by another session") {
		t.Errorf("device_open during the call: %s", msg)
	}
	close(finish)
	if out := <-done; !strings.Contains(out, `"status": "done"`) {
		t.Errorf("act: %s", out)
	}
	// The idle timer restarts when the call ends.
	if n := s.Sweep(); n != 0 {
		t.Errorf("Sweep ended %d leases right after a call", n)
	}
	clk.Add(2 * time.Minute)
	if n := s.Sweep(); n != 1 {
		t.Errorf("Sweep ended %d leases after the timeout, want 1", n)
	}
}

// slowAI's Act waits for finish, letting an hour pass meanwhile.
type slowAI struct {
	fakeAI
	started, finish chan struct{}
	advance         func()
}

func (s slowAI) Act(ctx context.Context, t agent.Task) (*agent.Result, error) {
	s.advance()
	close(s.started)
	<-s.finish
	return &agent.Result{Status: "done", Summary: "slow"}, nil
}

// TestLeaseLeavesNoFile: a lease released cleanly removes its lock file,
// and the next one takes the device again.
func TestLeaseLeavesNoFile(t *testing.T) {
	l, hosts := simHosts(t, 1)
	id := simID(l, 0)
	dir := t.TempDir()
	a := connect(t, newServer(t, &mcp.Options{Hosts: hosts, LockDir: dir}))
	for range 2 {
		a.ok("device_open", map[string]any{"device": id})
		if files, _ := os.ReadDir(dir); len(files) != 1 {
			t.Fatalf("%d lock files while the device is leased, want 1", len(files))
		}
		a.ok("device_close", map[string]any{"device": id})
		if files, _ := os.ReadDir(dir); len(files) != 0 {
			t.Errorf("lock files left after device_close: %v", files)
		}
	}
}
