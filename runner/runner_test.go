package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/script"
	"github.com/apexagent/apex/store"
)

func load(t *testing.T, src string) *script.Script {
	t.Helper()
	s, err := script.Load([]byte(src), "test.yaml", &script.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func fastOptions(st *store.Store) *Options {
	return &Options{Store: st, Perception: perceive.Options{Timing: perceive.Timing{SettleInterval: time.Millisecond, PollInterval: 5 * time.Millisecond}},
		FindTimeout: 100 * time.Millisecond, AssertTimeout: 50 * time.Millisecond, WaitTimeout: 200 * time.Millisecond}
}

const shopScript = `
android:
  launch: com.apex.shop
tasks:
  - name: search
    flow:
      - tap: {id: com.apex.shop:id/promo_close}
        optional: true
      - input: the search box
        value: shoes
      - aiTap: the "Search" button
      - waitFor: Running shoes
  - name: buy
    flow:
      - tap: {text: Add to cart, index: 1}
      - assert:
          textEquals: Cart (1)
          element: {id: cart_count}
      - assert:
          numberGreater: 0
          element: {id: com.apex.shop:id/cart_count}
      - aiLocate: Checkout
        name: checkoutButton
      - tap: Checkout
      - assert: {exists: Order placed}
      - assert: {notExists: Checkout}
`

func TestRunRecordsEveryStep(t *testing.T) {
	for _, popup := range []bool{false, true} {
		t.Run(map[bool]string{false: "no popup", true: "popup"}[popup], func(t *testing.T) {
			st := openStore(t)
			dev := newFakeShop()
			dev.popup = popup
			dev.animate = 3
			var progress []Progress
			opts := fastOptions(st)
			opts.OnStep = func(p Progress) { progress = append(progress, p) }
			res, err := Run(context.Background(), dev, load(t, shopScript), opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != store.StatusPassed || res.Run.Status != store.StatusPassed {
				t.Fatalf("status = %s (%s), record %s", res.Status, res.Reason, res.Run.Status)
			}
			wantSkipped := map[bool]int{false: 1, true: 0}[popup]
			if res.Steps != 12 || res.Skipped != wantSkipped || res.Failed != 0 {
				t.Fatalf("steps %d skipped %d failed %d", res.Steps, res.Skipped, res.Failed)
			}
			if len(progress) != 12 || progress[11].Step != 12 || progress[11].Steps != 12 {
				t.Fatalf("progress = %+v", progress)
			}
			steps, err := st.Steps(context.Background(), res.Run.ID)
			if err != nil || len(steps) != 12 {
				t.Fatalf("recorded steps = %d, %v", len(steps), err)
			}
			for _, s := range steps {
				if s.BeforePath == "" || s.AfterPath == "" || s.ScenePath == "" {
					t.Errorf("step %d %s lacks files: %+v", s.Index, s.Name, s)
				}
				for _, p := range []string{s.BeforePath, s.AfterPath, s.ScenePath} {
					if _, err := os.Stat(filepath.Join(res.Run.Dir, p)); p != "" && err != nil {
						t.Errorf("step %d: %v", s.Index, err)
					}
				}
				if s.DeviceTime < 0 || s.DeviceTime > s.Duration || (s.Action != "" && s.DeviceTime == 0) {
					t.Errorf("step %d %s: device time %v of %v", s.Index, s.Name, s.DeviceTime, s.Duration)
				}
			}
			tap := steps[3] // aiTap: the "Search" button
			if tap.Action != "Tap" || tap.Point == nil || tap.Point.X != 970 || tap.Point.Y != 150 {
				t.Errorf("aiTap record = %+v", tap)
			}
			if !strings.Contains(string(steps[2].Params), `"value":"shoes"`) {
				t.Errorf("input params = %s", steps[2].Params)
			}
			if dev.cart != 1 || dev.screen != "done" {
				t.Errorf("device state: cart %d screen %s", dev.cart, dev.screen)
			}
			if res.Outputs["checkoutButton"] == nil {
				t.Errorf("aiLocate output missing: %v", res.Outputs)
			}
			if _, err := os.Stat(filepath.Join(res.Run.Dir, "output.json")); err != nil {
				t.Error(err)
			}
			// The after-scene of a tap was taken once the Loading row stopped changing.
			data, _ := os.ReadFile(filepath.Join(res.Run.Dir, steps[3].ScenePath))
			if strings.Contains(string(data), "Loading 3") {
				t.Errorf("the step saw an unsettled screen")
			}
		})
	}
}

func TestFailedStepStopsTheRun(t *testing.T) {
	st := openStore(t)
	src := `
tasks:
  - name: may fail
    continueOnError: true
    flow:
      - tap: Nothing here
      - tap: Search
  - name: search
    flow:
      - input: {id: com.apex.shop:id/search}
        value: hat
      - tap: Search
      - tap: Add to cart
      - tap: Checkout
  - name: never runs
    flow:
      - back
`
	res, err := Run(context.Background(), newFakeShop(), load(t, src), fastOptions(st))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != store.StatusFailed {
		t.Fatalf("status = %s", res.Status)
	}
	for _, want := range []string{`task "search" failed`, "step 3 (tap: Add to cart) at test.yaml:13:9", "matches 2 elements", "e3", "[700,300][1040,400]"} {
		if !strings.Contains(res.Reason, want) {
			t.Errorf("reason %q lacks %q", res.Reason, want)
		}
	}
	got := []string{}
	for _, tr := range res.Tasks {
		got = append(got, tr.Name+"="+tr.Status)
	}
	if strings.Join(got, ",") != "may fail=failed,search=failed,never runs=skipped" {
		t.Errorf("tasks = %v", got)
	}
	steps, _ := st.Steps(context.Background(), res.Run.ID)
	var statuses []string
	for _, s := range steps {
		statuses = append(statuses, s.Status)
	}
	if strings.Join(statuses, ",") != "failed,skipped,passed,passed,failed,skipped,skipped" {
		t.Errorf("step statuses = %v", statuses)
	}
	if !strings.Contains(steps[0].Error, "no element matches") || !strings.Contains(steps[0].Error, `"Search"`) {
		t.Errorf("not-found error = %q", steps[0].Error)
	}
}

func TestModelStepsFailClearly(t *testing.T) {
	cases := []struct{ name, step, want string }{
		{"aiAct", "- ai: buy the cheapest shoes", "needs a model"},
		{"aiAssert", "- aiAssert: the cart is empty", "needs a model"},
		{"aiQuery", "- aiQuery: the prices\n        name: prices", "needs a model"},
		{"aiTap by description", "- aiTap: the magnifier icon near the top", "needs a model"},
		{"hover", "- aiHover: Search", "no hover"},
		{"adb shell on a driver without shell", "- runAdbShell: ls", "runAdbShell needs an Android device"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := openStore(t)
			res, err := Run(context.Background(), newFakeShop(), load(t, "tasks:\n  - name: t\n    flow:\n      "+c.step+"\n"), fastOptions(st))
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != store.StatusFailed || !strings.Contains(res.Reason, c.want) {
				t.Fatalf("status %s reason %q; want failed with %q", res.Status, res.Reason, c.want)
			}
			if strings.Contains(c.want, "model") && !strings.Contains(res.Reason, "APEX_MODEL_") {
				t.Errorf("reason %q does not say how to configure a model", res.Reason)
			}
		})
	}
}

func TestDeviceLostMidRunLeavesACompleteRecord(t *testing.T) {
	st := openStore(t)
	dev := newFakeShop()
	dev.offlineAfter = 12
	res, err := Run(context.Background(), dev, load(t, shopScript), fastOptions(st))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != store.StatusError || res.Run.Status != store.StatusError {
		t.Fatalf("status = %s / %s", res.Status, res.Run.Status)
	}
	if !strings.Contains(res.Reason, "device lost during task") || !strings.Contains(res.Reason, "test.yaml:") || !strings.Contains(res.Reason, "device offline") {
		t.Errorf("reason = %q", res.Reason)
	}
	steps, _ := st.Steps(context.Background(), res.Run.ID)
	if len(steps) != 12 {
		t.Fatalf("recorded %d steps, want all 12", len(steps))
	}
	failed := 0
	for _, s := range steps {
		if s.Status == store.StepFailed {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("failed steps = %d, want 1", failed)
	}
	if res.Run.Ended.IsZero() {
		t.Error("run not finished")
	}
}

func TestCancelFinishesTheRecord(t *testing.T) {
	st := openStore(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	opts := fastOptions(st)
	opts.OnStep = func(p Progress) {
		if p.Step == 1 {
			cancel(errors.New("interrupted"))
		}
	}
	src := "tasks:\n  - name: t\n    flow:\n      - tap: Search\n      - sleep: 60000\n      - back\n"
	done := make(chan *Result)
	go func() {
		res, err := Run(ctx, newFakeShop(), load(t, src), opts)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case res := <-done:
		if res.Status != store.StatusCanceled || !strings.Contains(res.Reason, "interrupted") {
			t.Fatalf("status %s reason %q", res.Status, res.Reason)
		}
		got, _ := st.Run(context.Background(), res.Run.ID)
		if got.Status != store.StatusCanceled || got.Ended.IsZero() {
			t.Fatalf("record = %+v", got)
		}
		steps, _ := st.Steps(context.Background(), res.Run.ID)
		if len(steps) != 3 {
			t.Fatalf("recorded %d steps, want 3", len(steps))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("cancel did not stop the sleep step")
	}
}
