package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/store"
)

// recordDays records n finished runs in dir, a day apart, the newest
// started now, each with a file.
func recordDays(t *testing.T, dir string, n int) []string {
	t.Helper()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	ids := make([]string, n)
	for i := range n {
		r, err := st.StartRun(ctx, store.Run{Name: "run", Started: time.Now().Add(-time.Duration(n-1-i) * 24 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(r.Dir, "report.html"), make([]byte, 1000), 0o644)
		if err := st.FinishRun(ctx, r.ID, store.StatusPassed, ""); err != nil {
			t.Fatal(err)
		}
		ids[i] = r.ID
	}
	return ids
}

// TestRunsPrune: apex runs prune deletes by count and by age, says what it
// freed, and a dry run deletes nothing.
func TestRunsPrune(t *testing.T) {
	dir := t.TempDir()
	ids := recordDays(t, dir, 5) // ages 4d … 0d
	out := mustRun(t, "runs", "prune", "--dir", dir, "--keep", "3", "--dry-run")
	if !strings.Contains(out, "would delete 2 runs") || !strings.Contains(out, ids[0]) {
		t.Errorf("dry run:\n%s", out)
	}
	out = mustRun(t, "runs", "prune", "--dir", dir, "--keep", "3")
	if !strings.Contains(out, "deleted 2 runs (0.0 MB)") {
		t.Errorf("--keep 3:\n%s", out)
	}
	for _, id := range ids[:2] {
		if _, err := os.Stat(filepath.Join(dir, id)); !os.IsNotExist(err) {
			t.Errorf("run %s's files are still there", id)
		}
	}
	out = mustRun(t, "--json", "runs", "prune", "--dir", dir, "--older-than", "1.5d")
	var res pruneResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Deleted) != 1 || res.Deleted[0].ID != ids[2] || res.Bytes < 1000 {
		t.Errorf("--older-than 1.5d = %s (%v)", out, err)
	}
	mustFail(t, []string{"runs", "prune", "--dir", dir, "--older-than", "soon"}, `"soon" is not a duration`, "30d")
	mustFail(t, []string{"runs", "prune", "--dir", filepath.Join(dir, "none"), "--keep", "1"}, "no runs recorded")
}

// TestRetentionSetting: apex.yaml's runs: section is the retention apex
// runs prune uses without flags (and apex run after recording); its
// errors name the line.
func TestRetentionSetting(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	dir := filepath.Join(work, "runs")
	recordDays(t, dir, 4)
	os.WriteFile(filepath.Join(work, "apex.yaml"), []byte("model:\n  name: m\nruns:\n  keep: 1\n"), 0o644)
	if out := mustRun(t, "runs", "prune", "--dir", dir); !strings.Contains(out, "deleted 3 runs") {
		t.Errorf("runs.keep 1:\n%s", out)
	}
	os.WriteFile(filepath.Join(work, "apex.yaml"), []byte("runs:\n  keep: 5\n  max_agee: 3d\n"), 0o644)
	mustFail(t, []string{"runs", "prune", "--dir", dir}, "apex.yaml:3: runs: unknown setting \"max_agee\"")
	os.WriteFile(filepath.Join(work, "apex.yaml"), []byte("runs:\n  max_age: forever\n"), 0o644)
	mustFail(t, []string{"runs", "prune", "--dir", dir}, "apex.yaml:2: runs.max_age")
	os.Remove(filepath.Join(work, "apex.yaml"))
	if keep, err := configuredRetention(); err != nil || keep != DefaultRetention {
		t.Errorf("with no apex.yaml: %+v, %v; want the default", keep, err)
	}
}

// TestPlaygroundKeepsTheRetention: the playground's tasks are runs like
// apex run's: as each finishes, the runs: retention of apex.yaml prunes
// the older ones (issue 22: each task wrote ~200 KB with no retention).
func TestPlaygroundKeepsTheRetention(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	os.WriteFile(filepath.Join(work, "apex.yaml"), []byte("runs:\n  keep: 2\n"), 0o644)
	dir := filepath.Join(work, "runs")
	url := startPlayground(t, &PlaygroundOptions{Dir: dir})
	for i := range 4 {
		code, m := getJSON(t, "POST", url+"execute", map[string]any{"step": map[string]any{"assert": map[string]string{"exists": "Settings"}}})
		if code != 200 || m["status"] != "done" {
			t.Fatalf("task %d: %d %v %v", i, code, m["status"], m["error"])
		}
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), 0)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs kept after 4 tasks with runs.keep 2: %d, %v", len(runs), err)
	}
}
