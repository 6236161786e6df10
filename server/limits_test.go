package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apexagent/apex/server"
)

// TestTaskBounds: a step of repeats inside repeats ends at the task's step
// budget; an answer whose record or report is over the inline bound says
// where to read them instead of carrying them; a finished task keeps a
// small result.
func TestTaskBounds(t *testing.T) {
	p := startPhone(t, &phoneOptions{opts: server.Options{Limits: server.Limits{TaskSteps: 2, InlineRecord: 4000, KeptResult: 100}}})
	p.ready()
	loops := map[string]any{"repeat": map[string]any{"times": 1000}, "flow": []any{
		map[string]any{"repeat": map[string]any{"times": 1000}, "flow": []any{"back"}}}}
	m := p.mustDo(200, "POST", "/execute", map[string]any{"step": loops, "reportHTML": true})
	if m["status"] != "failed" || !strings.Contains(fmt.Sprint(m["error"]), "step budget of 2 steps") {
		t.Fatalf("nested repeats: status %v error %v, want failed at the step budget", m["status"], m["error"])
	}
	if m["dump"] != nil || m["reportHTML"] != nil {
		t.Errorf("the answer inlines a record or report over the bound: dump %v, reportHTML %v", m["dump"] != nil, m["reportHTML"] != nil)
	}
	omitted := fmt.Sprint(m["omitted"])
	url, _ := m["dumpUrl"].(string)
	if url == "" || !strings.Contains(omitted, "dump: the record is") || !strings.Contains(omitted, "reportHTML: the report is") {
		t.Fatalf("dumpUrl %q omitted %v: want where the record is and what was left out", url, omitted)
	}
	dump := p.mustDo(200, "GET", url, nil)
	if run, _ := dump["run"].(map[string]any); run["id"] != m["runId"] {
		t.Errorf("GET %s = run %v, want the task's %v", url, dump["run"], m["runId"])
	}
	if steps, _ := dump["steps"].([]any); len(steps) != 3 {
		t.Errorf("the record holds %d steps, want the budget's 2 and the failed one", len(steps))
	}
	kept := p.mustDo(200, "GET", "/task-progress/"+m["requestId"].(string), nil)
	res, _ := kept["result"].(map[string]any)
	if res["status"] != "failed" || !strings.Contains(fmt.Sprint(res["omitted"]), "over the 100 a task keeps") || res["steps"] != nil {
		t.Errorf("the kept result = %v, want its status and a note saying where the rest is", res)
	}
}

// TestRecorderBounds: a recording past its action bound refuses the next
// action with 429 (and acts again once stopped); frames past their bound
// are left out, and the events say so.
func TestRecorderBounds(t *testing.T) {
	p := startPhone(t, &phoneOptions{opts: server.Options{Limits: server.Limits{RecordedActions: 2, RecorderFrames: 1}}})
	p.ready()
	p.mustDo(200, "POST", "/recorder/start", nil)
	long := strings.Repeat("x", server.MaxText+1)
	p.mustDo(413, "POST", "/interact", map[string]any{"action": "Input", "params": map[string]any{"value": long}})
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Home"})
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Home"})
	m := p.mustDo(429, "POST", "/interact", map[string]any{"action": "Home"})
	if !strings.Contains(fmt.Sprint(m["error"]), "the recording holds 2 actions, its limit") {
		t.Errorf("the action past the bound: %v", m)
	}
	evs := p.mustDo(200, "GET", "/recorder/events", nil)
	if list, _ := evs["events"].([]any); len(list) != 2 || list[0].(map[string]any)["before"] != nil {
		t.Errorf("events = %v, want 2 without screenshots", evs["events"])
	}
	if !strings.Contains(fmt.Sprint(evs["framesOmitted"]), "screenshots were not kept") {
		t.Errorf("framesOmitted = %v, want the note", evs["framesOmitted"])
	}
	p.mustDo(200, "POST", "/recorder/stop", nil)
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Home"})
}

// TestTokenGuessing: an address that sent ten wrong tokens is answered
// 429 with Retry-After (in the API's JSON), even with the right one; a
// request without credentials (a browser yet to sign in) is no guess.
func TestTokenGuessing(t *testing.T) {
	p := startPhone(t, &phoneOptions{opts: server.Options{Token: testToken}})
	for range 20 {
		if a := send(t, p, "GET", "/status", "", nil, ""); a.code != 401 {
			t.Fatalf("no credentials: %d, want 401", a.code)
		}
	}
	for i := range 10 {
		if a := send(t, p, "GET", "/status", "", bearer(fmt.Sprintf("guess-%d", i)), ""); a.code != 401 {
			t.Fatalf("guess %d: %d, want 401", i, a.code)
		}
	}
	a := send(t, p, "GET", "/status", "", bearer(testToken), "")
	if a.code != 429 || a.hdr.Get("Retry-After") == "" || !strings.Contains(a.json(t)["error"].(string), "10 wrong tokens from this address") {
		t.Errorf("the right token after ten guesses: %d Retry-After %q %s, want 429 saying why", a.code, a.hdr.Get("Retry-After"), a.body)
	}
}
