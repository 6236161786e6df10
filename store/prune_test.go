package store

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/apexagent/apex/event"
	"github.com/google/go-cmp/cmp"
)

// TestPrune: runs beyond the newest Keep or older than MaxAge go, with
// their steps, events and files; a running run stays whatever its age.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// Five runs a day apart, the oldest still running; names say their age.
	seed := func(t *testing.T) (*Store, map[string]string) {
		s, err := OpenWith(t.TempDir(), &Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		ids := map[string]string{}
		for age := 4; age >= 0; age-- {
			name := []string{"today", "1d", "2d", "3d", "4d-running"}[age]
			r, err := s.StartRun(ctx, Run{Name: name, Started: now.Add(-time.Duration(age) * 24 * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			ids[name] = r.ID
			if _, err := s.AddStep(ctx, Step{RunID: r.ID, Name: "tap", Action: "tap", Status: StepPassed, Before: testPNG(t, 1)}); err != nil {
				t.Fatal(err)
			}
			if err := s.AddEvent(ctx, event.Event{TaskID: r.ID + "/task", ActionType: event.EvPlan}); err != nil {
				t.Fatal(err)
			}
			if age < 4 {
				if err := s.FinishRun(ctx, r.ID, StatusPassed, ""); err != nil {
					t.Fatal(err)
				}
			}
		}
		return s, ids
	}
	tests := []struct {
		name    string
		keep    Retention
		deleted []string
	}{
		{"nothing set keeps all", Retention{}, nil},
		{"keep 2", Retention{Keep: 2}, []string{"2d", "3d"}},
		{"older than 36h", Retention{MaxAge: 36 * time.Hour}, []string{"2d", "3d"}},
		{"either rule", Retention{Keep: 1, MaxAge: 72 * time.Hour}, []string{"1d", "2d", "3d"}},
		{"keep more than there are", Retention{Keep: 10}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ids := seed(t)
			dry, err := s.Prune(ctx, tt.keep, true)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Prune(ctx, tt.keep, false)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.deleted, names(got)); diff != "" {
				t.Errorf("deleted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(names(dry), names(got)); diff != "" {
				t.Errorf("the dry run differs (-dry +real):\n%s", diff)
			}
			left, _ := s.Runs(ctx, 0)
			if len(left)+len(got) != 5 {
				t.Errorf("%d runs left after deleting %d of 5", len(left), len(got))
			}
			for _, name := range tt.deleted {
				id := ids[name]
				if _, err := os.Stat(s.RunDir(id)); !os.IsNotExist(err) {
					t.Errorf("%s: its directory is still there (%v)", name, err)
				}
				if steps, _ := s.Steps(ctx, id); len(steps) != 0 {
					t.Errorf("%s: %d steps left", name, len(steps))
				}
				if evs, _ := s.RunEvents(ctx, id); len(evs) != 0 {
					t.Errorf("%s: %d events left", name, len(evs))
				}
			}
			if _, err := s.Run(ctx, ids["4d-running"]); err != nil {
				t.Errorf("the running run was deleted: %v", err)
			}
		})
	}
	s, _ := seed(t)
	if _, err := s.Prune(ctx, Retention{Keep: -1}, false); err == nil {
		t.Error("Keep -1 was accepted")
	}
}

func names(runs []Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Name)
	}
	return out
}
