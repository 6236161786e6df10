package server_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/apexagent/apex/server"
	"github.com/apexagent/apex/store"
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
			Goal: `aiTap: "Settings"`,
			Run: &server.RunContext{ID: runID, Name: "checkout", Script: "flows/checkout.yaml", Status: "failed",
				Report: "/report/" + runID + "#step-1",
				Step: &server.StepContext{Index: 1, Task: "open", Name: `aiTap: "Settings"`, Action: "Tap",
					Params: json.RawMessage(`{"locate":"Settings"}`), Status: "passed",
					Before: "/runs/" + runID + "/steps/0001-before.png", After: "/runs/" + runID + "/steps/0001-after.png"}},
		}},
		{"failed AI step: its instruction is the goal", map[string]any{"runId": runID, "step": 2, "note": "retry with the switch visible"}, server.Context{
			Goal: `turn on "Wi-Fi"`, Note: "retry with the switch visible",
			Run: &server.RunContext{ID: runID, Name: "checkout", Script: "flows/checkout.yaml", Status: "failed",
				Report: "/report/" + runID + "#step-2",
				Step:   &server.StepContext{Index: 2, Task: "open", Name: `aiAct: turn on "Wi-Fi"`, Status: "failed", Error: `no "Wi-Fi" switch on the screen`}},
		}},
		{"whole run", map[string]any{"runId": runID}, server.Context{
			Run: &server.RunContext{ID: runID, Name: "checkout", Script: "flows/checkout.yaml", Status: "failed", Report: "/report/" + runID},
		}},
		{"free-form", map[string]any{"goal": `  open "Display"  `, "note": "from the bug report"}, server.Context{
			Goal: `open "Display"`, Note: "from the bug report",
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
	bare := startPhone(t, nil) // records no runs
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
		{"no store", bare, map[string]any{"runId": runID, "step": 1}, 404, "records no runs"},
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
