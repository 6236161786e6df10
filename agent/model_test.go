package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/llm/llmtest"
)

// scriptedModel is the test's model: it answers each role from what the
// prompt says — the goal, the step, and the Scene text — as a real model
// would, only by rules written for the suite's tasks.
type scriptedModel struct {
	mu    sync.Mutex
	calls map[string]int // by role (from the system prompt)
}

// mreply is what the model answers: text, or a call of the one tool offered.
type mreply struct {
	text string
	call *llm.ToolCall
}

func newScripted() *scriptedModel { return &scriptedModel{calls: map[string]int{}} }

// natural maps the suite's plain-words goals to what the scripted planner
// plans (written in the controlled language, then turned into steps).
var natural = func() map[string]string {
	m := map[string]string{}
	for _, tk := range suite {
		m[tk.natural] = tk.goal
	}
	return m
}()

var (
	idRE      = regexp.MustCompile(`^(e\d+) `)
	quotedRE  = regexp.MustCompile(`"([^"]*)"`)
	paramRE   = regexp.MustCompile(`(\w+): ("(?:[^"\\]|\\.)*"|\{[^}]*\}|[^,)]+)`)
	cartNumRE = regexp.MustCompile(`Cart \((\d+)\)`)
)

func section(prompt, head string) string {
	_, after, _ := strings.Cut(prompt, head)
	line, _, _ := strings.Cut(after, "\n")
	return strings.TrimSpace(line)
}

func screenOf(prompt string) []string {
	_, s, _ := strings.Cut(prompt, "Screen:\n")
	return strings.Split(s, "\n")
}

// planned rewrites the scripted planner's first plan of a goal (a
// model's own expectations, not the controlled language's); replanned is
// its re-plan of a goal, from the screen it failed on.
var (
	planned   = map[string]func([]agent.Step) []agent.Step{}
	replanned = map[string]string{}
)

// synonyms are the model's world knowledge.
var synonyms = map[string]string{"basket": "cart", "shopping bag": "cart", "trolley": "cart"}

// findLine finds the screen line that mentions what (or a synonym).
func findLine(screen []string, what string) (string, bool) {
	w := strings.ToLower(what)
	for k, v := range synonyms {
		if strings.Contains(w, k) {
			w = v
		}
	}
	w = strings.TrimPrefix(strings.TrimPrefix(w, "the "), "a ")
	for _, l := range screen {
		if idRE.MatchString(l) && strings.Contains(strings.ToLower(l), w) && !strings.Contains(l, " system") {
			return l, true
		}
	}
	return "", false
}

