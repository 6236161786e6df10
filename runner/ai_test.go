package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/sim/lab"
	"github.com/apexagent/apex/store"
)

// noShots drives the phone for real but answers screenshots with a 1×1
// image: the AI runtime reads no pixels, and rendering each new screen
// costs seconds under the race detector.
type noShots struct{ *android.Driver }

var onePixel = func() []byte {
	var b bytes.Buffer
	_ = png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 1)))
	return b.Bytes()
}()

func (noShots) Screenshot(context.Context) ([]byte, error) { return onePixel, nil }

// simPhone starts a simulated phone and drives it through adbd and the
// Android driver, the way `apex run --sim` does (screenshots aside).
func simPhone(t *testing.T) (*lab.Device, noShots) {
	t.Helper()
	dev, d := startPhone(t, lab.Options{Android: 1, Seed: 2})
	return dev, noShots{d}
}

const aiScript = `
android:
  launch: com.apex.login
tasks:
  - name: sign in by the rule planner
    flow:
      - aiAct: type "demo" into "Username", type "apex123" into "Password", then tap "Sign in"
      - aiAssert: check "Welcome, demo!" exists
      - aiWaitFor: '"Sign out" is shown'
        timeout: 2000
      - aiNumber: '"You have signed in"'
        name: logins
      - aiString: '"Welcome, demo!"'
        name: greeting
      - aiBoolean: '"Sign in" exists'
        name: onLogin
`

