package attack

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKilledPlaygroundRunIsLost: a playground killed with SIGKILL in the
// middle of a task leaves its run "running"; the next playground on the
// same runs directory marks it lost, and /runs, apex report's listing and
// the run's report say so, with the reason.
func TestKilledPlaygroundRunIsLost(t *testing.T) {
	dir := t.TempDir()
	url, p := playground(t, dir, nil, "--sim")
	if code, m := call(t, "POST", url+"execute", "", map[string]any{"step": map[string]any{"sleep": 600000}, "async": true}); code != 202 {
		t.Fatalf("POST /execute (a long sleep): %d %v", code, m)
	}
	id := waitRun(t, url, "running")
	p.cmd.Process.Kill() // SIGKILL: no deferred code runs
	<-p.done

	url, _ = playground(t, dir, nil, "--sim")
	_, m := call(t, "GET", url+"runs", "", nil)
	runs, _ := m["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("GET /runs after the restart = %v, want the killed run", m)
	}
	r := runs[0].(map[string]any)
	reason, _ := r["reason"].(string)
	if r["id"] != id || r["status"] != "lost" || !strings.Contains(reason, "killed or crashed") {
		t.Fatalf("the killed run in /runs = %v, want status lost with the reason", r)
	}

	runsDir := filepath.Join(dir, "runs")
	list := apex(t, "report", "--dir", runsDir)
	if !strings.Contains(list, id) || !strings.Contains(list, "lost") {
		t.Errorf("apex report's listing:\n%s\nwant run %s as lost", list, id)
	}
	path := strings.TrimSpace(apex(t, "report", "--dir", runsDir, id))
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("apex report %s: %v", id, err)
	}
	for _, want := range []string{`class="badge b-lost">lost<`, "killed or crashed"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report of the killed run lacks %q", want)
		}
	}
}

// waitRun polls GET /runs until its newest run has status, and returns
// its id.
func waitRun(t *testing.T, url, status string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for tick := time.NewTicker(50 * time.Millisecond); time.Now().Before(deadline); <-tick.C {
		_, m := call(t, "GET", url+"runs", "", nil)
		if runs, _ := m["runs"].([]any); len(runs) > 0 {
			if r := runs[0].(map[string]any); r["status"] == status {
				return r["id"].(string)
			}
		}
	}
	t.Fatalf("no run became %s within 60s", status)
	return ""
}

// apex runs the apex binary with args and returns its standard output.
func apex(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, apexBin, args...)
	cmd.Env = cleanEnv()
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("apex %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}
