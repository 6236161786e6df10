package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/script"
	"github.com/apexagent/apex/sim/lab"
	"github.com/apexagent/apex/store"
	"github.com/google/go-cmp/cmp"
)

// runOnTree runs s with values on a simulated phone with the seed, driven
// as apex run --sim does, whose screenshots are one pixel (these tests read
// the UI tree only; rendering screens costs seconds under the race
// detector). It returns the result and the recorded steps.
func runOnTree(t *testing.T, s *script.Script, seed int64, values map[string]string) (*Result, []string) {
	t.Helper()
	_, d := startPhone(t, lab.Options{Android: 1, Seed: seed})
	st := openStore(t)
	o := fastOptions(st)
	o.Perception.Mode = perceive.Off
	o.FindTimeout, o.AssertTimeout, o.Values = 3*time.Second, 2*time.Second, values
	res, err := Run(context.Background(), noShots{d}, s, o)
	if err != nil {
		t.Fatal(err)
	}
	return res, stepNames(t, st, res.Run.ID)
}

// tree writes files into a new directory and returns it.
func tree(t *testing.T, files fstest.MapFS) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, files); err != nil {
		t.Fatal(err)
	}
	return dir
}

// stepNames are the names of a run's recorded steps with their status.
func stepNames(t *testing.T, st *store.Store, runID string) []string {
	t.Helper()
	steps, err := st.Steps(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range steps {
		out = append(out, s.Status+" "+s.Name)
	}
	return out
}

const openShopFlow = `
params: {app: com.apex.shop}
tasks:
  - name: open
    flow:
      - launch: ${app}
      - if: {visible: "Summer Sale: 20% off", timeout: 1500}
        flow:
          - tap: {desc: Close}
        else:
          - assert: {notExists: "Summer Sale: 20% off"}
`

const searchFlow = `
params: [query]
tasks:
  - name: search
    flow:
      - input: {id: search}
        value: ${query}
      - read: {locate: {id: product_item, index: 0}, as: first}
      - tap: ${first}
      - read: {locate: {id: product_price}, as: price}
`

const cartScript = `
sim: {platform: android}
tasks:
  - name: find shoes
    flow:
      - runFlow: flows/open-shop.yaml
      - runFlow:
          file: flows/search.yaml
          with: {query: running shoes}
      - assert:
          textEquals: ${price}
          element: {id: product_price}
  - name: cart
    flow:
      - tap: Add to cart
      - tap: {id: cart_button}
      - repeat: {times: 2}
        flow:
          - tap: {desc: Increase quantity}
      - assert: {textEquals: "3", element: {id: quantity}}
      - repeat:
          until: {textEquals: "1", element: {id: quantity}}
          max: 5
        flow:
          - tap: {id: decrease}
      - if: {platform: ios}
        flow:
          - assert: {exists: no such thing}
      - runFlow:
          name: note
          with: {what: "$${literal} ${first}"}
          flow:
            - read: {locate: {id: cart_total}, as: total}
      - assert:
          textContains: ${total}
          element: {id: cart_total}
`

func TestFlowsValuesConditionsLoops(t *testing.T) {
	dir := tree(t, fstest.MapFS{"flows/open-shop.yaml": {Data: []byte(openShopFlow)}, "flows/search.yaml": {Data: []byte(searchFlow)}, "cart.yaml": {Data: []byte(cartScript)}})
	s, err := script.LoadFile(filepath.Join(dir, "cart.yaml"), &script.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	res, names := runOnTree(t, s, 0, nil)
	all := strings.Join(names, "\n")
	if res.Status != store.StatusPassed {
		t.Fatalf("%s: %s\n%s", res.Status, res.Reason, all)
	}
	for _, want := range []string{
		"passed runFlow open-shop › open › launch: com.apex.shop",
		`passed runFlow open-shop › open › if: "Summer Sale: 20% off" shows → `,
		`passed runFlow search › search › input: "running shoes" into {"id":"search"}`,
		"passed repeat 1/2 › tap: {\"desc\":\"Increase quantity\"}",
		"passed repeat 2/2 › tap: {\"desc\":\"Increase quantity\"}",
		"passed repeat 2 › tap: {\"id\":\"decrease\"}",
		`passed repeat until: "id:quantity" reads "1" (check 2) → again`,
		`passed repeat until: "id:quantity" reads "1" (check 3) → done`,
		"passed if: platform is ios → else",
		"passed runFlow note › read: {\"id\":\"cart_total\"} as total",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no step %q in\n%s", want, all)
		}
	}
	if strings.Contains(all, "no such thing") {
		t.Errorf("the ios branch ran on android:\n%s", all)
	}
	if price, _ := res.Outputs["price"].(string); !strings.HasPrefix(price, "$") || res.Outputs["total"] != "Total: "+price {
		t.Errorf("outputs = %v", res.Outputs)
	}
}

// TestSalePopupExampleOverSeeds runs examples/suite/sale-popup.yaml with
// three seeds of the simulated phone: the Shop's sale popup comes on some
// launches only, and the example's if handles both.
func TestSalePopupExampleOverSeeds(t *testing.T) {
	s, err := script.LoadFile("../examples/suite/sale-popup.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	branches := map[string]int64{}
	for _, seed := range []int64{0, 1, 2} {
		res, names := runOnTree(t, s, seed, nil)
		if res.Status != store.StatusPassed {
			t.Fatalf("seed %d: %s: %s\n%s", seed, res.Status, res.Reason, strings.Join(names, "\n"))
		}
		for _, n := range names {
			if _, b, ok := strings.Cut(n, `if: "Summer Sale: 20% off" shows → `); ok {
				branches[b] = seed
			}
		}
	}
	if len(branches) != 2 {
		t.Errorf("branches taken over seeds 0 to 2: %v; want then and else", branches)
	}
}

// TestQueryValues: a query's answer is a value later steps use, with no
// model (the controlled language answers these).
func TestQueryValues(t *testing.T) {
	_, d := simPhone(t)
	rt, err := agent.New(agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	src := `
android:
  launch: com.apex.login
tasks:
  - name: sign in, then use what the screen said
    flow:
      - aiAct: type "demo" into "Username", type "apex123" into "Password", then tap "Sign in"
      - aiString: '"Welcome, demo!"'
        as: greeting
      - aiNumber: '"You have signed in"'
        name: logins
      - assert:
          textEquals: ${greeting}
          element: {id: welcome}
      - assert:
          textEquals: You have signed in ${logins} time.
          element: {id: login_count}
`
	opts := fastOptions(openStore(t))
	opts.AI = rt
	res, err := Run(context.Background(), d, load(t, src), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != store.StatusPassed {
		t.Fatalf("%s: %s", res.Status, res.Reason)
	}
}

// TestFailureInAFlow: a step failing inside a flow names its place in the
// call tree and its own file and line; what was left of the flow and of
// the task is recorded as skipped.
func TestFailureInAFlow(t *testing.T) {
	dir := tree(t, fstest.MapFS{
		"f.yaml":    {Data: []byte("tasks:\n  - name: t\n    flow:\n      - launch: com.apex.login\n      - tap: No such thing\n      - back\n")},
		"main.yaml": {Data: []byte("tasks:\n  - name: main\n    flow:\n      - runFlow: f.yaml\n      - tap: Sign in\n")},
	})
	s, err := script.LoadFile(filepath.Join(dir, "main.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, names := runOnTree(t, s, 0, nil)
	want := fmt.Sprintf(`task "main" failed: step 1 (runFlow f › t › tap: No such thing) at %s:5:9: `, filepath.Join(dir, "f.yaml"))
	if res.Status != store.StatusFailed || !strings.HasPrefix(res.Reason, want) {
		t.Errorf("reason = %q\nwant it to start %q", res.Reason, want)
	}
	got := strings.Join(names, "\n")
	if d := cmp.Diff("passed runFlow f › t › launch: com.apex.login\nfailed runFlow f › t › tap: No such thing\nskipped runFlow f › t › back\nskipped tap: Sign in", got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
}

// TestStepBudget: repeats inside repeats (a million steps) end at the
// run's step budget with a failure saying so, not after a million steps.
func TestStepBudget(t *testing.T) {
	const doc = `
tasks:
  - name: loops
    flow:
      - repeat: {times: 1000}
        flow:
          - repeat: {times: 1000}
            flow:
              - if: {platform: android}
                flow:
                  - back
`
	s, err := script.Load([]byte(doc), "loops.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, d := startPhone(t, lab.Options{Android: 1})
	st := openStore(t)
	o := fastOptions(st)
	o.Perception.Mode = perceive.Off
	o.MaxSteps = 7
	res, err := Run(context.Background(), noShots{d}, s, o)
	if err != nil {
		t.Fatal(err)
	}
	names := stepNames(t, st, res.Run.ID)
	if res.Status != store.StatusFailed || !strings.Contains(res.Reason, "step budget of 7 steps") || len(names) != 8 {
		t.Fatalf("run = %s %q with %d steps; want failed at the budget of 7, its 8th step the failure:\n%s", res.Status, res.Reason, len(names), strings.Join(names, "\n"))
	}
	if last := names[len(names)-1]; !strings.HasPrefix(last, "failed ") {
		t.Errorf("the last step is %q, want the failed one past the budget", last)
	}
}