func (m *scriptedModel) answer(system, user string, tools []string) mreply {
	switch {
	case strings.Contains(system, "the planner"):
		goal := section(user, "Goal: ")
		cl, ok := natural[goal]
		switch {
		case goal == "Open the basket":
			cl, ok = `tap "the basket", then check "Your cart is empty" exists`, true
		case replanned[goal] != "" && strings.Contains(user, "Progress:"):
			cl, ok = replanned[goal], true
		case goal == "Look at the cart" && !strings.Contains(user, "Progress:"):
			cl, ok = `tap "Go to checkout", then check "Your cart is empty" exists`, true // a wrong first guess
		case goal == "Look at the cart":
			cl, ok = `tap "Cart (0)", then check "Your cart is empty" exists`, true // re-planned on the screen
		}
		if !ok {
			return mreply{text: "I do not know how to do that."}
		}
		screen := strings.Join(screenOf(user), "\n")
		if strings.Contains(screen, "Summer Sale") {
			cl = `tap "Close", ` + cl // the model sees the popup first
		}
		if strings.HasPrefix(cl, `open "`) {
			// On the home screen already: just tap the icon.
			if app := quotedRE.FindStringSubmatch(cl)[1]; strings.Contains(screen, `item "`+app+`"`) {
				cl = "tap" + strings.TrimPrefix(cl, "open")
			}
		}
		steps, err := agent.PlanRules(cl)
		if err != nil {
			return mreply{text: "sorry: " + err.Error()}
		}
		if f := planned[goal]; f != nil && !strings.Contains(user, "Progress:") {
			steps = f(steps)
		}
		b, _ := json.Marshal(map[string]any{"steps": steps})
		return mreply{text: "Here is the plan:\n```json\n" + string(b) + "\n```"}
	case strings.Contains(system, "the executor"):
		step := section(user, "Step: ")
		if len(tools) == 0 {
			return mreply{text: "{}"}
		}
		a, err := action.ForPlatform(device.Android).Find(tools[0])
		if err != nil {
			return mreply{text: `{"error":"` + err.Error() + `"}`}
		}
		// Copy the step's params, naming each element by its screen id.
		args := map[string]json.RawMessage{}
		for _, p := range paramRE.FindAllStringSubmatch(step, -1) {
			args[p[1]] = json.RawMessage(p[2])
		}
		for _, f := range a.LocatorFields() {
			var what string
			if json.Unmarshal(args[f], &what) != nil {
				continue
			}
			line, ok := findLine(screenOf(user), what)
			if !ok {
				return mreply{text: `{"error":"nothing on screen matches"}`}
			}
			args[f], _ = json.Marshal(map[string]string{"id": idRE.FindStringSubmatch(line)[1]})
		}
		raw, _ := json.Marshal(args)
		return mreply{call: &llm.ToolCall{ID: "call_1", Name: tools[0], Args: raw}}
	case strings.Contains(system, "the validator"):
		a := section(user, "Assertion: ")
		screen := screenOf(user)
		switch {
		case strings.Contains(a, "cart is empty"):
			_, ok := findLine(screen, `"Cart (0)"`)
			return mreply{text: `{"pass":` + boolJSON(ok) + `,"confidence":0.92,"evidence":"the cart button reads Cart (0)"}`}
		case strings.Contains(a, "maybe"):
			return mreply{text: `{"pass":true,"confidence":0.7,"evidence":"it looks so, but I am not sure"}`}
		}
		q := quotedRE.FindStringSubmatch(a)
		if q == nil {
			return mreply{text: `{"pass":false,"confidence":0.5,"evidence":"cannot tell"}`}
		}
		_, ok := findLine(screen, q[1])
		return mreply{text: `{"pass":` + boolJSON(ok) + `,"confidence":0.9,"evidence":"looked for ` + q[1] + `"}`}
	case strings.Contains(system, "You read a phone screen"):
		qn := section(user, "Question: ")
		if strings.Contains(qn, "cart") {
			for _, l := range screenOf(user) {
				if c := cartNumRE.FindStringSubmatch(l); c != nil {
					return mreply{text: `{"answer": ` + c[1] + `}`}
				}
			}
		}
		return mreply{text: `{"answer": null}`}
	}
	return mreply{text: "?"}
}

