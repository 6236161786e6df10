package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/event"
	"github.com/google/go-cmp/cmp"
)

// testPNG encodes a small real PNG whose pixels depend on seed.
func testPNG(t testing.TB, seed int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 36, 80))
	for y := 0; y < 80; y++ {
		for x := 0; x < 36; x++ {
			img.Set(x, y, color.RGBA{uint8(seed * 40), uint8(x * 7), uint8(y * 3), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func openTest(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)

	run, err := s.StartRun(ctx, Run{Name: "checkout", Script: "examples/shop.yaml", Device: "sim/127.0.0.1:5555", Platform: "android"})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != StatusRunning || run.ID == "" || run.Dir != filepath.Join(dir, run.ID) {
		t.Fatalf("StartRun = %+v", run)
	}
	before, after := testPNG(t, 1), testPNG(t, 2)
	scene := json.RawMessage(`{"width":1080,"height":2400,"elements":[{"id":"e1","type":"button","text":"Add to cart","bounds":{"x0":0,"y0":0,"x1":10,"y1":10},"flags":{},"source":"tree"}]}`)
	in := Step{
		RunID: run.ID, Task: "buy", Name: "tap Add to cart", Action: "tap",
		Params: json.RawMessage(`{"locator":"Add to cart"}`), Status: StepPassed,
		Started: time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC), Duration: 120 * time.Millisecond, DeviceTime: 90 * time.Millisecond,
		Point: &device.Point{X: 540, Y: 1200}, Before: before, After: after, Scene: scene,
		Result: json.RawMessage(`{"ok":true}`),
	}
	got1, err := s.AddStep(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if got1.Index != 1 || got1.BeforePath != "steps/0001-before.png" || got1.AfterPath != "steps/0001-after.png" || got1.ScenePath != "steps/0001-scene.json" {
		t.Fatalf("AddStep = index %d paths %q %q %q", got1.Index, got1.BeforePath, got1.AfterPath, got1.ScenePath)
	}
	fail := Step{RunID: run.ID, Name: "assert total", Action: "assert", Status: StepFailed, Error: "total is 0, want > 0"}
	got2, err := s.AddStep(ctx, fail)
	if err != nil {
		t.Fatal(err)
	}
	if got2.Index != 2 || got2.BeforePath != "" {
		t.Fatalf("second step = %+v", got2)
	}
	if err := s.FinishRun(ctx, run.ID, StatusFailed, "step 2: total is 0"); err != nil {
		t.Fatal(err)
	}

	// Files on disk are the bytes given, and the step JSON is complete.
	for rel, want := range map[string][]byte{got1.BeforePath: before, got1.AfterPath: after, got1.ScenePath: scene} {
		data, err := os.ReadFile(filepath.Join(run.Dir, rel))
		if err != nil || !bytes.Equal(data, want) {
			t.Errorf("file %s: %d bytes, err %v; want the %d bytes given", rel, len(data), err, len(want))
		}
	}
	var rec map[string]any
	data, err := os.ReadFile(filepath.Join(run.Dir, "steps/0001.json"))
	if err != nil || json.Unmarshal(data, &rec) != nil {
		t.Fatalf("steps/0001.json: %v %s", err, data)
	}
	for _, k := range []string{"scene", "params", "result", "action", "duration", "device_time", "point", "before_path"} {
		if _, ok := rec[k]; !ok {
			t.Errorf("steps/0001.json lacks %q: %s", k, data)
		}
	}

	// Reopen: everything comes back from disk.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTest(t, dir)
	r2, err := s2.Run(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Status != StatusFailed || r2.Reason != "step 2: total is 0" || r2.Ended.IsZero() || !r2.Started.Equal(run.Started) || r2.Platform != "android" {
		t.Errorf("Run after reopen = %+v", r2)
	}
	steps, err := s2.Steps(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	want1 := got1
	want1.Before, want1.After = nil, nil
	want2 := got2
	want2.Started = steps[1].Started // assigned by the store
	if diff := cmp.Diff([]Step{want1, want2}, steps); diff != "" {
		t.Errorf("Steps (-want +got):\n%s", diff)
	}
	var runFile Run
	data, _ = os.ReadFile(filepath.Join(run.Dir, "run.json"))
	if err := json.Unmarshal(data, &runFile); err != nil || runFile.Status != StatusFailed || runFile.Platform != "android" {
		t.Errorf("run.json = %s (%v)", data, err)
	}
}

func TestEvents(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	ts := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	in := []event.Event{
		{TaskID: "t1", ID: "e1", SourceRole: "orchestrator", TargetRole: "planner", Time: ts, ActionType: "plan", Payload: json.RawMessage(`{"goal":"buy"}`), Status: "sent", Confidence: 1},
		{TaskID: "t1", SourceRole: "planner", TargetRole: "orchestrator", Time: ts.Add(time.Second), ActionType: "plan", Status: "done", Confidence: 0.75},
		{TaskID: "t2", ID: "e1", SourceRole: "executor", Time: ts, ActionType: "tap", Status: "done"},
	}
	for _, e := range in {
		if err := s.AddEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddEvent(ctx, in[0]); err == nil || !strings.Contains(err.Error(), "already recorded") {
		t.Errorf("duplicate event err = %v", err)
	}
	if err := s.AddEvent(ctx, event.Event{TaskID: "t1", Payload: json.RawMessage(`{`)}); err == nil || !strings.Contains(err.Error(), "payload") {
		t.Errorf("bad payload err = %v", err)
	}
	got, err := s.Events(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].ID == "" {
		t.Fatalf("Events(t1) = %+v", got)
	}
	in[1].ID = got[1].ID
	if diff := cmp.Diff(in[:2], got); diff != "" {
		t.Errorf("Events(t1) (-want +got):\n%s", diff)
	}
}

func TestRunEvents(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	for _, task := range []string{"r_1/act-a", "r_1/act-b", "r_12/act-c", "r%1/act-d", "r_1"} {
		if err := s.AddEvent(ctx, event.Event{TaskID: task, ActionType: "model_call", Status: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.RunEvents(ctx, "r_1")
	if err != nil {
		t.Fatal(err)
	}
	var tasks []string
	for _, e := range got {
		tasks = append(tasks, e.TaskID)
	}
	if want := []string{"r_1/act-a", "r_1/act-b"}; !slices.Equal(tasks, want) {
		t.Errorf("RunEvents(r_1) tasks = %v; want %v (not r_12, r%%1 or the bare id)", tasks, want)
	}
}

func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	shot := testPNG(t, 3)
	const scripts, steps = 6, 15
	ids := make([]string, scripts)
	var wg sync.WaitGroup
	errs := make(chan error, scripts*steps*2)
	for i := range scripts {
		wg.Go(func() {
			run, err := s.StartRun(ctx, Run{Script: fmt.Sprintf("s%d.yaml", i)})
			if err != nil {
				errs <- err
				return
			}
			ids[i] = run.ID
			for range steps {
				if _, err := s.AddStep(ctx, Step{RunID: run.ID, Action: "tap", Status: StepPassed, Before: shot, After: shot}); err != nil {
					errs <- err
				}
				if err := s.AddEvent(ctx, event.Event{TaskID: run.ID, ActionType: "tap", Status: "done"}); err != nil {
					errs <- err
				}
				if _, err := s.Runs(ctx, 3); err != nil { // readers alongside writers
					errs <- err
				}
			}
			if err := s.FinishRun(ctx, run.ID, StatusPassed, ""); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	runs, err := s.Runs(ctx, 0)
	if err != nil || len(runs) != scripts {
		t.Fatalf("Runs = %d runs, %v; want %d", len(runs), err, scripts)
	}
	for _, id := range ids {
		got, err := s.Steps(ctx, id)
		if err != nil || len(got) != steps {
			t.Fatalf("Steps(%s) = %d, %v; want %d", id, len(got), err, steps)
		}
		for i, st := range got {
			if st.Index != i+1 {
				t.Fatalf("run %s step %d has index %d", id, i, st.Index)
			}
			if _, err := os.Stat(filepath.Join(dir, id, st.AfterPath)); err != nil {
				t.Fatal(err)
			}
		}
		ev, err := s.Events(ctx, id)
		if err != nil || len(ev) != steps {
			t.Fatalf("Events(%s) = %d, %v", id, len(ev), err)
		}
	}
}

// A process that dies mid-run leaves its steps readable and the run marked
// running: simulate by abandoning the store without FinishRun or Close.
func TestCrashMidRun(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.StartRun(ctx, Run{Script: "crash.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	for range 7 {
		if _, err := s.AddStep(ctx, Step{RunID: run.ID, Action: "tap", Status: StepPassed, Before: testPNG(t, 1), Scene: json.RawMessage(`{"elements":[]}`)}); err != nil {
			t.Fatal(err)
		}
	}
	// No FinishRun, no Close: a second store opens the same files, as the
	// next process would while the first one's connections are still open.
	s2 := openTest(t, dir)
	r, err := s2.Run(ctx, run.ID)
	if err != nil || r.Status != StatusRunning || !r.Ended.IsZero() {
		t.Fatalf("Run after crash = %+v, %v; want status running", r, err)
	}
	steps, err := s2.Steps(ctx, run.ID)
	if err != nil || len(steps) != 7 {
		t.Fatalf("Steps after crash = %d, %v; want 7", len(steps), err)
	}
	for _, st := range steps {
		if string(st.Scene) != `{"elements":[]}` {
			t.Errorf("step %d scene = %s", st.Index, st.Scene)
		}
	}
	// The new process continues numbering after the recorded steps.
	st, err := s2.AddStep(ctx, Step{RunID: run.ID, Status: StepPassed})
	if err != nil || st.Index != 8 {
		t.Fatalf("AddStep after reopen = %d, %v; want index 8", st.Index, err)
	}
	s.Close()
}

func TestRunsNewestFirstAndIDs(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	s, err := OpenWith(t.TempDir(), &Options{Now: func() time.Time { return now }}) // a frozen clock
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []string
	for i := range 5 {
		r, err := s.StartRun(ctx, Run{Name: fmt.Sprint(i), Started: now.Add(time.Duration(i) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	if !sort.StringsAreSorted(ids) {
		t.Errorf("IDs from a frozen clock are not increasing: %v", ids)
	}
	if !strings.HasPrefix(ids[0], "20260304-050607.000000-") {
		t.Errorf("ID %q does not start with the UTC time", ids[0])
	}
	runs, err := s.Runs(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range runs {
		names = append(names, r.Name)
	}
	if diff := cmp.Diff([]string{"4", "3", "2"}, names); diff != "" {
		t.Errorf("Runs(3) names (-want +got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	run, err := s.StartRun(ctx, Run{ID: "fixed-1"})
	if err != nil || run.ID != "fixed-1" {
		t.Fatalf("StartRun with an ID = %+v, %v", run, err)
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"duplicate run id", second(s.StartRun(ctx, Run{ID: "fixed-1"})), "already exists"},
		{"bad run id", second(s.StartRun(ctx, Run{ID: "../escape"})), "run id"},
		{"unknown run", second(s.Run(ctx, "nope")), "not found"},
		{"steps of unknown run", second(s.Steps(ctx, "nope")), "not found"},
		{"step of unknown run", second(s.AddStep(ctx, Step{RunID: "nope", Status: StepPassed})), "StartRun first"},
		{"step traversal", second(s.AddStep(ctx, Step{RunID: "../x", Status: StepPassed})), "run id"},
		{"step status", second(s.AddStep(ctx, Step{RunID: "fixed-1", Status: "ok"})), "passed, failed, skipped or canceled"},
		{"step params", second(s.AddStep(ctx, Step{RunID: "fixed-1", Status: StepPassed, Params: json.RawMessage("{")})), "params"},
		{"step png", second(s.AddStep(ctx, Step{RunID: "fixed-1", Status: StepPassed, Before: []byte("GIF89a")})), "before screenshot"},
		{"finish status", s.FinishRun(ctx, "fixed-1", "done", ""), "use passed"},
		{"finish unknown", s.FinishRun(ctx, "nope", StatusPassed, ""), "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
				t.Fatalf("err = %v; want one containing %q", tt.err, tt.want)
			}
		})
	}
	if _, err := s.Run(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Run(nope) err = %v; want ErrNotFound", err)
	}
	if _, err := s.AddStep(ctx, Step{RunID: "fixed-1", Index: 3, Status: StepPassed}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddStep(ctx, Step{RunID: "fixed-1", Index: 3, Status: StepPassed}); err == nil || !strings.Contains(err.Error(), "already recorded") {
		t.Errorf("duplicate index err = %v", err)
	}
}

func second[T any](_ T, err error) error { return err }
