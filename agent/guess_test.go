package agent_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/llm/llmtest"
	"github.com/google/go-cmp/cmp"
)

// headphones names three products of the Shop at once.
const headphones = `type "headphones" into "Search", tap "Noise Cancelling Headphones", tap "Add to cart"`

// With no model, an ambiguous target fails the task naming every
// candidate once; no retry picks one by its position.
func TestAmbiguityOffline(t *testing.T) {
	p := startPhone(t, noPopupSeed)
	p.launch(t, shop)
	rt, _ := agent.New(agent.Config{CheckTimeout: 300 * time.Millisecond})
	res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: headphones, Driver: p.drv})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.Failed {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Reason, dump(res.Events))
	}
	for _, name := range []string{"Classic Noise Cancelling Headphones", "Deluxe Noise Cancelling Headphones", "Pro Noise Cancelling Headphones"} {
		if n := strings.Count(res.Reason, `"`+name); n != 1 {
			t.Errorf("the reason names %q %d times, want once: %s", name, n, res.Reason)
		}
	}
	if !strings.Contains(res.Reason, "step 2") {
		t.Errorf("the reason does not blame step 2: %s", res.Reason)
	}
	if c := list(p.state(t, shop)["cart"]); len(c) != 0 {
		t.Fatalf("cart = %v: a product was guessed\n%s", c, dump(res.Events))
	}
	if s := strategies(t, res.Events); contains(s, agent.StratLocator) {
		t.Fatalf("strategies %v: ambiguity has no offline recovery\n%s", s, dump(res.Events))
	}
}

var candidateRE = regexp.MustCompile(`(?m)^(e\d+) .*"Pro Noise Cancelling Headphones`)

// With a model, the executor model chooses among the candidates it is
// shown (ids, texts, rows); its choice is the acted event's evidence.
func TestAmbiguityModelChooses(t *testing.T) {
	p := startPhone(t, noPopupSeed)
	p.launch(t, shop)
	var asked []string
	srv := llmtest.New(t, func(r *llmtest.Request) llmtest.Reply {
		u := r.LastUser()
		asked = append(asked, u)
		_, cands, ok := strings.Cut(u, "Candidates:\n")
		if !ok || !r.HasTool("Tap") {
			return llmtest.Text(`{"error":"no candidates"}`)
		}
		m := candidateRE.FindStringSubmatch(cands)
		if m == nil {
			return llmtest.Text(`{"error":"Pro is not a candidate"}`)
		}
		args, _ := json.Marshal(map[string]any{"locate": map[string]string{"id": m[1]}})
		return llmtest.Call("Tap", json.RawMessage(args))
	})
	rt, _ := agent.New(agent.Config{LLM: srv.Config(), CheckTimeout: 300 * time.Millisecond})
	res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: headphones, Driver: p.drv})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.Done {
		t.Fatalf("status %s: %s\nasked: %q\n%s", res.Status, res.Reason, asked, dump(res.Events))
	}
	// Once; twice when the results list changed between the answer and
	// the tap (the engine does not act on a screen the answer was not
	// about) — never more.
	if len(asked) < 1 || len(asked) > 2 {
		t.Fatalf("the model was asked %d times, want once (twice if the screen moved): %q", len(asked), asked)
	}
	for _, name := range []string{"Classic Noise Cancelling Headphones", "Deluxe Noise Cancelling Headphones"} {
		if !strings.Contains(asked[0], name) {
			t.Errorf("the request does not offer %q:\n%s", name, asked[0])
		}
	}
	c := list(p.state(t, shop)["cart"])
	if len(c) != 1 || item(c[0])["id"] != "p009" {
		t.Fatalf("cart = %v, want the Pro headphones (p009)", c)
	}
	var chosen bool
	for _, a := range payloads[struct {
		Step   int `json:"step_id"`
		Choice *struct {
			Candidates []string `json:"candidates"`
			Chosen     string   `json:"chosen"`
		} `json:"choice"`
	}](t, res.Events, event.EvActed) {
		if a.Step == 2 && a.Choice != nil && len(a.Choice.Candidates) == 3 && strings.Contains(a.Choice.Chosen, "Pro Noise Cancelling Headphones") {
			chosen = true
		}
	}
	if !chosen {
		t.Fatalf("no acted event of step 2 records the model's choice among 3 candidates\n%s", dump(res.Events))
	}
}