func boolJSON(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func roleOf(system string) string {
	for _, r := range []string{"planner", "executor", "validator"} {
		if strings.Contains(system, "the "+r) {
			return r
		}
	}
	return "query"
}

// serve answers an OpenAI-compatible request of the llmtest server.
func (m *scriptedModel) serve(r *llmtest.Request) llmtest.Reply {
	var tools []string
	for _, t := range r.Tools {
		tools = append(tools, t.Name)
	}
	system := r.System()
	m.mu.Lock()
	m.calls[roleOf(system)]++
	m.mu.Unlock()
	rep := m.answer(system, r.LastUser(), tools)
	if rep.call != nil {
		return llmtest.Call(rep.call.Name, rep.call.Args)
	}
	return llmtest.Text(rep.text)
}

// start serves the scripted model over HTTP, OpenAI-style, and returns the
// configuration pointing every role at it.
func (m *scriptedModel) start(t *testing.T) (*llmtest.Server, *llm.Config) {
	srv := llmtest.New(t, m.serve)
	return srv, srv.Config()
}

func (m *scriptedModel) count(role string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[role]
}

// TestSuiteScriptedModel runs every task of the suite from its plain
// words, planned by the scripted model over HTTP, each on a phone of its
// own, several at once; it logs prompt tokens per step (llm.Tokens, cl100k)
// and model calls per task — the figures in bench/README.md.
func TestSuiteScriptedModel(t *testing.T) {
	var mu sync.Mutex
	var perStep, calls, maxPrompt []int
	t.Cleanup(func() {
		if len(perStep) == 0 {
			return
		}
		slices.Sort(perStep)
		slices.Sort(calls)
		slices.Sort(maxPrompt)
		t.Logf("%d tasks: prompt tokens per step median %d, max %d; largest prompt %d tokens (budget %d); model calls per task median %d, max %d",
			len(perStep), perStep[len(perStep)/2], perStep[len(perStep)-1], maxPrompt[len(maxPrompt)-1], agent.PromptBudget, calls[len(calls)/2], calls[len(calls)-1])
	})
	eachTask(t, 1, func(t *testing.T, tk suiteTask) {
		m := newScripted()
		srv, cfg := m.start(t)
		rt, err := agent.New(agent.Config{LLM: cfg})
		if err != nil {
			t.Fatal(err)
		}
		res := runSuiteTask(t, tk, rt, tk.natural)
		if m.count("planner") == 0 || res.ModelCalls == 0 {
			t.Fatalf("the model planned nothing (%d calls)", res.ModelCalls)
		}
		if res.MaxPromptTokens > agent.PromptBudget || res.Usage.PromptTokens == 0 {
			t.Fatalf("largest prompt %d tokens (budget %d), usage %+v", res.MaxPromptTokens, agent.PromptBudget, res.Usage)
		}
		mu.Lock()
		perStep = append(perStep, res.Usage.PromptTokens/max(len(res.Steps), 1))
		calls = append(calls, res.ModelCalls)
		maxPrompt = append(maxPrompt, res.MaxPromptTokens)
		mu.Unlock()
		for _, r := range srv.Requests() {
			if p := r.Prompt(); strings.Contains(p, "<node") || strings.Contains(p, "<?xml") || strings.Contains(p, "<hierarchy") {
				t.Fatalf("a prompt carries raw XML: %.200s", p)
			}
			if r.Images() != 0 {
				t.Fatal("a prompt carries a screenshot")
			}
		}
	})
}

// A target no rule can find ("the basket") goes to the executor model,
// which reads the Scene and picks the cart button; the replay cache then
// serves the same step on the same screen without the model.
func TestExecutorModelAndCache(t *testing.T) {
	m := newScripted()
	file := agent.CachePath(t.TempDir() + "/shop.yaml")
	st := openStore(t)
	cache, err := agent.OpenCache(context.Background(), file, st)
	if err != nil {
		t.Fatal(err)
	}
	_, cfg := m.start(t)
	rt, _ := agent.New(agent.Config{LLM: cfg, Cache: cache})
	run := func() *agent.Result {
		p := startPhone(t, noPopupSeed)
		p.launch(t, shop)
		res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: "Open the basket", Driver: p.drv})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != agent.Done {
			t.Fatalf("status %s: %s\n%s", res.Status, res.Reason, dump(res.Events))
		}
		if _, act := p.dev.Phone.Foreground(); act != ".CartActivity" {
			t.Fatalf("the phone shows %s, not the cart", act)
		}
		return res
	}
	first := run()
	if first.Steps[0].Via != "model" || m.count("executor") != 1 {
		t.Fatalf("first run: step 1 via %s, %d executor calls", first.Steps[0].Via, m.count("executor"))
	}
	if cache.Len() != 1 {
		t.Fatalf("cache has %d entries", cache.Len())
	}
	second := run()
	if second.Steps[0].Via != "cache" || m.count("executor") != 1 {
		t.Fatalf("second run: step 1 via %s, %d executor calls", second.Steps[0].Via, m.count("executor"))
	}
	// The file beside the script holds it, and so does the store.
	if !strings.HasSuffix(file, "/shop.cache.json") {
		t.Fatalf("cache file %s", file)
	}
	for _, src := range []struct {
		file string
		st   agent.CacheStore
	}{{file, nil}, {"", st}} {
		again, err := agent.OpenCache(context.Background(), src.file, src.st)
		if err != nil || again.Len() != 1 || again.Entries()[0].Via != "model" {
			t.Fatalf("reopened cache (file %q): %v, %d entries", src.file, err, again.Len())
		}
	}
	// A cached element that is no longer there: the executor notices before
	// acting, says so in an event, and falls back to the model.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(string(data), `"Cart (0)"`, `"Basket (9)"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	stale, err := agent.OpenCache(context.Background(), file, nil)
	if err != nil {
		t.Fatal(err)
	}
	rt, _ = agent.New(agent.Config{LLM: cfg, Cache: stale})
	third := run()
	if third.Steps[0].Via != "model" || m.count("executor") != 2 || len(payloads[map[string]any](t, third.Events, "cache_mismatch")) != 1 {
		t.Fatalf("stale cache: step 1 via %s, %d executor calls\n%s", third.Steps[0].Via, m.count("executor"), dump(third.Events))
	}
}

