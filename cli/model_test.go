package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apexagent/apex/llm/llmtest"
)

func modelEnv(json bool) (*Env, *bytes.Buffer) {
	var out bytes.Buffer
	return &Env{Out: &out, Err: &out, Log: slog.New(slog.DiscardHandler), JSON: json}, &out
}

func modelGetenv(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestModelTestNothingConfigured(t *testing.T) {
	env, _ := modelEnv(false)
	err := modelTestRun(context.Background(), env, &ModelTestOptions{Config: emptyFile(t), Getenv: modelGetenv(nil)})
	if err == nil || !strings.Contains(err.Error(), "set APEX_MODEL_NAME") || !strings.Contains(err.Error(), "MIDSCENE_MODEL_NAME") {
		t.Fatalf("err = %v; want one naming the variables to set", err)
	}
}

func TestModelTestPingsEachEndpointOnce(t *testing.T) {
	srv := llmtest.New(t, func(r *llmtest.Request) llmtest.Reply {
		if r.LastUser() != "ping" || r.MaxTokens != 16 {
			return llmtest.Fail(400, "not a ping")
		}
		return llmtest.Text("pong")
	})
	file := filepath.Join(t.TempDir(), "apex.yaml")
	yaml := "model:\n  roles:\n    planner:\n      model: big-model\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := modelGetenv(map[string]string{"APEX_MODEL_BASE_URL": srv.BaseURL(), "APEX_MODEL_NAME": "small-model", "APEX_MODEL_API_KEY": llmtest.Key})

	env, out := modelEnv(true)
	if err := modelTestRun(context.Background(), env, &ModelTestOptions{Config: file, Getenv: vars}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var results []ModelTestResult
	if err := json.Unmarshal(out.Bytes(), &results); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(results) != 2 || len(srv.Requests()) != 2 {
		t.Fatalf("%d results, %d requests; want 2 endpoints pinged once each:\n%s", len(results), len(srv.Requests()), out)
	}
	models := map[string]ModelTestResult{}
	for _, r := range results {
		models[r.Model] = r
		if !r.OK || r.Answer != "pong" || r.PromptTokens == 0 || r.CompletionTokens == 0 {
			t.Errorf("result %+v", r)
		}
	}
	if got := models["big-model"].Roles; len(got) != 1 || got[0] != "planner" {
		t.Errorf("big-model roles = %v, want [planner]", got)
	}
	if got := strings.Join(models["small-model"].Roles, ","); got != "executor,observer,recovery,validator" {
		t.Errorf("small-model roles = %v, want every other role with a model", got)
	}
	if u := models["small-model"].Uses; len(u) != 4 || u[1] != (RoleUse{Role: "observer", Tier: "vision", Model: "small-model"}) {
		t.Errorf("small-model uses = %+v", u)
	}

	env, out = modelEnv(false)
	if err := modelTestRun(context.Background(), env, &ModelTestOptions{Config: file, Roles: []string{"executor"}, Getenv: vars}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ROLES", "executor", "small-model", srv.BaseURL(), "ms", `ok: "pong"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestModelTestFailure(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script(llmtest.Text("pong")))
	env, out := modelEnv(false)
	err := modelTestRun(context.Background(), env, &ModelTestOptions{Getenv: modelGetenv(map[string]string{
		"APEX_MODEL_BASE_URL": srv.BaseURL(), "APEX_MODEL_NAME": "m", "APEX_MODEL_API_KEY": "wrong",
	})})
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Code != 1 {
		t.Fatalf("err = %v; want exit 1", err)
	}
	if !strings.Contains(out.String(), "FAILED") || !strings.Contains(out.String(), "APEX_MODEL_API_KEY") {
		t.Errorf("table does not say what failed and what to check:\n%s", out)
	}
}

func TestModelTestCommand(t *testing.T) {
	env, _ := modelEnv(false)
	cmd := newCmdModel(env)
	cmd.SetArgs([]string{"test", "--config", filepath.Join(t.TempDir(), "nope.yaml")})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Fatalf("err = %v; want one naming the missing --config file", err)
	}
}

func TestModelTestImage(t *testing.T) {
	srv := llmtest.New(t, func(r *llmtest.Request) llmtest.Reply {
		if r.Images() != 1 || !strings.Contains(r.LastUser(), "colour") {
			return llmtest.Fail(400, "no image")
		}
		img, err := png.Decode(bytes.NewReader(r.Messages[len(r.Messages)-1].Images[0]))
		if err != nil {
			return llmtest.Fail(400, err.Error())
		}
		if red, _, _, _ := img.At(5, 5).RGBA(); red>>8 > 200 {
			return llmtest.Text("Red")
		}
		return llmtest.Text("unsure")
	})
	env, out := modelEnv(false)
	err := modelTestRun(context.Background(), env, &ModelTestOptions{Image: true, Getenv: modelGetenv(map[string]string{
		"APEX_MODEL_BASE_URL": srv.BaseURL(), "APEX_MODEL_NAME": "qwen-vl-max", "APEX_MODEL_API_KEY": llmtest.Key,
	})})
	if err != nil || !strings.Contains(out.String(), `ok: "Red"`) {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestModelTestTiers: the first table says each role's tier, model and
// whether it is sent screenshots; rules roles are listed, not pinged.
func TestModelTestTiers(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script(llmtest.Text("pong")))
	file := filepath.Join(t.TempDir(), "apex.yaml")
	yaml := `model:
  tiers:
    vision: {name: qwen-vl-max}
    strong: {name: deepseek-chat}
  roles:
    executor: {tier: rules}
    observer: {name: local-vlm, vision: true}
`
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := modelGetenv(map[string]string{"APEX_MODEL_BASE_URL": srv.BaseURL(), "APEX_MODEL_NAME": "small-model", "APEX_MODEL_API_KEY": llmtest.Key})
	env, out := modelEnv(false)
	if err := modelTestRun(context.Background(), env, &ModelTestOptions{Config: file, Getenv: vars}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	rows := map[string]string{}
	roleTable, _, _ := strings.Cut(out.String(), "\n\n")
	for _, l := range strings.Split(roleTable, "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			rows[f[0]] = strings.Join(f[1:], " ")
		}
	}
	for role, want := range map[string]string{
		"planner":      "strong deepseek-chat no",
		"recovery":     "strong deepseek-chat no",
		"validator":    "vision qwen-vl-max yes",
		"observer":     "vision local-vlm yes",
		"executor":     "rules none: rules -",
		"tracer":       "rules none: rules -",
		"reporter":     "rules none: rules -",
		"orchestrator": "rules none: rules -",
	} {
		if rows[role] != want {
			t.Errorf("%s: %q, want %q\n%s", role, rows[role], want, out)
		}
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d pings, want one for each of the 3 models in use\n%s", n, out)
	}
}
