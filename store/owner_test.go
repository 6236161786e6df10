package store

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// deadPID is the PID of a process that ran and ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatalf("a child that ends: %v", err)
	}
	return cmd.Process.Pid
}

// Runs left "running" by a process that is gone are marked lost when a
// store opens; runs of live processes, of other hosts and of unknown
// owners are left alone.
func TestLostRuns(t *testing.T) {
	ctx := context.Background()
	me := self()
	dead := deadPID(t)
	cases := []struct {
		name  string
		owner Owner
		lost  bool
		skip  bool
	}{
		{"owner ended", Owner{PID: dead, Host: me.Host}, true, false},
		{"pid reused by a later process", Owner{PID: me.PID, Host: me.Host, Start: me.Start - 1}, true, me.Start == 0},
		{"owner alive", me, false, false},
		{"another host", Owner{PID: dead, Host: me.Host + "-elsewhere"}, false, false},
		{"no owner recorded", Owner{}, false, false},
	}
	dir := t.TempDir()
	s := openTest(t, dir)
	ids := map[string]string{}
	stepEnd := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, c := range cases {
		r, err := s.StartRun(ctx, Run{Name: c.name})
		if err != nil {
			t.Fatal(err)
		}
		if r.Owner == nil || *r.Owner != me {
			t.Fatalf("StartRun owner = %+v; want this process %+v", r.Owner, me)
		}
		if _, err := s.AddStep(ctx, Step{RunID: r.ID, Status: StepPassed, Started: stepEnd.Add(-time.Second), Duration: time.Second}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.wdb.ExecContext(ctx, `UPDATE runs SET owner_pid = ?, owner_host = ?, owner_start = ? WHERE id = ?`,
			c.owner.PID, c.owner.Host, c.owner.Start, r.ID); err != nil {
			t.Fatal(err)
		}
		ids[c.name] = r.ID
	}
	s2 := openTest(t, dir)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.skip {
				t.Skip("process start times are not read on this system")
			}
			r, err := s2.Run(ctx, ids[c.name])
			if err != nil {
				t.Fatal(err)
			}
			if !c.lost {
				if r.Status != StatusRunning || !r.Ended.IsZero() {
					t.Fatalf("run = %s (ended %v); want still running", r.Status, r.Ended)
				}
				return
			}
			if r.Status != StatusLost || !r.Ended.Equal(stepEnd) {
				t.Fatalf("run = %s ended %v; want lost, ended when its last step did (%v)", r.Status, r.Ended, stepEnd)
			}
			for _, want := range []string{"pid " + strconv.Itoa(c.owner.PID), c.owner.Host, "killed or crashed"} {
				if !strings.Contains(r.Reason, want) {
					t.Errorf("reason %q lacks %q", r.Reason, want)
				}
			}
			var file Run
			data, err := os.ReadFile(filepath.Join(r.Dir, "run.json"))
			if err != nil || json.Unmarshal(data, &file) != nil || file.Status != StatusLost || file.Reason != r.Reason {
				t.Errorf("run.json = %s (%v); want status lost with the reason", data, err)
			}
		})
	}
	// A lost run is not finished again, nor can anyone set lost by hand.
	if err := s2.FinishRun(ctx, ids["owner alive"], StatusLost, "x"); err == nil {
		t.Error("FinishRun(lost) succeeded; lost is only found, never given")
	}
}
