package agent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/event"
)

// repeatDecision is the repeat event's payload, as a reader of the events
// sees it.
type repeatDecision struct {
	Step      int    `json:"step_id"`
	Action    string `json:"action"`
	Effect    string `json:"effect"`
	Repeat    bool   `json:"repeat"`
	Unchanged bool   `json:"unchanged"`
	Absent    bool   `json:"absent"`
	Evidence  string `json:"evidence"`
}

func init() {
	// The model plans one tap of the build number, judged by "the screen
	// changes"; told that it failed, it checks the page instead.
	natural["Tap the build number once"] = `tap "About phone", tap "UQ1A.240205.004"`
	replanned["Tap the build number once"] = `check "UQ1A.240205.004" exists`
	// The model expects the wrong total of the quantity tap itself (no
	// check step after it); re-planning on the cart, it checks what is
	// there.
	const qty = "Make it two Ultra Toasters, total 99.99"
	natural[qty] = `type "toaster" into "Search", tap "Ultra Toaster", tap "Buy now", tap "Increase quantity"`
	planned[qty] = func(steps []agent.Step) []agent.Step {
		last := &steps[len(steps)-1]
		last.Expected = &check.Check{Kind: check.Exists, Target: check.ParseTarget("Total: $99.99")}
		return steps
	}
	replanned[qty] = `check "Total: $23.98" exists`
}

// actBy runs a task on a fresh phone with app in front: goal by the rule
// planner, or the plain words by the scripted model.
func actBy(t *testing.T, byModel bool, app, goal, plain string) (*phone, *agent.Result) {
	t.Helper()
	p := startPhone(t, noPopupSeed)
	p.launch(t, app)
	cfg := agent.Config{CheckTimeout: 300 * time.Millisecond, Perception: noOCR}
	if byModel {
		_, cfg.LLM = newScripted().start(t)
		goal = plain
	}
	rt, _ := agent.New(cfg)
	res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: goal, Driver: p.drv})
	if err != nil {
		t.Fatal(err)
	}
	return p, res
}

// Tapping the build number counts taps the screen does not show. The tap
// acted and nothing changed, which a lost tap and a counted one look
// alike: recovery does not tap again (the counter ends at 1). The rules
// can only fail, saying why; the model re-plans from the screen.
func TestHiddenEffectNotRepeated(t *testing.T) {
	for _, byModel := range []bool{false, true} {
		name := map[bool]string{false: "rules", true: "model"}[byModel]
		t.Run(name, func(t *testing.T) {
			p, res := actBy(t, byModel, settings, natural["Tap the build number once"], "Tap the build number once")
			if n := num(p.state(t, settings)["build_taps"]); n != 1 {
				t.Fatalf("build_taps = %v, want 1: the tap was repeated\n%s", n, dump(res.Events))
			}
			ds := payloads[repeatDecision](t, res.Events, event.EvRepeat)
			if len(ds) != 1 || ds[0].Repeat || !ds[0].Unchanged || ds[0].Effect != "cumulative" || ds[0].Step != 2 {
				t.Fatalf("repeat decisions %+v, want one refusal on an unchanged screen\n%s", ds, dump(res.Events))
			}
			want := agent.Failed
			if byModel {
				want = agent.Done
			}
			if res.Status != want {
				t.Fatalf("status %s, want %s: %s\n%s", res.Status, want, res.Reason, dump(res.Events))
			}
			if !byModel && !strings.Contains(res.Reason, "not repeated") {
				t.Fatalf("reason %q does not say the tap was not repeated", res.Reason)
			}
			if byModel && res.Replans != 1 {
				t.Fatalf("%d re-plans, want 1", res.Replans)
			}
		})
	}
}

// "Increase quantity" changed the screen (quantity 1 → 2), but the state
// the step expects never comes: the tap is not repeated (the quantity
// stays 2). By the rules the check after the tap fails, blamed on
// itself; the model's own expectation of the tap fails, and its re-plan
// checks the cart as it is.
func TestChangedScreenNotRepeated(t *testing.T) {
	for _, byModel := range []bool{false, true} {
		name := map[bool]string{false: "rules", true: "model"}[byModel]
		t.Run(name, func(t *testing.T) {
			p, res := actBy(t, byModel, shop, `type "toaster" into "Search", tap "Ultra Toaster", tap "Buy now", tap "Increase quantity", then check "Total: $99.99" exists`,
				"Make it two Ultra Toasters, total 99.99")
			c := list(p.state(t, shop)["cart"])
			if len(c) != 1 || num(item(c[0])["qty"]) != 2 {
				t.Fatalf("cart = %v, want one toaster, quantity 2\n%s", c, dump(res.Events))
			}
			for _, d := range payloads[repeatDecision](t, res.Events, event.EvRepeat) {
				if d.Repeat && d.Action == "Tap" {
					t.Fatalf("a tap was allowed again: %+v\n%s", d, dump(res.Events))
				}
			}
			if !byModel {
				if res.Status != agent.Failed || !strings.Contains(res.Reason, "step 5") {
					t.Fatalf("status %s: %s, want the check (step 5) blamed\n%s", res.Status, res.Reason, dump(res.Events))
				}
				return
			}
			if res.Status != agent.Done || res.Replans != 1 {
				t.Fatalf("status %s after %d re-plans: %s\n%s", res.Status, res.Replans, res.Reason, dump(res.Events))
			}
			ds := payloads[repeatDecision](t, res.Events, event.EvRepeat)
			if len(ds) != 1 || ds[0].Unchanged || !strings.Contains(ds[0].Evidence, "changed") {
				t.Fatalf("repeat decisions %+v, want one refusal on a changed screen\n%s", ds, dump(res.Events))
			}
		})
	}
}
