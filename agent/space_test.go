package agent_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/llm/llmtest"
	"github.com/apexagent/apex/scene"
)

// plannerServer is a model that plans each goal as plans says (the
// answer's text, as a model writes it), answers the executor with exec,
// and judges nothing surely.
func plannerServer(t *testing.T, plans map[string]string, exec ...string) *agent.Runtime {
	t.Helper()
	srv := llmtest.New(t, func(r *llmtest.Request) llmtest.Reply {
		switch {
		case strings.Contains(r.System(), "the executor") && len(exec) > 0:
			return llmtest.Text(exec[0])
		case !strings.Contains(r.System(), "the planner"):
			return llmtest.Text(`{"pass":false,"confidence":0.5,"evidence":"cannot tell"}`)
		}
		if plan, ok := plans[section(r.LastUser(), "Goal: ")]; ok {
			return llmtest.Text(plan)
		}
		return llmtest.Text("I do not know how to do that.")
	})
	rt, err := agent.New(agent.Config{LLM: srv.Config()})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// planJSON is a model's answer planning steps, in the steps' wire form.
func planJSON(t *testing.T, steps ...agent.Step) string {
	t.Helper()
	b, err := json.Marshal(map[string][]agent.Step{"steps": steps})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func loc(prompt string) *action.Locator { return &action.Locator{Prompt: prompt} }

// rowY is where the notes list shows the note titled title (its center),
// read from the phone itself.
func rowY(t *testing.T, p *phone, title string) (int, bool) {
	t.Helper()
	xml, err := p.dev.Phone.DumpUI()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scene.FromSource(xml, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range sc.Elements {
		if strings.HasSuffix(e.ResourceID, "/note") && (e.Text == title || strings.HasPrefix(e.Text, title+" ")) {
			_, y := e.Bounds.Center()
			return y, true
		}
	}
	return 0, false
}

// A model's plan may call any action of the device's space, not only the
// ones the controlled language knows: Swipe, DragAndDrop and ClearInput run
// on the simulated phone, their locators (both of a drag's) found by rule.
func TestPlanAnyAction(t *testing.T) {
	type result struct {
		res *agent.Result
		p   *phone
	}
	tests := []struct {
		name, app, goal string
		steps           []agent.Step
		before          func(t *testing.T, p *phone) // the phone before the task
		check           func(t *testing.T, r result, before map[string]int)
	}{{
		name: "ClearInput on the focused field", app: login, goal: "Type demo as the user name, then clear it again",
		steps: []agent.Step{
			{Call: action.Input.MustCall(&action.InputParams{Value: "demo", Locate: loc("Username")})},
			// No field named: the executor finds the focused one.
			{Call: action.ClearInput.MustCall(nil), Expected: &check.Check{Kind: check.NotExists, Target: check.ParseTarget("demo")}},
		},
		check: func(t *testing.T, r result, _ map[string]int) {
			if u := r.p.state(t, login)["username"]; u != "" {
				t.Errorf("the field holds %q after ClearInput", u)
			}
			acted := payloads[struct {
				Action  string
				Element *scene.Element
			}](t, r.res.Events, event.EvActed)
			if len(acted) != 2 || acted[1].Action != "ClearInput" || acted[1].Element == nil || !strings.HasSuffix(acted[1].Element.ResourceID, "/username") {
				t.Errorf("acted %+v, want ClearInput on the username field", acted)
			}
		},
	}, {
		// The list follows the finger: the row it started on ends where
		// it was lifted, and the rows above scroll away.
		name: "Swipe on the notes list", app: notes, goal: "Swipe the notes list up from Garden 1 to Groceries 1",
		steps: []agent.Step{{
			Call:     action.Swipe.MustCall(&action.SwipeParams{From: loc("Garden 1"), To: loc("Groceries 1")}),
			Expected: &check.Check{Kind: check.NotExists, Target: check.ParseTarget("Meeting notes 1")},
		}},
		check: func(t *testing.T, r result, before map[string]int) {
			if y, ok := rowY(t, r.p, "Garden 1"); !ok || y != before["Groceries 1"] {
				t.Errorf("Garden 1 is at y=%d (shown: %v) after the swipe, want %d where Groceries 1 was", y, ok, before["Groceries 1"])
			}
		},
	}, {
		// No simulated app has drop targets, and Android's driver drags
		// as `input swipe`: what shows is the row picked up arriving on
		// the row it was dropped on, as the list follows the finger.
		name: "DragAndDrop between notes", app: notes, goal: "Drag Recipe 1 onto Meeting notes 1",
		steps: []agent.Step{{
			Call: action.DragAndDrop.MustCall(&action.DragAndDropParams{From: action.Locator{Prompt: "Recipe 1"}, To: action.Locator{Prompt: "Meeting notes 1"}}),
		}},
		check: func(t *testing.T, r result, before map[string]int) {
			if y, ok := rowY(t, r.p, "Recipe 1"); !ok || y != before["Meeting notes 1"] {
				t.Errorf("Recipe 1 is at y=%d (shown: %v) after the drag, want %d where Meeting notes 1 was", y, ok, before["Meeting notes 1"])
			}
			acted := payloads[struct{ Action, Via string }](t, r.res.Events, event.EvActed)
			if len(acted) != 1 || acted[0].Action != "DragAndDrop" || acted[0].Via != "rule" {
				t.Errorf("acted %+v, want DragAndDrop by rule", acted)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := plannerServer(t, map[string]string{tt.goal: planJSON(t, tt.steps...)})
			p := startPhone(t, noPopupSeed)
			p.launch(t, tt.app)
			before := map[string]int{}
			for _, title := range []string{"Groceries 1", "Meeting notes 1"} {
				if y, ok := rowY(t, p, title); ok {
					before[title] = y
				}
			}
			res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: tt.goal, Driver: p.drv})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != agent.Done {
				t.Fatalf("status %s: %s\n%s", res.Status, res.Reason, dump(res.Events))
			}
			for i, st := range tt.steps {
				if got := res.Plan[i].Call.Name(); got != st.Call.Name() {
					t.Errorf("step %d runs %s, want %s", i+1, got, st.Call.Name())
				}
			}
			tt.check(t, result{res, p}, before)
		})
	}
}

// The executor model, asked for a step's call because the rules found no
// target, may answer with another action of the space: offered Tap's
// tool, it scrolls the list instead.
func TestExecutorModelAnswersAnotherAction(t *testing.T) {
	goal := "Show the last garden note"
	plan := planJSON(t, agent.Step{
		Call:     action.Tap.MustCall(&action.TapParams{Locate: action.Locator{Prompt: "the very last entry"}}),
		Expected: &check.Check{Kind: check.Exists, Target: check.ParseTarget("Garden 4")},
	})
	scroll := action.Scroll.MustCall(&action.ScrollParams{Direction: "down", UntilVisible: loc("Garden 4")})
	answer, err := json.Marshal(scroll)
	if err != nil {
		t.Fatal(err)
	}
	rt := plannerServer(t, map[string]string{goal: plan}, "I will scroll instead: "+string(answer))
	p := startPhone(t, noPopupSeed)
	p.launch(t, notes)
	res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: goal, Driver: p.drv})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.Done {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Reason, dump(res.Events))
	}
	acted := payloads[struct{ Action, Via string }](t, res.Events, event.EvActed)
	if len(acted) != 1 || acted[0].Action != "Scroll" || acted[0].Via != "model" {
		t.Fatalf("acted %+v, want one Scroll by the model", acted)
	}
	if _, ok := rowY(t, p, "Garden 4"); !ok {
		t.Fatal("Garden 4 is not on the phone's screen")
	}
}

