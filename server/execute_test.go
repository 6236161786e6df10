package server_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/apexagent/apex/internal/recordtest"
	"github.com/apexagent/apex/server"
	"github.com/apexagent/apex/store"
)

// TestExecuteAnswers checks the synchronous answer of each kind of job:
// {result, dump, error, reportHTML, requestId}.
func TestExecuteAnswers(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	tests := []struct {
		name       string
		body       map[string]any
		kind       string
		status     string
		foreground string // after the job
		errPart    string
	}{
		{"goal", map[string]any{"goal": `tap "Settings"`, "reportHTML": true}, "goal", "done", "com.android.settings", ""},
		{"structured action", map[string]any{"action": "Back"}, "action", "done", "com.apex.launcher", ""},
		{"deterministic step", map[string]any{"step": map[string]any{"tap": map[string]string{"text": "Settings"}}}, "step", "done", "com.android.settings", ""},
		{"ai step offline", map[string]any{"step": map[string]string{"aiTap": "Network & internet"}}, "step", "done", "com.android.settings", ""},
		{"failing step", map[string]any{"step": map[string]any{"assert": map[string]string{"exists": "No Such Thing"}}}, "step", "failed", "com.android.settings", "No Such Thing"},
		{"action by alias with params", map[string]any{"action": "KeyboardPress", "params": map[string]string{"keyName": "Home"}}, "action", "done", "com.apex.launcher", ""},
		// Midscene's body: an action of the space by its Midscene alias,
		// the prompt its target; a Midscene call that runs as a step.
		{"midscene aiTap", map[string]any{"type": "aiTap", "prompt": "Settings", "deepThink": false}, "action", "done", "com.android.settings", ""},
		{"midscene Back", map[string]any{"type": "AndroidBackButton", "params": map[string]any{}}, "action", "done", "com.android.settings", ""}, // Settings resumed on a sub-screen
		{"midscene failed assert", map[string]any{"type": "aiAssert", "prompt": `"No Such Thing" exists`}, "step", "failed", "com.android.settings", "No Such Thing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := p.on(t).mustDo(200, "POST", "/execute", tt.body)
			if m["kind"] != tt.kind || m["status"] != tt.status {
				t.Fatalf("answer kind %v status %v (error %v), want %s %s", m["kind"], m["status"], m["error"], tt.kind, tt.status)
			}
			if tt.errPart != "" && !strings.Contains(m["error"].(string), tt.errPart) {
				t.Errorf("error %q, want it to name %q", m["error"], tt.errPart)
			}
			if m["result"] == nil || m["requestId"] == "" {
				t.Errorf("answer without result or requestId: %v", m)
			}
			dump, _ := m["dump"].(map[string]any)
			if dump == nil || dump["run"].(map[string]any)["id"] != m["runId"] {
				t.Fatalf("dump %v, want the task's run %v", dump, m["runId"])
			}
			// Every task records its steps; a goal, its agent events too.
			steps, _ := dump["steps"].([]any)
			events, _ := dump["events"].([]any)
			if (tt.kind == "goal" && len(events) == 0) || len(steps) == 0 {
				t.Errorf("dump of a %s has %d steps and %d events", tt.kind, len(steps), len(events))
			}
			ref, _ := m["report"].(map[string]any)
			report, _ := ref["url"].(string)
			if !strings.HasPrefix(report, "/runs/") {
				t.Fatalf("report = %v, want the report's URL", ref)
			}
			// reportHTML is the report itself, its screenshots inside, when
			// asked for (always by Midscene's body).
			html, _ := m["reportHTML"].(string)
			if asked := tt.body["reportHTML"] == true || tt.body["type"] != nil; asked != (html != "") {
				t.Errorf("reportHTML given %v, want %v", html != "", asked)
			} else if asked && (!strings.Contains(html, "<html") || strings.Contains(html, `src="steps/`)) {
				t.Errorf("reportHTML is not a standalone report: %.200q", html)
			}
			if tt.body["type"] == "aiAssert" {
				if res, _ := m["result"].(map[string]any); res["pass"] != false || m["executionDump"] == nil {
					t.Errorf("Midscene assert answered result %v, executionDump %v; want pass false and the dump", m["result"], m["executionDump"])
				}
			}
			code, page := p.raw("GET", report, nil, nil)
			if code != 200 || !strings.Contains(string(page), "<html") {
				t.Errorf("GET %s: %d", report, code)
			}
			if fg, _ := p.dev.Phone.Foreground(); fg != tt.foreground {
				t.Errorf("foreground after %s = %q, want %q", tt.name, fg, tt.foreground)
			}
			if st := p.state(); st != "ready" {
				t.Errorf("state after the task = %q, want ready", st)
			}
		})
	}
}

