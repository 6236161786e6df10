package attack

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEndlessShellStep: apex run of a runAdbShell step that loops for ever
// printing 32 KiB lines ends at the step's timeout with a failure saying
// so, keeps 1 MiB of output with a marker line, and the apex process stays
// under 200 MB of memory (it reached 10 GB before the bound).
func TestEndlessShellStep(t *testing.T) {
	dir := t.TempDir()
	src := `android: {}
tasks:
  - name: endless
    flow:
      - runAdbShell: "s=x; for k in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do s=$s$s; done; while :; do echo $s; done"
        timeout: 5s
`
	file := filepath.Join(dir, "endless.yaml")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(dir, "runs")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, apexBin, "run", "--sim", "--report-dir", runs, "--json", file)
	cmd.Env = cleanEnv()
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("apex run did not end within 3 minutes of a 5 s step")
	}
	if err == nil {
		t.Fatalf("apex run of an endless step succeeded: %s", out)
	}
	if rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss; rss > 200<<10 { // KiB on Linux
		t.Errorf("apex run reached %d MB of memory, want under 200 MB", rss>>10)
	}
	matches, _ := filepath.Glob(filepath.Join(runs, "*", "steps", "0001.json"))
	if len(matches) != 1 {
		t.Fatalf("step records %v, want the one step's", matches)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	var step struct {
		Status, Error string
		Result        struct{ Output string }
	}
	if err := json.Unmarshal(data, &step); err != nil {
		t.Fatal(err)
	}
	if step.Status != "failed" || !strings.Contains(step.Error, "command timed out after 5s") {
		t.Errorf("the step ended %s: %q, want failed at its 5s timeout", step.Status, step.Error)
	}
	if !strings.Contains(step.Result.Output, "[output truncated at 1048576 bytes: ") || len(step.Result.Output) > 1100000 {
		t.Errorf("the step kept %d bytes of output, want 1 MiB and the truncation marker", len(step.Result.Output))
	}
}
