package report

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/internal/labtest"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/sim/lab"
	"github.com/apexagent/apex/store"
)

// goalRun records a run of two goals on the simulated phone with the real
// agent runtime, the way `apex act` records one: the Shop crashes on "Write
// a review" (a crash, recoveries, a re-plan, a failed step), then a check
// that matches only ignoring case stops for a person (review required).
func goalRun(t *testing.T) (*store.Store, string, []event.Event) {
	t.Helper()
	ctx := patience.Context(t, 2*time.Minute)
	dev, drv := labtest.Android(t, lab.Options{Android: 1, Seed: 2}) // seed 2: the Shop's sale popup stays away
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	run, err := st.StartRun(ctx, store.Run{Name: "two goals", Device: "sim/" + dev.Serial})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := agent.New(agent.Config{CheckTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct{ app, goal, status string }{
		{"com.apex.shop", `type "toaster" into "Search", tap "Ultra Toaster", tap "Write a review", then check "Your review" exists`, agent.Failed},
		{"com.apex.login", `check "Welcome back" reads "welcome  BACK", then tap "Sign in"`, agent.ReviewRequired},
	} {
		if err := drv.LaunchApp(ctx, g.app); err != nil {
			t.Fatal(err)
		}
		res, err := rt.Act(ctx, agent.Task{Goal: g.goal, Driver: drv, Store: st, RunID: run.ID, Steps: st.StepRecorder(run.ID)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != g.status {
			t.Fatalf("goal %q ended %s (%s); want %s", g.goal, res.Status, res.Reason, g.status)
		}
	}
	if err := st.FinishRun(ctx, run.ID, store.StatusFailed, "a goal failed"); err != nil {
		t.Fatal(err)
	}
	events, err := st.RunEvents(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	return st, run.ID, events
}

// writeHTML writes run id's report and returns its path and HTML.
func writeHTML(t *testing.T, s *store.Store, id string) (path, html string) {
	t.Helper()
	path, err := Write(context.Background(), s, id)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, string(data)
}

var (
	rowRE  = regexp.MustCompile(`<tr class="(verdict|retry|signal) ?([a-z_]*)"><td>(\d*)</td><td>([^<]*)</td>.*?<td>(?:<a href="#step-(\d+)">step \d+</a>)?</td></tr>`)
	goalRE = regexp.MustCompile(`<section class="goal ([a-z_]+)" id="(goal-\d+)">`)
)

// A goal's report shows its plan, each verdict with its evidence and
// confidence, each recovery and the crash, each linked to the recorded
// step it is about.
func TestGoalsOfARealRun(t *testing.T) {
	s, id, events := goalRun(t)
	path, html := writeHTML(t, s, id)
	steps, err := s.Steps(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}

	var goals [][]string
	for _, m := range goalRE.FindAllStringSubmatch(html, -1) {
		goals = append(goals, m[1:])
	}
	if len(goals) != 2 || goals[0][0] != "failed" || goals[1][0] != "review_required" {
		t.Fatalf("goal sections %v; want goal-1 failed and goal-2 review_required", goals)
	}
	for _, want := range []string{
		`type &#34;toaster&#34; into &#34;Search&#34;`, // goals are escaped
		`<span class="badge b-review_required">review_required</span>`,
		`<h3>Plan (rules)</h3>`, `<span class="act">Tap(locate: &#34;Write a review&#34;)</span>`,
		`<h3>Re-plan after step 3 failed (rules)</h3>`, `<ol start="3">`,
		`(Tap(locate: &#34;Write a review&#34;))`, // in the reason
		`crash · com.apex.shop`, `NullPointerException`,
		`relaunch_app com.apex.shop`,
		`<strong>&#34;Welcome back&#34; reads &#34;welcome  BACK&#34;</strong>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}

	// One row per verdict, retry and crash, in the order of the events.
	var want []string
	for _, e := range events {
		switch e.ActionType {
		case event.EvVerdict, event.EvRetry:
			want = append(want, e.ActionType)
		case event.EvSignal:
			var sg event.Signal
			if json.Unmarshal(e.Payload, &sg) == nil && (sg.Kind == event.SigCrash || sg.Kind == event.SigANR) {
				want = append(want, "signal")
			}
		}
	}
	rows := rowRE.FindAllStringSubmatch(html, -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[1])
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("rows %v; want %v (the events' order)", got, want)
	}

	// Rows name their step and link to the recorded step they are about:
	// a verdict to the step it judged, a recovery to its own action.
	byIndex := map[int]store.Step{}
	for _, st := range steps {
		byIndex[st.Index] = st
	}
	var review, relaunch, failedVerdicts int
	for _, r := range rows {
		kind, status, what, linked := r[1], r[2], r[4], r[5]
		n, _ := strconv.Atoi(linked)
		st, ok := byIndex[n]
		if linked != "" && !ok {
			t.Errorf("row %q links to step %s, which the run does not have", r[0], linked)
			continue
		}
		switch {
		case kind == "verdict" && status == event.StatusReview:
			review++
			if !ok || !strings.HasPrefix(st.Name, `check "Welcome back" reads`) || !strings.Contains(r[0], "<td>0.70</td>") {
				t.Errorf("review verdict %q: linked step %q; want the check's step, confidence 0.70", r[0], st.Name)
			}
		case kind == "verdict" && what == "after acting":
			if status == event.StatusFailed {
				failedVerdicts++
			}
			if !ok || st.Action == "" || strings.HasPrefix(st.Name, "recover: ") {
				t.Errorf("verdict %q links to step %q; want the action it judged", r[0], st.Name)
			}
		case kind == "retry" && strings.Contains(what, "relaunch_app"):
			relaunch++
			if !ok || st.Name != `recover: Launch(app: "com.apex.shop")` {
				t.Errorf("relaunch %q links to step %q; want the relaunch itself", r[0], st.Name)
			}
		}
	}
	if review != 1 || relaunch == 0 || failedVerdicts == 0 {
		t.Errorf("%d review verdicts, %d relaunches, %d failed verdicts after acting; want 1, some, some", review, relaunch, failedVerdicts)
	}
	// Every link points at a step section of the page.
	for _, m := range regexp.MustCompile(`href="#(step-\d+)"`).FindAllStringSubmatch(html, -1) {
		if !strings.Contains(html, `id="`+m[1]+`"`) {
			t.Errorf("link to #%s has no section", m[1])
		}
	}
	if t.Failed() {
		t.Logf("report: %s", path)
	}
}

// goalEvents records n synthetic goals of the run id, each as large as real
// ones get: a plan of agent.MaxSteps steps, a verdict for each, two
// retries, a crash and a long summary.
func goalEvents(t testing.TB, s *store.Store, id string, n int) {
	t.Helper()
	ctx := context.Background()
	long := strings.Repeat(`no element matches "Write a <review>" & the screen shows e1 "Shop"; `, 20)
	at := t0
	for g := range n {
		task := id + "/act-" + strconv.Itoa(g)
		var plan []json.RawMessage
		for i := range agent.MaxSteps {
			plan = append(plan, json.RawMessage(`{"step_id":`+strconv.Itoa(i+1)+`,"action":"Tap","params":{"locate":"Add to cart `+strconv.Itoa(i)+`"},"expected_state":{"kind":"exists","target":"Cart"}}`))
		}
		type ev struct {
			typ, status string
			payload     any
		}
		payloads := []ev{
			{event.EvTaskStarted, event.StatusInfo, map[string]any{"goal": strings.Repeat("add the cheapest <item> & check out, ", 10), "kind": "act"}},
			{event.EvPlan, event.StatusOK, map[string]any{"steps": plan, "source": "model"}},
		}
		for i := range agent.MaxSteps {
			payloads = append(payloads, ev{event.EvVerdict, event.StatusFailed, map[string]any{"step_id": i + 1, "phase": "post", "pass": false, "confidence": 1, "evidence": long,
				"check": map[string]any{"kind": "exists", "target": "Cart"}}})
		}
		for a := 1; a <= 2; a++ {
			payloads = append(payloads, ev{event.EvRetry, event.StatusInfo, map[string]any{"step_id": 3, "attempt": a, "strategy": "wait", "reason": long, "error": long}})
		}
		payloads = append(payloads,
			ev{event.EvSignal, event.StatusFailed, event.Signal{Kind: event.SigCrash, App: "com.apex.shop", Detail: long}},
			ev{event.EvTaskFinished, event.StatusFailed, map[string]any{"status": "failed", "reason": long, "summary": long}})
		for i, p := range payloads {
			raw, err := json.Marshal(p.payload)
			if err != nil {
				t.Fatal(err)
			}
			at = at.Add(time.Millisecond)
			e := event.Event{TaskID: task, ID: strconv.Itoa(i), Time: at, ActionType: p.typ, Payload: raw, Status: p.status, Confidence: 1}
			if err := s.AddEvent(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A run of 500 goals, each as large as real ones get, on top of 500 heavy
// steps, stays a page a browser opens: the goals' rows and texts share a
// budget, and the page says what it left out.
func TestLongGoalsSize(t *testing.T) {
	s, id := makeRun(t, t.TempDir(), synth{steps: 500, failAt: 480, finish: true, heavy: true})
	goalEvents(t, s, id, 500)
	_, html := writeHTML(t, s, id)
	goals := html[strings.Index(html, `<section class="goal`):strings.Index(html, `<section class="step`)]
	t.Logf("500 goals: %d bytes of HTML (%d in the whole page)", len(goals), len(html))
	if len(goals) > 1<<20 {
		t.Errorf("500 goals take %d bytes of HTML; want <= 1 MiB", len(goals))
	}
	if n := strings.Count(goals, `<section class="goal`); n != 500 {
		t.Errorf("%d goal sections; want 500", n)
	}
	if n := strings.Count(goals, `<tr class=`) + strings.Count(goals, `<li>`); n != maxGoalRows {
		t.Errorf("%d rows and plan steps shown; want %d", n, maxGoalRows)
	}
	for _, want := range []string{"are not shown here to keep the page small", // it says it left rows out
		`<span class="act">Tap(locate: &#34;Add to cart 0&#34;)</span> <span class="exp">→ &#34;Cart&#34; shows</span>`,
		`add the cheapest &lt;item&gt; &amp; check out`,
		`<strong>&#34;Cart&#34; shows</strong>: no element matches`} {
		if !strings.Contains(goals, want) {
			t.Errorf("goals lack %q", want)
		}
	}
}
