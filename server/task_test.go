package server_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/apexagent/apex/server"
	"github.com/apexagent/apex/store"
)

// longGoal runs for about 20 s unless cancelled.
const longGoal = `tap "Settings", back, wait 10 s, wait 10 s, tap "Settings", back`

func TestExecuteOneAtATimeAndCancel(t *testing.T) {
	p := startPhone(t, nil)
	if code, _ := p.do("POST", "/execute", map[string]string{"goal": `tap "Settings"`}); code != 409 {
		t.Errorf("execute with no session: %d, want 409", code)
	}
	p.ready()

	type answer struct {
		code int
		m    map[string]any
	}
	answers := make([]answer, 2)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			code, m := p.do("POST", "/execute", map[string]any{"goal": longGoal, "async": true})
			answers[i] = answer{code, m}
		})
	}
	wg.Wait()
	var ok, conflict *answer
	for i := range answers {
		switch answers[i].code {
		case 202:
			ok = &answers[i]
		case 409:
			conflict = &answers[i]
		}
	}
	if ok == nil || conflict == nil {
		t.Fatalf("two concurrent executes: %v, want one 202 and one 409", answers)
	}
	id := ok.m["requestId"].(string)
	if conflict.m["requestId"] != id || !strings.Contains(conflict.m["error"].(string), "/cancel/"+id) {
		t.Errorf("409 = %v, want the running task's id %s", conflict.m, id)
	}
	if st := p.state(); st != "running" {
		t.Errorf("state while a task runs = %q", st)
	}
	if code, m := p.do("POST", "/interact", map[string]any{"action": "Back"}); code != 409 || m["requestId"] != id {
		t.Errorf("interact while a task runs: %d %v, want 409 naming %s", code, m, id)
	}

	m := p.mustDo(200, "POST", "/cancel/"+id, nil)
	if m["status"] != "canceled" {
		t.Errorf("cancel answered %v, want status canceled", m)
	}
	if st := p.state(); st != "ready" {
		t.Errorf("state after cancel = %q, want ready", st)
	}
	if code, m := p.do("POST", "/cancel/"+id, nil); code != 409 || m["status"] != "canceled" {
		t.Errorf("second cancel: %d %v, want 409 with status canceled", code, m)
	}
	if code, _ := p.do("POST", "/cancel/nope", nil); code != 404 {
		t.Errorf("cancel of an unknown task: %d, want 404", code)
	}

	// The next execute runs at once and to its end.
	m = p.mustDo(202, "POST", "/execute", map[string]any{"goal": `tap "Settings", then check "Network & internet" exists`, "async": true})
	v := p.wait(m["requestId"].(string))
	if v["status"] != "done" {
		t.Fatalf("task after cancel: %v", v)
	}
	if fg, _ := p.dev.Phone.Foreground(); fg != "com.android.settings" {
		t.Errorf("foreground after the task = %q, want com.android.settings", fg)
	}
	if st := p.state(); st != "ready" {
		t.Errorf("state after a task = %q, want ready", st)
	}
	// A failed task frees the session too.
	m = p.mustDo(202, "POST", "/execute", map[string]any{"goal": `check "No Such Thing" exists`, "async": true})
	if v := p.wait(m["requestId"].(string)); v["status"] != "failed" {
		t.Errorf("task checking for a missing element: %v, want failed", v["status"])
	}
	p.mustDo(202, "POST", "/execute", map[string]any{"goal": `back`, "async": true})
}

func TestExecuteBadRequests(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	if code, m := p.do("POST", "/execute", map[string]string{"goal": "  "}); code != 400 || !strings.Contains(m["error"].(string), "goal") {
		t.Errorf("empty goal: %d %v", code, m)
	}
	if code, _ := p.do("GET", "/task-progress/nope", nil); code != 404 {
		t.Errorf("progress of an unknown task: %d, want 404", code)
	}
}

// sse reads server-sent events; id is the last event's id.
type sse struct {
	sc *bufio.Scanner
	id string
}

func (s *sse) next(t *testing.T) (string, map[string]any) {
	t.Helper()
	var typ string
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			s.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("event data: %v", err)
			}
			return typ, m
		}
	}
	t.Fatalf("event stream ended: %v", s.sc.Err())
	return "", nil
}

