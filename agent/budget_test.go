package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/scene"
)

// corpusScenes reads every UI dump of the shared corpus (skipping the test
// when ../shared is absent).
func corpusScenes(tb testing.TB) map[string]*scene.Scene {
	tb.Helper()
	root := filepath.Join("..", "..", "shared", "corpus")
	if _, err := os.Stat(root); err != nil {
		tb.Skipf("no corpus at %s (the shared folder is absent): %v", root, err)
	}
	out := map[string]*scene.Scene{}
	for _, dir := range []string{"android", "ios"} {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*.xml"))
		for i, f := range files {
			if raceEnabled && i%4 != 0 {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				tb.Fatal(err)
			}
			sc, err := scene.FromSource(data, nil)
			if err != nil {
				continue // not a UI source the scene package reads; its own tests cover that
			}
			out[dir+"/"+filepath.Base(f)] = sc
		}
	}
	if len(out) == 0 {
		tb.Skip("the corpus has no readable screens")
	}
	return out
}

// stepPrompts are the prompts one step can cost on screen sc, with a full
// progress context (five 50-character summaries and what is left).
func stepPrompts(sc *scene.Scene) map[string]*llm.Request {
	var sums []string
	for i := 0; i < 5; i++ {
		sums = append(sums, strings.Repeat("x", 48))
	}
	progress := "done 5: " + strings.Join(sums, "; ") + "\nleft: " + strings.Repeat("tap \"Something\"; ", 20)[:300]
	field := action.Locator{Prompt: "the search field at the top of the page"}
	st := Step{ID: 6, Call: action.Input.MustCall(&action.InputParams{Value: "wireless noise cancelling headphones", Locate: &field})}
	return map[string]*llm.Request{
		"planner":   plannerRequest("Find the cheapest wireless noise cancelling headphones with at least four stars and add two to the cart", sc, progress, action.ForPlatform(device.Android)),
		"executor":  executorRequest(st, "no element matches \"the search field at the top of the page\"", "", sc, progress),
		"validator": validatorRequest(`"Cart (2)" shown`, sc),
		"query":     queryRequest("What is the price of the first result?", QueryNumber, sc),
	}
}

func TestPromptBudget(t *testing.T) {
	scenes := corpusScenes(t)
	perRole := map[string][]int{}
	for name, sc := range scenes {
		for role, req := range stepPrompts(sc) {
			text := promptText(req)
			for _, mk := range rawMarkers {
				if strings.Contains(text, mk) {
					t.Errorf("%s: the %s prompt carries raw source (%q)", name, role, mk)
				}
			}
			n := llm.Tokens(text)
			perRole[role] = append(perRole[role], n)
			if n > PromptBudget {
				t.Errorf("%s: the %s prompt is %d tokens, over the %d budget", name, role, n, PromptBudget)
			}
		}
	}
	for role, ns := range perRole {
		slices.Sort(ns)
		t.Logf("%-9s %d screens: median %d, p90 %d, max %d tokens", role, len(ns), ns[len(ns)/2], ns[len(ns)*9/10], ns[len(ns)-1])
	}
}

// A prompt that would carry raw XML is refused before it is sent.
func TestRawSourceRefused(t *testing.T) {
	m := &roleModel{role: event.RolePlanner}
	req := &llm.Request{Messages: []llm.Message{{Role: "user", Text: `<?xml version="1.0"?><hierarchy><node text="x"/></hierarchy>`}}}
	if _, err := m.complete(t.Context(), req); err == nil || !strings.Contains(err.Error(), ErrRawSource.Error()) {
		t.Fatalf("err = %v, want ErrRawSource", err)
	}
}

func BenchmarkPromptTokens(b *testing.B) {
	scenes := corpusScenes(b)
	var names []string
	for n := range scenes {
		names = append(names, n)
	}
	slices.Sort(names)
	max, total, count := 0, 0, 0
	for b.Loop() {
		for _, n := range names {
			for _, req := range stepPrompts(scenes[n]) {
				t := llm.Tokens(promptText(req))
				max = maxInt(max, t)
				total += t
				count++
			}
		}
	}
	b.ReportMetric(float64(max), "max-tokens/prompt")
	b.ReportMetric(float64(total)/float64(count), "tokens/prompt")
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// A screen denser than any in the corpus — hundreds of Chinese items —
// still fits: the Scene text shrinks to what the budget leaves.
func TestPromptBudgetDenseCJK(t *testing.T) {
	sc := &scene.Scene{Width: 1080, Height: 24000, Package: "com.apex.zhongwen", Format: scene.FormatUIAutomator}
	for i := 0; i < 400; i++ {
		sc.Elements = append(sc.Elements, scene.Element{ID: "e" + strconv.Itoa(i+1), Type: "item", Text: strings.Repeat("购物清单牛奶鸡蛋面包", 3),
			Bounds: scene.Rect{X0: 0, Y0: i * 60, X1: 1080, Y1: i*60 + 60}, Flags: scene.Flags{Clickable: true}, Source: "tree", Confidence: 1})
	}
	for role, req := range stepPrompts(sc) {
		text := promptText(req)
		if n := llm.Tokens(text); n > PromptBudget || !strings.Contains(text, "e1 item") {
			t.Errorf("%s prompt: %d tokens (budget %d), first element kept: %v", role, n, PromptBudget, strings.Contains(text, "e1 item"))
		}
	}
}
