package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/apexagent/apex/server"
	"github.com/apexagent/apex/store"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// recordedRun is a run of two steps in a new store: a tap that passed with
// both screenshots, and an AI step that failed with none.
func recordedRun(t *testing.T) (*store.Store, string) {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var shot bytes.Buffer
	if err := png.Encode(&shot, image.NewGray(image.Rect(0, 0, 4, 8))); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	run, err := st.StartRun(ctx, store.Run{Name: "checkout", Script: "flows/checkout.yaml", Device: "sim/x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []store.Step{
		{RunID: run.ID, Task: "open", Name: `aiTap: "Settings"`, Action: "Tap", Params: json.RawMessage(`{"locate":"Settings"}`),
			Status: store.StepPassed, Before: shot.Bytes(), After: shot.Bytes()},
		{RunID: run.ID, Task: "open", Name: `aiAct: turn on "Wi-Fi"`, Status: store.StepFailed, Error: `no "Wi-Fi" switch on the screen`},
	} {
		if _, err := st.AddStep(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.FinishRun(ctx, run.ID, store.StatusFailed, "step 2 failed"); err != nil {
		t.Fatal(err)
	}
	return st, run.ID
}

// decode turns a JSON map back into a Context.
func decode(t *testing.T, v any) server.Context {
	t.Helper()
	data, _ := json.Marshal(v)
	var c server.Context
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("context %s: %v", data, err)
	}
	return c
}

// TestContextOfStep: a report step becomes a context the playground page
// fetches by its uuid, with the step's screenshots served by the playground.
func TestContextOfStep(t *testing.T) {
	st, runID := recordedRun(t)
	p := startPhone(t, &phoneOptions{opts: server.Options{Store: st}})
	tests := []struct {
		name string
		body map[string]any
		want server.Context
	}{
		{"passed step", map[string]any{"runId": runID, "step": 1}, server.Context{
			Goal: `aiTap: "Settings"`, Mode: "step",
			Run: &server.RunContext{ID: runID, Name: "checkout", Script: "flows/checkout.yaml", Status: "failed",
				Report: "/report/" + runID + "#step-1",
				Step: &server.StepContext{Index: 1, Task: "open", Name: `aiTap: "Settings"`, Action: "Tap",
					Params: json.RawMessage(`{"locate":"Settings"}`), Status: "passed",
					Before: "/runs/" + runID + "/steps/0001-before.png", After: "/runs/" + runID + "/steps/0001-after.png"}},
		}},
		{"failed AI step: its instruction is the goal", map[string]any{"runId": runID, "step": 2, "note": "retry with the switch visible"}, server.Context{
			Goal: `turn on "Wi-Fi"`, Note: "retry with the switch visible", Mode: "goal",
			Run: &server.RunContext{ID: runID, Name: "checkout", Script: "flows/checkout.yaml", Status: "failed",
				Report: "/report/" + runID + "#step-2",
				Step:   &server.StepContext{Index: 2, Task: "open", Name: `aiAct: turn on "Wi-Fi"`, Status: "failed", Error: `no "Wi-Fi" switch on the screen`}},
		}},
		{"whole run", map[string]any{"runId": runID}, server.Context{
			Mode: "goal",
			Run:  &server.RunContext{ID: runID, Name: "checkout", Script: "flows/checkout.yaml", Status: "failed", Report: "/report/" + runID},
		}},
		{"free-form", map[string]any{"goal": `  open "Display"  `, "note": "from the bug report"}, server.Context{
			Goal: `open "Display"`, Note: "from the bug report", Mode: "goal",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := p.mustDo(200, "POST", "/playground-with-context", tt.body)
			got := decode(t, m["context"])
			if m["uuid"] != got.UUID || m["url"] != "/?context="+got.UUID || len(got.UUID) != 36 || got.Created.IsZero() {
				t.Errorf("answer %v: want uuid, url /?context=<uuid> and the context with its uuid and time", m)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(server.Context{}, "UUID", "Created")); diff != "" {
				t.Errorf("context (-want +got):\n%s", diff)
			}
			fetched := decode(t, p.mustDo(200, "GET", "/context/"+got.UUID, nil))
			if diff := cmp.Diff(got, fetched); diff != "" {
				t.Errorf("GET /context/%s differs from the created one (-created +fetched):\n%s", got.UUID, diff)
			}
			if s := got.Run; s != nil && s.Step != nil && s.Step.Before != "" {
				for _, u := range []string{s.Step.Before, s.Step.After} {
					code, img := p.raw("GET", u, nil, nil)
					if _, err := png.Decode(bytes.NewReader(img)); code != 200 || err != nil {
						t.Errorf("GET %s: %d, %v; want the step's screenshot", u, code, err)
					}
				}
			}
		})
	}
}

func TestContextErrors(t *testing.T) {
	st, runID := recordedRun(t)
	p := startPhone(t, &phoneOptions{opts: server.Options{Store: st}})
	bare := startPhone(t, nil) // records runs in a store of its own
	tests := []struct {
		name string
		p    *phone
		body any
		code int
		says string
	}{
		{"unknown run", p, map[string]any{"runId": "nope", "step": 1}, 404, `run "nope"`},
		{"unknown step", p, map[string]any{"runId": runID, "step": 9}, 404, "has no step 9 (it has 2)"},
		{"step without run", p, map[string]any{"step": 1}, 400, "a step needs its run"},
		{"nothing to continue from", p, map[string]any{"goal": "  "}, 400, "say where to continue from"},
		{"unknown field", p, map[string]any{"run": runID}, 400, "unknown field"},
		{"not an object", p, []int{1}, 400, "want a JSON object"},
		{"another store's run", bare, map[string]any{"runId": runID, "step": 1}, 404, "knows the runs of its store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, m := tt.p.do("POST", "/playground-with-context", tt.body)
			if msg, _ := m["error"].(string); code != tt.code || !strings.Contains(msg, tt.says) {
				t.Errorf("POST %v: %d %v; want %d saying %q", tt.body, code, m, tt.code, tt.says)
			}
		})
	}
	code, body := p.raw("POST", "/playground-with-context", nil, nil)
	if code != 400 {
		t.Errorf("POST with no body: %d %s; want 400", code, body)
	}
	code, m := p.do("GET", "/context/00000000-0000-4000-8000-000000000000", nil)
	if msg, _ := m["error"].(string); code != 404 || !strings.Contains(msg, "open it again from the report") {
		t.Errorf("GET an unknown context: %d %v; want 404 saying what to do", code, m)
	}
}

// TestContextInBrowser: a goal and a script step run in the playground are
// runs whose reports the playground serves; "Open in playground"
// on the run or on a step opens the playground page with a banner saying
// where it comes from and the goal field prefilled.
func TestContextInBrowser(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p := startPhone(t, &phoneOptions{opts: server.Options{Store: st}})
	ctx := browserTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(p.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the session to be ready", `document.body.dataset.session === "ready" && !document.getElementById("run").disabled`)
	const goal = `tap "Settings"`
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#goal"), goal), chromedp.Click(chromedp.CSS("#run"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the goal's report link", `document.querySelector("#log .status a.report-link") !== null`)
	taskReport := eval[string](t, ctx, `document.querySelector("#log .status a.report-link").href`)

	// A playground task records no steps: its report opens the run.
	tab, closeTab := openFromReport(t, ctx, taskReport, "header h1 button.pg")
	banner := eval[string](t, tab, `document.querySelector("#context .context-title").textContent`)
	if want := "From run playground: " + goal; banner != want {
		t.Errorf("banner of the task's run = %q; want %q", banner, want)
	}
	if got := eval[string](t, tab, `document.getElementById("goal").value`); got != goal {
		t.Errorf("goal field = %q; want the run's goal %q", got, goal)
	}
	if mode := eval[string](t, tab, `document.getElementById("mode").value`); mode != "goal" {
		t.Errorf("composer mode for a goal's context = %q, want goal", mode)
	}
	closeTab()

	// A script step the playground runs (the runner records it): its
	// name, status, error and screenshots.
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Home"})
	v := p.mustDo(200, "POST", "/execute", map[string]any{"step": map[string]any{"tap": "No Such Thing", "timeout": 300}})
	runID, _ := p.mustDo(200, "GET", "/task-progress/"+v["requestId"].(string), nil)["runId"].(string)
	steps, err := st.Steps(testCtx(t), runID)
	if err != nil || len(steps) != 1 || steps[0].Status != store.StepFailed || steps[0].BeforePath == "" {
		t.Fatalf("the step task's run %q recorded %+v (%v); want one failed step with its screen", runID, steps, err)
	}
	step := steps[0]
	tab, closeTab = openFromReport(t, ctx, p.http.URL+"/report/"+runID, "#step-1 h2 button.pg")
	banner = eval[string](t, tab, `document.querySelector("#context .context-title").textContent`)
	run, err := st.Run(testCtx(t), runID)
	if err != nil {
		t.Fatal(err)
	}
	if want := "From run " + run.Name + " · step 1: " + step.Name; banner != want {
		t.Errorf("banner = %q; want %q", banner, want)
	}
	if got := eval[string](t, tab, `document.getElementById("goal").value`); got != step.Name {
		t.Errorf("goal field = %q; want the step's %q", got, step.Name)
	}
	if mode := eval[string](t, tab, `document.getElementById("mode").value`); mode != "step" {
		t.Errorf("composer mode for a script step's context = %q, want step", mode)
	}
	shots := 1
	if step.AfterPath != "" {
		shots = 2
	}
	waitFor(t, tab, "the step's screenshots", fmt.Sprintf(`Array.from(document.querySelectorAll("#context .context-shot img")).filter(i => i.complete && i.naturalWidth > 0).length === %d`, shots))
	if got := eval[string](t, tab, `document.querySelector("#context .badge").textContent`); got != "failed" {
		t.Errorf("banner status = %q; want failed", got)
	}
	if got := eval[string](t, tab, `document.querySelector("#context .context-error").textContent`); got != step.Error || got == "" {
		t.Errorf("banner error = %q; want the step's %q", got, step.Error)
	}
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#context .context-dismiss"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, "the banner to be dismissed", `document.getElementById("context").hidden`)
	closeTab()

	// A context that is gone is a notice, and the page still works.
	if err := chromedp.Do(ctx, chromedp.Navigate(p.http.URL+"/?context=gone")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the notice", `document.getElementById("context").dataset.state === "missing" && !document.getElementById("context").hidden`)
	if msg := eval[string](t, ctx, `document.getElementById("context").innerText`); !strings.Contains(msg, "Open it again from the report") {
		t.Errorf("notice = %q; want what to do", msg)
	}
	waitFor(t, ctx, "the page to be usable", `document.body.dataset.session === "ready" && location.search === ""`)
}

// openFromReport opens a report through the playground in a new tab, as
// the page's "Open report" link does, clicks the Open in playground button
// sel there, and waits for the playground page's banner in that tab.
func openFromReport(t *testing.T, browser context.Context, report, sel string) (context.Context, func()) {
	t.Helper()
	tab, closeTab := chromedp.NewContext(browser)
	t.Cleanup(closeTab)
	if err := chromedp.Do(tab, chromedp.Navigate(report)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, "the report's Open in playground buttons", `document.body.dataset.playground === "yes" && document.querySelector(`+jsString(sel)+`) !== null`)
	if !strings.HasPrefix(eval[string](t, tab, `location.pathname`), "/runs/") {
		t.Fatalf("the report is at %s; want it under /runs/", eval[string](t, tab, `location.href`))
	}
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(sel))); err != nil {
		t.Fatal(err)
	}
	// The click navigates: polls in the page it leaves are cut short.
	waitAcross(t, tab, "the playground page with its banner", `location.pathname === "/" && location.search === "" && document.getElementById("context") !== null && !document.getElementById("context").hidden && document.getElementById("context").dataset.state === "ok"`)
	return tab, closeTab
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