func TestExecuteRefuses(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	tests := []struct {
		name string
		body any
		code int
		part string
	}{
		{"nothing", map[string]any{}, 400, "say what to do"},
		{"blank goal", map[string]string{"goal": "  "}, 400, "say what to do"},
		{"two at once", map[string]any{"goal": "back", "action": "Back"}, 400, "one of"},
		{"unknown action", map[string]any{"action": "Teleport"}, 400, `no action "Teleport"`},
		{"bad params", map[string]any{"action": "Tap", "params": map[string]int{"locate": 3}}, 400, "Tap"},
		{"unknown step", map[string]any{"step": map[string]string{"aiTapp": "x"}}, 400, "aiTapp"},
		{"two steps", map[string]any{"step": []any{map[string]string{"aiTap": "x"}}}, 400, "step"},
		{"shell step", map[string]any{"step": map[string]string{"runAdbShell": "reboot"}}, 403, "--allow-shell"},
		{"bad request id", map[string]any{"goal": "back", "requestId": "a b"}, 400, "requestId"},
		{"unknown field", map[string]any{"gaol": "back"}, 400, "gaol"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, m := p.on(t).do("POST", "/execute", tt.body)
			if code != tt.code || !strings.Contains(m["error"].(string), tt.part) {
				t.Errorf("%d %v, want %d naming %q", code, m, tt.code, tt.part)
			}
		})
	}
	if st := p.state(); st != "ready" {
		t.Errorf("state after refused executes = %q, want ready", st)
	}
}

// TestExecuteClientRequestID follows a synchronous execute by the id the
// client chose, and refuses the id a second time.
func TestExecuteClientRequestID(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	var wg sync.WaitGroup
	var answer map[string]any
	wg.Go(func() {
		answer = p.mustDo(200, "POST", "/execute", map[string]any{"goal": `tap "Settings", back, tap "Settings"`, "requestId": "mine-1"})
	})
	// The id is known before the answer comes.
	for code := 404; code == 404; {
		code, _ = p.do("GET", "/task-progress/mine-1", nil)
	}
	v := p.wait("mine-1")
	wg.Wait()
	if v["status"] != "done" || answer["requestId"] != "mine-1" || answer["status"] != "done" {
		t.Fatalf("progress %v, answer %v", v["status"], answer)
	}
	if len(v["progress"].([]any)) == 0 {
		t.Errorf("no progress for the task followed by its id")
	}
	if code, m := p.do("POST", "/execute", map[string]any{"goal": "back", "requestId": "mine-1"}); code != 409 || !strings.Contains(m["error"].(string), "already used") {
		t.Errorf("reused requestId: %d %v, want 409", code, m)
	}
	if st := p.state(); st != "ready" {
		t.Errorf("state after a refused id = %q, want ready", st)
	}
}

// TestExecuteTitles: a step or an action is named as a script writes it,
// in the answer and in its run's record.
func TestExecuteTitles(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	for body, want := range map[string]map[string]any{
		"tap: Settings": {"step": map[string]any{"tap": "Settings"}},
		"Back":          {"action": "Back"},
	} {
		m := p.mustDo(200, "POST", "/execute", want)
		run := m["dump"].(map[string]any)["run"].(map[string]any)
		if m["goal"] != body || run["name"] != "playground: "+body {
			t.Errorf("execute %v: title %q, run %q; want %q", want, m["goal"], run["name"], body)
		}
	}
}

// TestRunsList: GET /runs lists the recorded tasks, newest first, each
// with its report's URL; a bad limit is refused.
func TestRunsList(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	first := p.mustDo(200, "POST", "/execute", map[string]any{"action": "Home"})
	second := p.mustDo(200, "POST", "/execute", map[string]any{"step": map[string]any{"assert": map[string]string{"exists": "No Such Thing"}}})
	runs := p.mustDo(200, "GET", "/runs", nil)["runs"].([]any)
	if len(runs) != 2 {
		t.Fatalf("%d runs listed, want 2: %v", len(runs), runs)
	}
	newest, oldest := runs[0].(map[string]any), runs[1].(map[string]any)
	if newest["id"] != second["runId"] || newest["status"] != "failed" || oldest["id"] != first["runId"] || oldest["status"] != "passed" {
		t.Errorf("runs %v, want the failed step then the passed action", runs)
	}
	if newest["report"] != "/report/"+second["runId"].(string) {
		t.Errorf("report link %v", newest["report"])
	}
	if code, page := p.raw("GET", newest["report"].(string), nil, nil); code != 200 || !strings.Contains(string(page), "<html") {
		t.Errorf("GET %s: %d", newest["report"], code)
	}
	if got := p.mustDo(200, "GET", "/runs?limit=1", nil)["runs"].([]any); len(got) != 1 {
		t.Errorf("limit=1 listed %d", len(got))
	}
	for _, bad := range []string{"0", "x", "100000"} {
		if code, _ := p.do("GET", "/runs?limit="+bad, nil); code != 400 {
			t.Errorf("limit=%s: %d, want 400", bad, code)
		}
	}
}

// TestGoalRecordsEveryStep: a playground goal's steps leave the record
// every step leaves (screenshots, Scene, touched point) and its report
// marks each touch.
func TestGoalRecordsEveryStep(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := startPhone(t, &phoneOptions{opts: server.Options{Store: st}})
	p.ready()
	m := p.mustDo(200, "POST", "/execute", map[string]any{"goal": `tap "Settings", type "dark" into "Search settings", tap "Dark theme"`})
	if m["status"] != "done" {
		t.Fatalf("goal %v: %v", m["status"], m["error"])
	}
	recordtest.Steps(t, st, m["runId"].(string), `Tap(locate: "Settings")`, `Input(value: "dark"`, `Tap(locate: "Dark theme")`)
}
