package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/store"
)

// recordRuns records a passed and a failed run in a new store under dir.
func recordRuns(t *testing.T, dir string) (passed, failed string) {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var shot bytes.Buffer
	if err := png.Encode(&shot, image.NewGray(image.Rect(0, 0, 10, 20))); err != nil {
		t.Fatal(err)
	}
	for i, status := range []string{store.StatusPassed, store.StatusFailed} {
		r, err := s.StartRun(ctx, store.Run{Script: "examples/shop-checkout.yaml", Device: "sim/127.0.0.1:5555"})
		if err != nil {
			t.Fatal(err)
		}
		st := store.Step{RunID: r.ID, Name: "tap Buy", Action: "tap", Status: store.StepPassed, Point: &device.Point{X: 5, Y: 10}, Before: shot.Bytes()}
		if i == 1 {
			st.Status, st.Error = store.StepFailed, "Buy not found"
		}
		if _, err := s.AddStep(ctx, st); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishRun(ctx, r.ID, status, st.Error); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			passed = r.ID
		} else {
			failed = r.ID
		}
	}
	return passed, failed
}

func TestReportList(t *testing.T) {
	dir := t.TempDir()
	passed, failed := recordRuns(t, dir)
	out, _, err := run(t, "report", "--dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "RUN") || !strings.HasPrefix(lines[1], failed+" ") || !strings.HasPrefix(lines[2], passed+" ") {
		t.Fatalf("list is not newest first:\n%s", out)
	}
	if !strings.Contains(lines[1], "failed") || !strings.Contains(lines[1], "examples/shop-checkout.yaml") {
		t.Errorf("failed run line = %q", lines[1])
	}

	out, _, err = run(t, "--json", "report", "--dir", dir, "--limit", "1")
	if err != nil {
		t.Fatal(err)
	}
	var runs []runListing
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 || runs[0].ID != failed || runs[0].Status != "failed" {
		t.Fatalf("--json list = %s (%v)", out, err)
	}
}

func TestReportShow(t *testing.T) {
	dir := t.TempDir()
	_, failed := recordRuns(t, dir)
	want := filepath.Join(dir, failed, "report.html")
	for _, id := range []string{failed, "latest"} {
		out, _, err := run(t, "report", "--dir", dir, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(out); got != want {
			t.Errorf("apex report %s = %q; want %q", id, got, want)
		}
	}
	html, err := os.ReadFile(want)
	if err != nil || !bytes.Contains(html, []byte("Buy not found")) {
		t.Fatalf("report.html: %v", err)
	}
	// Listing now shows the report.
	out, _, _ := run(t, "--json", "report", "--dir", dir)
	if !strings.Contains(out, `"report": "`+want+`"`) {
		t.Errorf("--json list lacks the report path:\n%s", out)
	}
	out, _, err = run(t, "--json", "report", "--dir", dir, failed)
	var l runListing
	if err != nil || json.Unmarshal([]byte(out), &l) != nil || l.Report != want || l.Reason != "Buy not found" {
		t.Errorf("--json report RUN = %s (%v)", out, err)
	}
}

func TestReportOpen(t *testing.T) {
	dir := t.TempDir()
	passed, _ := recordRuns(t, dir)
	var out, errOut bytes.Buffer
	env := &Env{Out: &out, Err: &errOut, Log: slog.New(slog.DiscardHandler)}
	var opened string
	opts := &ReportOptions{Dir: dir, RunID: passed, Open: true, OpenFile: func(_ context.Context, p string) error { opened = p; return nil }}
	if err := reportRun(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	if opened != filepath.Join(dir, passed, "report.html") {
		t.Errorf("opened %q", opened)
	}
	// A failing opener still prints the path and says what to do.
	out.Reset()
	opts.OpenFile = func(context.Context, string) error { return errors.New("xdg-open not found") }
	if err := reportRun(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "open "+opened+" in a browser") || strings.TrimSpace(out.String()) != opened {
		t.Errorf("out %q err %q", out.String(), errOut.String())
	}
}

func TestReportErrors(t *testing.T) {
	empty := t.TempDir()
	out, _, err := run(t, "report", "--dir", empty)
	if err != nil || !strings.Contains(out, "No runs recorded") {
		t.Errorf("list of an empty dir = %q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(empty, store.DBName)); err == nil {
		t.Error("listing created a database")
	}
	if out, _, err := run(t, "--json", "report", "--dir", empty); err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("--json list of an empty dir = %q, %v", out, err)
	}
	if _, _, err := run(t, "report", "--dir", empty, "x"); err == nil || !strings.Contains(err.Error(), "no runs recorded") {
		t.Errorf("report of an empty dir err = %v", err)
	}
	dir := t.TempDir()
	recordRuns(t, dir)
	if _, _, err := run(t, "report", "--dir", dir, "nope"); err == nil || !strings.Contains(err.Error(), "apex report --dir") {
		t.Errorf("unknown run err = %v", err)
	}
}

func TestReportDirFromEnv(t *testing.T) {
	dir := t.TempDir()
	passed, _ := recordRuns(t, dir)
	t.Setenv(RunsDirEnv, dir)
	out, _, err := run(t, "report")
	if err != nil || !strings.Contains(out, passed) {
		t.Fatalf("apex report with %s=%s: %q, %v", RunsDirEnv, dir, out, err)
	}
}