func TestAIStepsOffline(t *testing.T) {
	dev, d := simPhone(t)
	st := openStore(t)
	rt, err := agent.New(agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	opts := fastOptions(st)
	opts.AI = rt
	res, err := Run(context.Background(), d, load(t, aiScript), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != store.StatusPassed {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	want := map[string]any{"logins": 1.0, "greeting": "Welcome, demo!", "onLogin": false}
	for k, v := range want {
		if res.Outputs[k] != v {
			t.Errorf("output %s = %v, want %v", k, res.Outputs[k], v)
		}
	}
	s, _ := dev.Phone.State("com.apex.login")
	if s["logins"] != 1.0 && s["logins"] != 1 {
		t.Fatalf("the phone says logins = %v", s["logins"])
	}
	// The agent's events are in the run's store, under the run's ID.
	steps, err := st.Steps(context.Background(), res.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The steps the goal ran are recorded before the aiAct step itself,
	// which ends when they have.
	var out struct {
		TaskID string `json:"task_id"`
	}
	var act *store.Step
	for i := range steps {
		if steps[i].Action == "agent" {
			act = &steps[i]
			break
		}
		if steps[i].Index > 1 && (steps[i].BeforePath == "" || steps[i].Point == nil) {
			t.Errorf("the goal's step %d (%s) has no before screenshot or touch", steps[i].Index, steps[i].Name)
		}
	}
	if act == nil {
		t.Fatalf("no aiAct step among %d", len(steps))
	}
	if err := json.Unmarshal(act.Result, &out); err != nil || !strings.HasPrefix(out.TaskID, res.Run.ID+"/act-") {
		t.Fatalf("aiAct result %s: %v", act.Result, err)
	}
	evs, err := st.Events(context.Background(), out.TaskID)
	if err != nil || len(evs) == 0 || evs[len(evs)-1].ActionType != event.EvTaskFinished {
		t.Fatalf("events of %s: %d, %v", out.TaskID, len(evs), err)
	}
}

// Without a model, a goal outside the controlled language keeps the
// needs-a-model error, now naming the sentence the planner could not read.
func TestAIStepsNeedModel(t *testing.T) {
	_, d := simPhone(t)
	rt, _ := agent.New(agent.Config{})
	steps := []string{"aiAct: sign in as the demo user", "aiAssert: the user is signed in", "aiTap: the blue round thing"}
	src := "android:\n  launch: com.apex.login\ntasks:\n"
	for i, step := range steps {
		src += fmt.Sprintf("  - name: t%d\n    continueOnError: true\n    flow:\n      - %s\n", i, step)
	}
	opts := fastOptions(openStore(t))
	opts.AI = rt
	res, err := Run(context.Background(), d, load(t, src), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tasks) != len(steps) {
		t.Fatalf("%d tasks", len(res.Tasks))
	}
	for i, tr := range res.Tasks {
		if tr.Status != store.StepFailed || !strings.Contains(tr.Reason, "needs a model") {
			t.Fatalf("%s: status %s: %s", steps[i], tr.Status, tr.Reason)
		}
		if strings.Count(tr.Reason, "needs a model") != 1 || !strings.Contains(tr.Reason, "APEX_MODEL_NAME") {
			t.Errorf("%s: the reason says needs a model %d times, or not what to set: %s", steps[i], strings.Count(tr.Reason, "needs a model"), tr.Reason)
		}
		if i == 0 && !strings.Contains(tr.Reason, "sentence 1 of 1") {
			t.Fatalf("%s: the reason does not name the sentence: %s", steps[i], tr.Reason)
		}
	}
}

// Without a model, a targeted ai* step whose description no locator rule
// reads fails on its first look, not after the find timeout (an hour
// here: a step that waited would outlive the test's context), naming what
// to set; a target the rules do read still works.
func TestAITapNoModelFailsAtOnce(t *testing.T) {
	_, d := simPhone(t)
	rt, _ := agent.New(agent.Config{})
	src := "android:\n  launch: com.apex.login\ntasks:\n  - name: t\n    continueOnError: true\n    flow:\n      - aiTap: the blue round thing\n" +
		"  - name: u\n    flow:\n      - aiTap: Remember me\n"
	opts := fastOptions(openStore(t))
	opts.AI, opts.FindTimeout = rt, time.Hour
	opts.Perception.Mode = perceive.Off
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := Run(ctx, d, load(t, src), opts)
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the run outlived its context: the step waited for its target")
	}
	if tr := res.Tasks[0]; tr.Status != store.StepFailed || !strings.Contains(tr.Reason, "needs a model") || !strings.Contains(tr.Reason, "APEX_MODEL_NAME") {
		t.Fatalf("status %s: %s", tr.Status, tr.Reason)
	}
	if tr := res.Tasks[1]; tr.Status != store.StepPassed {
		t.Fatalf("aiTap of a visible text: status %s: %s", tr.Status, tr.Reason)
	}
}

// tapModel is a one-trick executor model: it taps the screen line that
// mentions the cart.
type tapModel struct{ calls int }

var lineID = regexp.MustCompile(`(?m)^(e\d+) .*cart_button`)

func (m *tapModel) Complete(_ context.Context, req *llm.Request) (*llm.Response, error) {
	m.calls++
	user := req.Messages[len(req.Messages)-1].Text
	id := lineID.FindStringSubmatch(user)
	if len(req.Tools) == 0 || id == nil {
		return nil, errors.New("tapModel: no tool or no cart on screen")
	}
	return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "1", Name: req.Tools[0].Name, Args: json.RawMessage(`{"locate":{"id":"` + id[1] + `"}}`)}}}, nil
}

type oneModel struct{ c llm.Client }

func (m oneModel) Client(string) (llm.Client, error) { return m.c, nil }

// aiTap with a target no rule finds goes to the runtime's executor model.
func TestAITapByModel(t *testing.T) {
	dev, d := simPhone(t)
	m := &tapModel{}
	rt, _ := agent.New(agent.Config{Models: oneModel{m}})
	opts := fastOptions(openStore(t))
	opts.AI = rt
	res, err := Run(context.Background(), d, load(t, "android:\n  launch: com.apex.shop\ntasks:\n  - name: t\n    flow:\n      - aiTap: the shopping basket\n"), opts)
	if err != nil {
		t.Fatal(err)
	}
	// One call, or one more when the screen changed between the model's
	// answer and the tap (the engine never acts on a screen the answer
	// was not about; on a busy machine a banner may move meanwhile).
	if res.Status != store.StatusPassed || m.calls < 1 || m.calls > 2 {
		t.Fatalf("status %s (%s), %d model calls", res.Status, res.Reason, m.calls)
	}
	if _, act := dev.Phone.Foreground(); act != ".CartActivity" {
		t.Fatalf("the phone shows %s", act)
	}
}