func TestProgressEvents(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	ev := p.events()
	if typ, m := ev.next(t); typ != "session" || m["session"].(map[string]any)["state"] != "ready" {
		t.Fatalf("first event %s %v, want the ready session", typ, m)
	}

	id := p.mustDo(202, "POST", "/execute", map[string]any{"goal": `tap "Settings", then check "Network & internet" exists`, "async": true})["requestId"].(string)
	var types []string
	var states []string
	for {
		typ, m := ev.next(t)
		if typ == "session" {
			states = append(states, m["session"].(map[string]any)["state"].(string))
			continue
		}
		if m["requestId"] != id {
			t.Fatalf("event for %v, want %s", m["requestId"], id)
		}
		if typ == "task" {
			if st := m["task"].(map[string]any)["status"]; st != "done" {
				t.Errorf("task ended %v", st)
			}
			// The end is the entry after the last line.
			if end := m["progress"].(map[string]any); end["type"] != "end" || int(end["seq"].(float64)) != len(types)+1 || end["status"] != "done" {
				t.Errorf("the task message's progress %v, want the end entry, seq %d, status done", end, len(types)+1)
			}
			break
		}
		pr := m["progress"].(map[string]any)
		types = append(types, pr["type"].(string))
		if int(pr["seq"].(float64)) != len(types) {
			t.Errorf("progress seq %v at position %d", pr["seq"], len(types))
		}
	}
	for _, want := range []string{"task_started", "plan", "acted", "step_summary", "task_finished"} {
		if !strings.Contains(strings.Join(types, " "), want) {
			t.Errorf("progress types %v lack %s", types, want)
		}
	}
	if typ, m := ev.next(t); typ != "session" || m["session"].(map[string]any)["state"] != "ready" {
		t.Errorf("after the task: %s %v, want the session ready again", typ, m)
	}
	if strings.Join(states, " ") != "running" {
		t.Errorf("session states during the task = %v, want [running]", states)
	}

	v := p.mustDo(200, "GET", "/task-progress/"+id, nil)
	if got := len(v["progress"].([]any)); got != len(types)+1 {
		t.Errorf("/task-progress has %d progress, the stream had %d and the end", got, len(types))
	}
	if v["result"].(map[string]any)["summary"] == "" || v["goal"] == "" {
		t.Errorf("task view = %v", v)
	}
	v = p.mustDo(200, "GET", "/task-progress/"+id+"?since=2", nil)
	if pr := v["progress"].([]any); len(pr) != len(types)-1 || pr[0].(map[string]any)["seq"].(float64) != 3 {
		t.Errorf("since=2 gave %v", pr)
	}
}

// TestExecuteRecordsRun: with a store, each task is a run whose status
// follows the task's end.
func TestExecuteRecordsRun(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p := startPhone(t, &phoneOptions{opts: server.Options{Store: st}})
	p.ready()
	for _, tc := range []struct{ goal, status string }{
		{`tap "Settings", then check "Network & internet" exists`, store.StatusPassed},
		{`check "No Such Thing" exists`, store.StatusFailed},
	} {
		id := p.mustDo(202, "POST", "/execute", map[string]any{"goal": tc.goal, "async": true})["requestId"].(string)
		v := p.wait(id)
		runID, _ := v["runId"].(string)
		if runID == "" {
			t.Fatalf("task %v has no runId", v)
		}
		run, err := st.Run(testCtx(t), runID)
		if err != nil || run.Status != tc.status || run.Device != "sim/"+p.dev.Serial || run.Platform != "android" || !strings.Contains(run.Name, tc.goal) {
			t.Errorf("run of %q: %+v %v, want %s", tc.goal, run, err, tc.status)
		}
		code, page := p.raw("GET", "/report/"+runID, nil, nil) // follows the redirect
		if code != 200 || !strings.Contains(string(page), "<html") || !strings.Contains(string(page), "Settings") && tc.status == store.StatusPassed {
			t.Errorf("report of run %s: %d\n%.300s", runID, code, page)
		}
		taskID := v["result"].(map[string]any)["task_id"].(string)
		// One progress line per event, then the end.
		if evs, err := st.Events(testCtx(t), taskID); err != nil || len(evs)+1 != len(v["progress"].([]any)) {
			t.Errorf("stored %d events (%v), progress has %d entries", len(evs), err, len(v["progress"].([]any)))
		}
	}
}

func TestRunFilesGuarded(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p := startPhone(t, &phoneOptions{opts: server.Options{Store: st}})
	for _, path := range []string{"/report/nope", "/runs/nope/report.html", "/runs/..%2F..%2Fetc/passwd"} {
		if code, _ := p.raw("GET", path, nil, nil); code != 404 {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
	run, err := st.StartRun(testCtx(t), store.Run{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := p.raw("GET", "/runs/"+run.ID+"/../../apex.db", nil, nil); code == 200 {
		t.Errorf("a path climbing out of the run was served")
	}
}