// Text the user just typed is no evidence that the goal state holds: the
// item is added, not skipped because the field reads it.
func TestTypedTextIsNotTheGoal(t *testing.T) {
	p := startPhone(t, noPopupSeed)
	p.launch(t, zh)
	rt, _ := agent.New(agent.Config{})
	res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: `在“添加商品”输入“酸奶”，点击“添加”，确认“酸奶”存在`, Driver: p.drv})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.Done {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Reason, dump(res.Events))
	}
	it := list(p.state(t, zh)["items"])
	if len(it) != 5 || item(it[4])["name"] != "酸奶" {
		t.Fatalf("items = %v: 酸奶 was not added\n%s", it, dump(res.Events))
	}
	if n := len(payloads[map[string]any](t, res.Events, event.EvSkipped)); n != 0 {
		t.Fatalf("%d steps skipped\n%s", n, dump(res.Events))
	}
}

// A failing check blames itself, ends the task, and repeats none of the
// actions before it.
func TestFailingCheckBlamesItself(t *testing.T) {
	p := startPhone(t, noPopupSeed)
	p.launch(t, shop)
	rt, _ := agent.New(agent.Config{CheckTimeout: 300 * time.Millisecond})
	res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: `tap "Search", type "headphones", then check "Zebra Pajamas" exists`, Driver: p.drv})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.Failed || !strings.HasPrefix(res.Reason, "step 3 ") {
		t.Fatalf("status %s, reason %q: want step 3 blamed\n%s", res.Status, res.Reason, dump(res.Events))
	}
	// An attempt that failed before acting (the screen moved under it) may
	// be retried; an action that ran is never repeated.
	ran := map[int]int{}
	for _, a := range payloads[struct {
		Step  int    `json:"step_id"`
		Error string `json:"error"`
	}](t, res.Events, event.EvActed) {
		if a.Error == "" {
			ran[a.Step]++
		}
	}
	if d := cmp.Diff(map[int]int{1: 1, 2: 1}, ran); d != "" {
		t.Fatalf("actions that ran, by step (-want +got):\n%s\n%s", d, dump(res.Events))
	}
	if s := states(t, res.Events); contains(s, "REPLANNING") {
		t.Fatalf("states %v: a failing check is not re-planned", s)
	}
	for i, sr := range res.Steps {
		if want := (i < 2); (sr.Status == agent.Done) != want {
			t.Errorf("step %d status %s", sr.ID, sr.Status)
		}
	}
	if q := p.state(t, shop)["query"]; q != "headphones" {
		t.Fatalf("query = %v", q)
	}
}

// On/off verbs set a switch to a state and leave one already there alone;
// the state is read from the phone.
func TestSwitchForms(t *testing.T) {
	tests := []struct {
		goal    string
		key     string
		want    bool
		skipped int
	}{
		{`tap "Network & internet", turn off "Wi-Fi"`, "wifi", false, 0},
		{`tap "Network & internet", turn 'Wi-Fi' off, then check «Wi-Fi» is off`, "wifi", false, 0},
		{`tap "Network & internet", make sure "Wi-Fi" is on`, "wifi", true, 1},
		{`tap "Network & internet", switch on the "Wi-Fi" switch`, "wifi", true, 1},
		{`tap "Display", enable "Dark theme"`, "dark_mode", true, 0},
		{`tap "Display", disable "Dark theme"`, "dark_mode", false, 1},
		{`点击“Display”，打开“Dark theme”`, "dark_mode", true, 0},
		{`点击“Network & internet”，关闭“Wi-Fi”`, "wifi", false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.goal, func(t *testing.T) {
			p := startPhone(t, noPopupSeed)
			p.launch(t, settings)
			rt, _ := agent.New(agent.Config{})
			res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: tc.goal, Driver: p.drv})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != agent.Done {
				t.Fatalf("status %s: %s\n%s", res.Status, res.Reason, dump(res.Events))
			}
			if got := p.state(t, settings)[tc.key]; got != tc.want {
				t.Fatalf("%s = %v, want %v\n%s", tc.key, got, tc.want, dump(res.Events))
			}
			if n := len(payloads[map[string]any](t, res.Events, event.EvSkipped)); n != tc.skipped {
				t.Fatalf("%d steps skipped, want %d\n%s", n, tc.skipped, dump(res.Events))
			}
		})
	}
}
