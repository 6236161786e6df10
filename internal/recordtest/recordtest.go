// Package recordtest checks, for the tests of every face, that a recorded
// run leaves what every step must leave: before and after screenshots, the
// Scene acted on, the point touched, and an HTML report that marks it.
package recordtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apexagent/apex/report"
	"github.com/apexagent/apex/store"
)

// Steps checks that run runID of st recorded the steps named (each name a
// part of the step's recorded name, in order), each with its screenshots,
// Scene and touched point, and that its report shows them with a marker on
// every touch. It returns the steps.
func Steps(t testing.TB, st *store.Store, runID string, names ...string) []store.Step {
	t.Helper()
	ctx := context.Background()
	steps, err := st.Steps(ctx, runID)
	if err != nil {
		t.Fatalf("steps of run %s: %v", runID, err)
	}
	if len(steps) != len(names) {
		var got []string
		for _, s := range steps {
			got = append(got, s.Name)
		}
		t.Fatalf("run %s recorded %d steps %q, want %d like %q", runID, len(steps), got, len(names), names)
	}
	dir := st.RunDir(runID)
	for i, s := range steps {
		if !strings.Contains(s.Name, names[i]) {
			t.Errorf("step %d is %q, want one like %q", i+1, s.Name, names[i])
		}
		for what, path := range map[string]string{"before screenshot": s.BeforePath, "after screenshot": s.AfterPath, "scene": s.ScenePath} {
			if path == "" {
				t.Errorf("step %d (%s) has no %s", i+1, s.Name, what)
				continue
			}
			if fi, err := os.Stat(filepath.Join(dir, path)); err != nil || fi.Size() == 0 {
				t.Errorf("step %d (%s): %s %s: %v", i+1, s.Name, what, path, err)
			}
		}
		if s.Point == nil {
			t.Errorf("step %d (%s) records no touched point", i+1, s.Name)
		}
	}
	path, err := report.Write(ctx, st, runID)
	if err != nil {
		t.Fatalf("report of run %s: %v", runID, err)
	}
	html, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(html), `class="mark before"`); n != len(names) {
		t.Errorf("the report marks %d touches on before screenshots, want %d", n, len(names))
	}
	return steps
}
