package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/device/ios"
	"github.com/apexagent/apex/script"
	"github.com/apexagent/apex/sim/lab"
)

// Every step kind of Midscene's YAML, in its own forms, parses; on the
// simulated phone with no model each one passes or fails with its own
// reason, and the rest of the file still runs (continueOnError).
func TestMidsceneStepsOnSim(t *testing.T) {
	space := action.ForPlatform(device.Android)
	s, err := script.LoadFile(filepath.Join("testdata", "midscene", "every-step.yaml"), &script.Options{
		LookupEnv: func(string) (string, bool) { return "", false },
		Action: func(name string, params json.RawMessage) (bool, error) {
			a, ok := space.Lookup(name)
			if !ok || params == nil {
				return ok, nil
			}
			_, err := a.Decode(params)
			return true, err
		},
	})
	if err != nil {
		t.Fatalf("a Midscene script does not parse: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Seed 2 starts the Shop without its timed sale popup, which would
	// cover what the steps look for on a busy machine.
	d := seedTwoPhone(ctx, t)
	opts := ruleOptions(t)
	opts.FindTimeout, opts.Space = 2*time.Second, space
	opts.Output = filepath.Join(t.TempDir(), "results.json")
	res, err := Run(ctx, d, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	// "" passes; otherwise the reason the task fails with.
	want := map[string]string{
		"Launch scalar": "", "aiAct": "", "ai": "", "aiAction": "", "aiTap": "", "aiDoubleClick": "", "aiLongPress": "",
		"aiHover": "no hover", "aiRightClick": "no hover, right click", "aiScroll": "", "aiKeyboardPress": "",
		"aiInput": "", "aiClearInput": "", "aiDragAndDrop": "", "aiPinch": "",
		"aiAssert": "", "aiWaitFor": "", "aiQuery": "needs a model", "aiBoolean": "needs a model", "aiNumber": "needs a model",
		"aiString": "needs a model", "aiAsk": "needs a model", "aiLocate": "", "sleep": "",
		"javascript": "page JavaScript", "runAdbShell": "", "RunAdbShell": "", "runWdaRequest": "needs an iPhone",
		"logScreenshot": "", "recordToReport": "", "Terminate scalar": "",
	}
	if len(res.Tasks) != len(want) {
		t.Errorf("%d tasks ran, want %d", len(res.Tasks), len(want))
	}
	for _, tr := range res.Tasks {
		w, ok := want[tr.Name]
		switch {
		case !ok:
			t.Errorf("task %q is not listed here", tr.Name)
		case w == "" && tr.Status != "passed":
			t.Errorf("%s: %s (%s), want passed", tr.Name, tr.Status, tr.Reason)
		case w != "" && (tr.Status != "failed" || !strings.Contains(tr.Reason, w)):
			t.Errorf("%s: %s (%s), want failed with %q", tr.Name, tr.Status, tr.Reason, w)
		}
	}
	data, err := os.ReadFile(opts.Output)
	if err != nil {
		t.Fatalf("the results JSON: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil || out["model"] == nil || out["network"] == nil {
		t.Errorf("results JSON %s (%v), want the named runAdbShell and aiLocate results", data, err)
	}
}

// launch takes a package, a component, an app's name on the home screen
// and a URL (which needs an app that views URLs: the simulated phone's
// browser).
func TestLaunchForms(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := seedTwoPhone(ctx, t)
	out, err := d.Shell(ctx, "cmd package resolve-activity --brief com.apex.shop")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(out)
	component := lines[len(lines)-1] // com.apex.shop/.Something
	tests := []struct {
		name, step, foreground string
	}{
		{"package", "launch: com.android.settings", "com.android.settings"},
		{"label", "launch: Shop", "com.apex.shop"},
		{"label after another app", "Launch: Settings", "com.android.settings"},
		{"component", "launch: " + component, "com.apex.shop"},
		{"url", "launch: https://example.com/hello", "com.android.browser"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(ctx, d, load(t, "tasks:\n  - name: t\n    flow:\n      - "+tt.step+"\n"), fastOptions(openStore(t)))
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != "passed" {
				t.Fatalf("%s: %s (%s)", tt.step, res.Status, res.Reason)
			}
			fg, err := d.ForegroundApp(ctx)
			if tt.foreground != "" && (err != nil || fg != tt.foreground) {
				t.Errorf("%s: foreground %q (%v), want %q", tt.step, fg, err, tt.foreground)
			}
		})
	}
}

// runWdaRequest sends its request to the iPhone's WebDriverAgent (here
// the simulated one) and records the answer.
func TestRunWdaRequestOnSimIPhone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := lab.Start(context.WithoutCancel(ctx), lab.Options{IOS: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	d, err := ios.Open(ctx, l.Devices()[0].URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	src := "tasks:\n  - name: t\n    flow:\n      - runWdaRequest:\n          method: GET\n          endpoint: /status\n"
	st := openStore(t)
	res, err := Run(ctx, d, load(t, src), fastOptions(st))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "passed" {
		t.Fatalf("runWdaRequest GET /status: %s (%s)", res.Status, res.Reason)
	}
	steps, err := st.Steps(ctx, res.Run.ID)
	if err != nil || len(steps) != 1 || !strings.Contains(string(steps[0].Result), `ready`) {
		t.Errorf("the step recorded %+v (%v), want WDA's status answer", steps, err)
	}
}

// aiPinch zooms the simulated Browser's page on both phones: Midscene's
// step runs the Pinch action through each platform's driver.
func TestMidscenePinchOnSim(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := lab.Start(context.WithoutCancel(ctx), lab.Options{Android: 1, IOS: 1, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	src := `tasks:
  - name: zoom
    flow:
      - launch: https://example.com/map
      - aiPinch: the page
        direction: out
      - aiAssert: '"Page, zoom 200%" exists'
      - aiPinch:
          locate: the page
          direction: in
          distance: 1000
      - aiAssert: '"Page, zoom 100%" exists'
`
	for _, dev := range l.Devices() {
		t.Run(dev.Platform, func(t *testing.T) {
			var d device.Driver
			var err error
			if dev.Platform == "ios" {
				d, err = ios.Open(ctx, dev.URL, nil)
			} else {
				d, err = android.OpenDirect(ctx, dev.Addr, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			res, err := Run(ctx, d, load(t, src), ruleOptions(t))
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != "passed" {
				t.Fatalf("%s (%s)", res.Status, res.Reason)
			}
		})
	}
}

// ruleOptions are fastOptions with the agent that needs no model: ai*
// steps in the controlled language run by rule.
func ruleOptions(t *testing.T) *Options {
	t.Helper()
	rt, err := agent.New(agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	opts := fastOptions(openStore(t))
	opts.AI = rt
	return opts
}

// seedTwoPhone starts a simulated Android phone with seed 2 (the Shop opens
// without its timed sale popup, which would cover what steps look for on a
// busy machine) and opens it through the Android driver over adb.
func seedTwoPhone(ctx context.Context, t *testing.T) *android.Driver {
	t.Helper()
	l, err := lab.Start(context.WithoutCancel(ctx), lab.Options{Android: 1, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	d, err := android.OpenDirect(ctx, l.Devices()[0].Addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}
