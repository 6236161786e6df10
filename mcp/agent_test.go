package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/internal/recordtest"
	"github.com/apexagent/apex/mcp"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/store"
)

// TestAgentOffline drives act, assert and query through the real AI
// runtime with no model: the rule planner reads the controlled language.
func TestAgentOffline(t *testing.T) {
	rt, err := agent.New(agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	l, id, c := openSim(t, mcp.Options{AI: rt})
	if out := c.ok("assert", map[string]any{"device": id, "assertion": `"Settings" exists`}); !strings.Contains(out, `"pass": true`) {
		t.Errorf("assert on the launcher: %s", out)
	}
	if out := c.ok("query", map[string]any{"device": id, "question": `"Nowhere" exists`, "kind": "boolean"}); !strings.Contains(out, `"answer": false`) {
		t.Errorf("query: %s", out)
	}
	out := c.ok("act", map[string]any{"device": id, "goal": `tap "Shop"`})
	if !strings.Contains(out, `"status": "done"`) {
		t.Errorf("act: %s", out)
	}
	if app, _ := l.Devices()[0].Phone.Foreground(); app != "com.apex.shop" {
		t.Errorf("after act the foreground app is %q", app)
	}
	if msg := c.fails("act", map[string]any{"device": id, "goal": "make it nicer somehow"}); msg == "" {
		t.Error("an offline goal outside the controlled language gave no reason")
	}
}

// TestActRecordsEveryStep: with a runs store, each act is a recorded run
// whose steps leave screenshots, Scene and touch, and whose report the
// answer names.
func TestActRecordsEveryStep(t *testing.T) {
	rt, err := agent.New(agent.Config{Perception: perceive.Options{Mode: perceive.Off}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	_, id, c := openSim(t, mcp.Options{AI: rt, Runs: st})
	var out struct {
		Status string `json:"status"`
		RunID  string `json:"run_id"`
		Report string `json:"report"`
	}
	if err := json.Unmarshal([]byte(c.ok("act", map[string]any{"device": id, "goal": `tap "Settings", tap "Network & internet"`})), &out); err != nil {
		t.Fatal(err)
	}
	if out.Status != "done" || out.RunID == "" || out.Report == "" {
		t.Fatalf("act answered %+v, want done with its run and report", out)
	}
	recordtest.Steps(t, st, out.RunID, `Tap(locate: "Settings")`, `Tap(locate: "Network & internet")`)
	if run, err := st.Run(context.Background(), out.RunID); err != nil || run.Platform != "android" {
		t.Errorf("run %+v, %v; want its platform recorded", run, err)
	}
}