func TestAssertAndQuery(t *testing.T) {
	p := startPhone(t, noPopupSeed)
	p.launch(t, shop)
	ctx := ctxT(t, 30*time.Second)
	task := func(goal string) agent.Task { return agent.Task{Goal: goal, Driver: p.drv} }

	off, _ := agent.New(agent.Config{})
	v, err := off.Assert(ctx, task(`"Cart (0)" exists, "Search" is shown`))
	if err != nil || !v.Pass || v.Confidence != 1 {
		t.Fatalf("offline assert: %+v, %v", v, err)
	}
	v, err = off.Assert(ctx, task(`确认出现“Cart (1)”`))
	if err != nil || v.Pass {
		t.Fatalf("offline assert of an absent text: %+v, %v", v, err)
	}
	if _, err := off.Assert(ctx, task("the cart is empty")); !errors.Is(err, agent.ErrNeedsModel) {
		t.Fatalf("offline free-form assert: %v, want ErrNeedsModel", err)
	}
	n, err := off.Query(ctx, task(`"Cart"`), agent.QueryNumber)
	if err != nil || n != 0.0 {
		t.Fatalf("offline number query: %v, %v", n, err)
	}
	s, err := off.Query(ctx, task(`"Cart"`), agent.QueryString)
	if err != nil || s != "Cart (0)" {
		t.Fatalf("offline string query: %v, %v", s, err)
	}
	b, err := off.Query(ctx, task(`"Cart (0)" exists`), agent.QueryBoolean)
	if err != nil || b != true {
		t.Fatalf("offline boolean query: %v, %v", b, err)
	}
	if _, err := off.Query(ctx, task("what is on sale?"), agent.QueryAny); !errors.Is(err, agent.ErrNeedsModel) {
		t.Fatalf("offline free query: %v", err)
	}

	m := newScripted()
	_, cfg := m.start(t)
	on, _ := agent.New(agent.Config{LLM: cfg})
	v, err = on.Assert(ctx, task("the cart is empty"))
	if err != nil || !v.Pass || v.Confidence != 0.92 || !strings.HasPrefix(v.Evidence, "model:") {
		t.Fatalf("model assert: %+v, %v", v, err)
	}
	v, err = on.Assert(ctx, task("maybe there is a sale"))
	if err != nil || !v.Review {
		t.Fatalf("unsure model assert: %+v, %v, want Review", v, err)
	}
	n, err = on.Query(ctx, task("How many items are in the cart?"), agent.QueryNumber)
	if err != nil || n != 0.0 {
		t.Fatalf("model number query: %v, %v", n, err)
	}
}

// The same scripted model answers in Anthropic's Messages API shape: the
// runtime works the same through the Anthropic client.
func TestSuiteAnthropicShape(t *testing.T) {
	for _, name := range []string{"shop add to cart", "settings airplane", "login", "zh add item"} {
		tk := taskNamed(t, name)
		t.Run(tk.name, func(t *testing.T) {
			m := newScripted()
			srv := llmtest.New(t, m.serve)
			rt, err := agent.New(agent.Config{LLM: srv.AnthropicConfig()})
			if err != nil {
				t.Fatal(err)
			}
			res := runSuiteTask(t, tk, rt, tk.natural)
			reqs := srv.Requests()
			if res.ModelCalls == 0 || len(reqs) == 0 || reqs[0].Protocol != llm.ProviderAnthropic {
				t.Fatalf("%d model calls, %d requests", res.ModelCalls, len(reqs))
			}
		})
	}
}

// A plan whose step matches nothing: two retries, then the model re-plans
// from the screen and the compressed progress, and the new plan works.
func TestModelReplan(t *testing.T) {
	p := startPhone(t, noPopupSeed)
	p.launch(t, shop)
	m := newScripted()
	_, cfg := m.start(t)
	rt, _ := agent.New(agent.Config{LLM: cfg, CheckTimeout: 200 * time.Millisecond})
	res, err := rt.Act(ctxT(t, 60*time.Second), agent.Task{Goal: "Look at the cart", Driver: p.drv})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.Done || res.Replans != 1 || m.count("planner") != 2 {
		t.Fatalf("status %s, %d re-plans, %d planner calls: %s\n%s", res.Status, res.Replans, m.count("planner"), res.Reason, dump(res.Events))
	}
	if s := strategies(t, res.Events); len(s) != agent.MaxRetries {
		t.Fatalf("retries %v before the re-plan", s)
	}
	if _, act := p.dev.Phone.Foreground(); act != ".CartActivity" {
		t.Fatalf("the phone shows %s", act)
	}
	if res.Steps[0].Step != `Tap(locate: "Cart (0)")` || res.Steps[0].Status != agent.Done {
		t.Fatalf("steps after the re-plan: %+v", res.Steps)
	}
}
