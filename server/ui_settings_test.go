package server_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/server"
	"github.com/chromedp/chromedp"
)

// claimed is a runtime that says it has a model when settings name one
// (the dialog's test needs no real model: the cli tests reach one).
type claimed struct {
	agent.AI
	model bool
}

func (c claimed) Offline() bool { return !c.model }

// previewHash sums a sample of the preview's pixels, to tell screens apart.
const previewHash = `(() => {
  const img = window.apexPreview.surface();
  if (!window.apexPreview.shown()) return -1;
  const c = document.createElement("canvas");
  c.width = 54; c.height = 120;
  const g = c.getContext("2d");
  g.drawImage(img, 0, 0, c.width, c.height);
  const d = g.getImageData(0, 0, c.width, c.height).data;
  let h = 0;
  for (let i = 0; i < d.length; i += 4) h = (h * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) % 1000000007;
  return h;
})()`

// TestSettingsAndStepsInBrowser: the model settings dialog saves, tests and
// resets the settings through the API; a script step typed in the
// conversation runs; the preview keeps showing the screen after the
// session was recreated by a settings change.
func TestSettingsAndStepsInBrowser(t *testing.T) {
	var mu sync.Mutex
	var built []server.ModelSettings
	p := startPhone(t, &phoneOptions{opts: server.Options{
		NewAgent: func(m server.ModelSettings, on func(event.Event)) (agent.AI, error) {
			mu.Lock()
			built = append(built, m)
			mu.Unlock()
			rt, err := agent.New(agent.Config{OnEvent: on})
			return claimed{rt, m.Model != ""}, err
		},
		TestModel: func(ctx context.Context, m server.ModelSettings) ([]server.ModelCheck, error) {
			return []server.ModelCheck{{Roles: []string{"executor", "planner"}, Model: m.Model, OK: m.APIKey == "k1", Answer: "pong", LatencyMS: 12, Error: "401 Unauthorized"}}, nil
		},
	}})
	ctx := browserTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(p.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the session to be ready", `document.body.dataset.session === "ready"`)
	waitFor(t, ctx, "the model in the header", `document.getElementById("model-open").textContent.includes("offline rule planner")`)

	// Save a model and a key.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#model-open")),
		chromedp.WaitVisible(chromedp.CSS("#model-dialog")),
		chromedp.SendKeys(chromedp.CSS("#m-model"), "m1"),
		chromedp.SendKeys(chromedp.CSS("#m-apiKey"), "k1"),
		chromedp.Click(chromedp.CSS("#m-save")),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the settings to be saved", `document.getElementById("model-result").textContent.startsWith("Saved")`)
	m := p.mustDo(200, "GET", "/config", nil)["model"].(map[string]any)
	if m["model"] != "m1" || m["apiKeySet"] != true || m["source"] != "playground" {
		t.Errorf("config after Save = %v", m)
	}
	waitFor(t, ctx, "the header to name the model", `document.getElementById("model-open").textContent === "Model: m1"`)
	if v := eval[string](t, ctx, `document.getElementById("m-apiKey").value`); v != "" {
		t.Errorf("the key field still holds %q after Save", v)
	}

	// Test: the key in force (kept, not sent again) passes.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#m-test"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the test's answer", `document.querySelector("#model-result .checks li") !== null`)
	if got := eval[string](t, ctx, `document.getElementById("model-result").innerText`); !strings.Contains(got, "✓ executor, planner: m1") || !strings.Contains(got, "pong") {
		t.Errorf("test result %q", got)
	}
	// A wrong key typed in the dialog is tested without being saved.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#m-apiKey"), "nope"), chromedp.Click(chromedp.CSS("#m-test"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the failed test", `document.querySelector("#model-result li.bad") !== null`)
	if got := eval[string](t, ctx, `document.getElementById("model-result").innerText`); !strings.Contains(got, "401") {
		t.Errorf("failed test shows %q", got)
	}

	// The preview flows after the settings change recreated the session.
	waitFor(t, ctx, "the preview to show the screen", previewHash+" >= 0")
	before := eval[int](t, ctx, previewHash)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#m-reset"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the environment's settings", `document.getElementById("model-open").textContent.includes("offline rule planner")`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#m-close"))); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(built) != 3 || built[1].Model != "m1" || built[1].APIKey != "k1" || built[2] != (server.ModelSettings{}) {
		t.Errorf("runtimes built for %+v, want the environment's, m1 with its key, the environment's", built)
	}
	mu.Unlock()

	// A script step runs from the conversation, and the preview shows
	// the screen it leads to.
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS("#mode"), "step"),
		chromedp.SendKeys(chromedp.CSS("#goal"), "tap: Settings"),
		chromedp.Click(chromedp.CSS("#run")),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the step to end", `document.querySelector("#log .status") !== null`)
	if cls := eval[string](t, ctx, `document.querySelector("#log .status").className`); !strings.Contains(cls, "status-done") {
		t.Fatalf("the step ended %q:\n%s", cls, eval[string](t, ctx, `document.getElementById("log").innerText`))
	}
	waitForeground(t, p, "after the step", func(fg string) bool { return fg == "com.android.settings" })
	waitFor(t, ctx, "the preview to show the new screen", previewHash+` !== `+strconv.Itoa(before)+` && `+previewHash+` > 0`)
	if href := eval[string](t, ctx, `document.querySelector("#log .status a").pathname`); !strings.HasPrefix(href, "/runs/") {
		t.Errorf("the step's report link is %q, want the report itself", href)
	}
	// Reports lists the runs, newest first, linking to their reports.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#runs-open"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the runs list", `document.querySelectorAll("#runs-list li.run").length >= 1`)
	if first := eval[string](t, ctx, `document.querySelector("#runs-list li.run a").textContent`); first != "playground: tap: Settings" {
		t.Errorf("the newest run is listed as %q", first)
	}
	if href := eval[string](t, ctx, `document.querySelector("#runs-list li.run a").pathname`); !strings.HasPrefix(href, "/report/") {
		t.Errorf("the run links to %q", href)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#runs-close"))); err != nil {
		t.Fatal(err)
	}

	// What a step finds is shown by its name.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#goal"), `{"aiLocate": "Wi-Fi", "name": "wifi"}`), chromedp.Click(chromedp.CSS("#run"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the step's output", `document.querySelector("#log pre.outputs") !== null`)
	if out := eval[string](t, ctx, `document.querySelector("#log pre.outputs").textContent`); !strings.Contains(out, `"wifi"`) || !strings.Contains(out, `"center"`) {
		t.Errorf("the aiLocate output shows %q", out)
	}

	// A malformed step is refused before it reaches the server.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#goal"), `{"tap": `), chromedp.Click(chromedp.CSS("#run"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the JSON error", `Array.from(document.querySelectorAll("#log .msg.error")).some(m => m.textContent.includes("not valid JSON"))`)

	// Every connection drops (a proxy restarts, the laptop sleeps): the
	// preview and the event stream connect again by themselves, so a new
	// screen shows and a task started elsewhere is followed.
	waitFor(t, ctx, "the preview", previewHash+" >= 0")
	before = eval[int](t, ctx, previewHash)
	pushed := eval[int](t, ctx, `ui.pushed`) // session messages: each new event stream begins with one
	p.http.CloseClientConnections()
	http.DefaultClient.CloseIdleConnections() // the test's own, closed too
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Back"})
	waitForeground(t, p, "after Back", func(fg string) bool { return fg == "com.apex.launcher" })
	waitFor(t, ctx, "the preview to show the screen after the drop", previewHash+` !== `+strconv.Itoa(before)+` && `+previewHash+` > 0`)
	// The H.264 preview's WebSocket outlives the drop (a hijacked
	// connection), so its new screen says nothing of the event stream:
	// a task started before that reconnects would end unseen.
	waitFor(t, ctx, "the event stream to connect again", `ui.pushed > `+strconv.Itoa(pushed))
	ended := eval[int](t, ctx, `document.querySelectorAll("#log .status").length`)
	id := p.mustDo(202, "POST", "/execute", map[string]any{"goal": `tap "Notes"`, "async": true})["requestId"].(string)
	waitFor(t, ctx, "the page to follow the task started elsewhere", `document.body.innerText.includes("task `+id+`") && document.querySelectorAll("#log .status").length === `+strconv.Itoa(ended+1))
	const last = `Array.from(document.querySelectorAll("#log .status")).pop()`
	if cls := eval[string](t, ctx, last+`.className`); !strings.Contains(cls, "status-done") {
		t.Errorf("the followed task ended %q", cls)
	}
	report := eval[string](t, ctx, last+`.querySelector("a").href`)

	// The report opens in this tab and the back button returns to a
	// working page (its streams given back on the way out, taken again).
	if err := chromedp.Do(ctx, chromedp.Navigate(report)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the report", `document.body && document.body.innerText.includes("Notes")`)
	back := time.Now()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void]("history.back()")); err != nil {
		t.Fatal(err)
	}
	waitAcross(t, ctx, "a working page after going back", `document.body.dataset.session === "ready" && window.apexPreview.shown()`)

	t.Logf("back to a working page in %v", time.Since(back))
}