// A plan naming an action the device lacks, or params its declaration
// refuses, fails the task at planning with the action space's own words.
func TestPlanRefusedBySpace(t *testing.T) {
	space := action.ForPlatform(device.Android)
	refusal := func(name, params string) string {
		_, err := space.DecodeCall(name, json.RawMessage(params))
		if err == nil {
			t.Fatalf("%s %s decodes", name, params)
		}
		return err.Error()
	}
	tests := []struct {
		name, plan, want string
	}{
		{"unknown action", `{"steps":[{"action":"Fly","params":{"to":"the moon"}}]}`, refusal("Fly", `{}`)},
		{"an iPhone's action", `[{"action":"AppSwitcher"}]`, refusal("AppSwitcher", `{}`)},
		{"swipe to nowhere", "```json\n" + `{"steps":[{"action":"Swipe","params":{"from":"Garden 1"}}]}` + "\n```", refusal("Swipe", `{"from":"Garden 1"}`)},
		{"drag onto a number", `{"steps":[{"action":"DragAndDrop","params":{"from":"Recipe 1","to":7}}]}`, refusal("DragAndDrop", `{"from":"Recipe 1","to":7}`)},
		{"no action and no check", `{"steps":[{"action":"check"}]}`, "needs expected_state"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			goal := "Do something with the notes"
			rt := plannerServer(t, map[string]string{goal: tt.plan})
			p := startPhone(t, noPopupSeed)
			p.launch(t, notes)
			res, err := rt.Act(ctxT(t, 30*time.Second), agent.Task{Goal: goal, Driver: p.drv})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != agent.Failed || !strings.HasPrefix(res.Reason, "planning: ") || !strings.Contains(res.Reason, tt.want) {
				t.Fatalf("status %s, reason %q; want failed planning with %q", res.Status, res.Reason, tt.want)
			}
			if acted := payloads[map[string]any](t, res.Events, event.EvActed); len(acted) != 0 {
				t.Fatalf("the refused plan acted: %v", acted)
			}
		})
	}
}
