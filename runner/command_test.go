package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/sim/lab"
	"github.com/apexagent/apex/store"
)

// TestEndlessShellStepEnds: a runAdbShell step that never ends stops at
// its timeout, keeps only the first device.ShellOutputLimit bytes of its
// output with a line saying so, and the command stops on the phone too.
func TestEndlessShellStepEnds(t *testing.T) {
	_, d := startPhone(t, lab.Options{Android: 1})
	st := openStore(t)
	src := `
android: {}
tasks:
  - name: endless
    flow:
      - runAdbShell: "s=x; for k in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do s=$s$s; done; i=0; while :; do i=$((i+1)); echo $i > /data/local/tmp/count; echo $s; done"
        timeout: 2500
`
	start := time.Now()
	res, err := Run(context.Background(), d, load(t, src), fastOptions(st))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != store.StatusFailed || !strings.Contains(res.Reason, "command timed out after 2.5s") {
		t.Fatalf("run %s: %s, want a failure at the step's timeout", res.Status, res.Reason)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the run took %v with a 2.5s step timeout", took)
	}
	steps, err := st.Steps(context.Background(), res.Run.ID)
	if err != nil || len(steps) != 1 {
		t.Fatalf("steps = %d, %v", len(steps), err)
	}
	marker := fmt.Sprintf("[output truncated at %d bytes: ", device.ShellOutputLimit)
	if r := string(steps[0].Result); !strings.Contains(r, marker) || len(r) > 2*device.ShellOutputLimit {
		t.Errorf("recorded result of %d bytes, want at most the limit and %q", len(r), marker)
	}

	// The loop ended on the phone: its counter stops moving.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	last := ""
	for {
		now, err := d.Shell(ctx, "cat /data/local/tmp/count")
		if err != nil {
			t.Fatalf("the loop still runs on the phone (its counter kept moving, last %q): %v", last, err)
		}
		if now == last {
			break
		}
		last = now
	}
}

func TestShellStepTimeoutParsed(t *testing.T) {
	s := load(t, "android: {}\ntasks:\n  - name: a\n    flow:\n      - runAdbShell: logcat\n        timeout: 5s\n      - runAdbShell: ls\n")
	if got := s.Tasks[0].Steps[0].Timeout; got != 5*time.Second {
		t.Errorf("timeout: 5s read as %v", got)
	}
	if got := s.Tasks[0].Steps[1].Timeout; got != 0 {
		t.Errorf("no timeout: read as %v, want 0 (the runner's %v)", got, CommandTimeout)
	}
}
