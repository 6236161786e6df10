package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/llm/llmtest"
)

// startPlayground runs apex playground --sim --no-open with opts filled in
// and returns its URL; the playground stops when the test ends.
func startPlayground(t *testing.T, opts *PlaygroundOptions) string {
	t.Helper()
	var out, errOut bytes.Buffer
	env := &Env{Out: &out, Err: &errOut, Log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(60*time.Second))
	opts.Device.Sim = true
	opts.NoOpen = true
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	if opts.Config == "" {
		opts.Config = emptyFile(t)
	}
	urls := make(chan string, 1)
	opts.Serving = func(url string) { urls <- url }
	done := make(chan error, 1)
	go func() { done <- playgroundRun(ctx, env, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("playground: %v", err)
		}
	})
	select {
	case url := <-urls:
		return url
	case err := <-done:
		done <- err
		t.Fatalf("playground ended: %v\n%s", err, errOut.String())
	}
	return ""
}

// TestPlaygroundModelSettings sets the model from the page's settings and
// checks it reaches a real (scripted) model server: the connectivity test
// and the next goal's planner call both go there.
func TestPlaygroundModelSettings(t *testing.T) {
	model := llmtest.New(t, func(r *llmtest.Request) llmtest.Reply { return llmtest.Text("pong") })
	url := startPlayground(t, &PlaygroundOptions{Port: 0})

	_, cfg := getJSON(t, "GET", url+"config", nil)
	if m := cfg["model"].(map[string]any); m["offline"] != true || m["source"] != "environment" {
		t.Fatalf("config at start = %v, want offline, from the environment", m)
	}
	if code, m := getJSON(t, "POST", url+"config/test", nil); code != 400 || !strings.Contains(m["error"].(string), "no model configured") {
		t.Errorf("test with no model: %d %v", code, m)
	}
	if code, m := getJSON(t, "POST", url+"config", map[string]string{"provider": "acme"}); code != 400 || !strings.Contains(m["error"].(string), `provider "acme"`) {
		t.Errorf("unknown provider: %d %v, want 400 naming it", code, m)
	}

	settings := map[string]string{"provider": "openai", "baseUrl": model.BaseURL(), "model": llmtest.Model, "apiKey": llmtest.Key}
	if code, m := getJSON(t, "POST", url+"config", settings); code != 200 || m["changed"] != true || m["model"].(map[string]any)["offline"] != false {
		t.Fatalf("POST /config: %d %v", code, m)
	}
	code, m := getJSON(t, "POST", url+"config/test", nil)
	results, _ := m["results"].([]any)
	if code != 200 || m["ok"] != true || len(results) == 0 || results[0].(map[string]any)["answer"] != "pong" {
		t.Fatalf("config test against the scripted model: %d %v", code, m)
	}
	asked := len(model.Requests())

	// The next goal plans with the model (its answer is no plan, so the
	// task fails; what matters is where the planner asked).
	_, v := getJSON(t, "POST", url+"execute", map[string]any{"goal": "open the settings and look around"})
	if v["status"] == "running" || len(model.Requests()) <= asked {
		t.Errorf("goal after the settings: %v, and the model saw %d requests (had %d)", v["status"], len(model.Requests()), asked)
	}

	// A wrong key is not known until the model is asked.
	settings["apiKey"] = "wrong"
	getJSON(t, "POST", url+"config", settings)
	if _, m := getJSON(t, "POST", url+"config/test", nil); m["ok"] != false || !strings.Contains(m["results"].([]any)[0].(map[string]any)["error"].(string), "401") {
		t.Errorf("test with a wrong key: %v, want a 401 failure", m)
	}
}

// TestPlaygroundAllowShell: with --allow-shell a runAdbShell step sent to
// /execute runs on the phone.
func TestPlaygroundAllowShell(t *testing.T) {
	url := startPlayground(t, &PlaygroundOptions{Port: 0, AllowShell: true})
	code, v := getJSON(t, "POST", url+"execute", map[string]any{"step": map[string]string{"runAdbShell": "getprop ro.product.model"}})
	if code != 200 || v["status"] != "done" {
		t.Fatalf("runAdbShell with --allow-shell: %d %v %v", code, v["status"], v["error"])
	}
	steps := v["dump"].(map[string]any)["steps"].([]any)
	if out, _ := json.Marshal(steps); len(steps) != 1 || !strings.Contains(string(out), `"output":"Apex Sim`) {
		t.Errorf("the step's record %s, want the phone's model in its output", out)
	}
}

// TestPlaygroundReadsPixels: apex playground's manual actions read the
// screen through its shared OCR engine, so a button drawn only in pixels
// (the Arcade's Start game) is tapped by its text.
func TestPlaygroundReadsPixels(t *testing.T) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		t.Skip("tesseract is not installed (make deps-apt installs it)")
	}
	url := startPlayground(t, &PlaygroundOptions{Port: 0, Device: DeviceFlags{Apps: []string{"../examples/apps/arcade.yaml"}}})
	for _, step := range []map[string]any{
		{"action": "Launch", "params": map[string]string{"app": "com.apex.arcade"}},
		{"action": "Tap", "params": map[string]any{"locate": "Play"}},
		{"action": "Tap", "params": map[string]any{"locate": "Start game"}},
	} {
		if code, m := getJSON(t, "POST", url+"interact", step); code != 200 {
			t.Fatalf("interact %v: %d %v", step, code, m)
		}
	}
	if code, m := getJSON(t, "POST", url+"execute", map[string]any{"step": map[string]any{"assert": map[string]string{"exists": "Level one"}}}); code != 200 || m["status"] != "done" {
		t.Errorf("after tapping Start game: %d %v %v", code, m["status"], m["error"])
	}
}
