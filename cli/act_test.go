package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/internal/recordtest"
	"github.com/apexagent/apex/store"
)

// actEnv is an Env whose stdout is returned; with json, stderr (the
// progress) goes elsewhere, else to the same buffer.
func actEnv(json bool) (*Env, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	env := &Env{Out: &out, Err: &out, Log: slog.New(slog.DiscardHandler), JSON: json}
	if json {
		env.Err = &errOut
	}
	return env, &out
}

func noEnv(string) string { return "" }

func TestActOnSim(t *testing.T) {
	env, out := actEnv(false)
	dir := t.TempDir()
	ctx := patience.Context(t, 60*time.Second)
	err := actRun(ctx, env, &ActOptions{Device: DeviceFlags{Sim: true}, Launch: "com.apex.login", Dir: dir, Config: "", Getenv: noEnv,
		Goal: `type "demo" into "Username", type "apex123" into "Password", tap "Sign in", then check "Welcome, demo!" exists`})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"plan (rules, 4 steps)", "  3. ok Tap(locate: \"Sign in\") → Login: Home", "DONE: 4/4 steps done", "recorded as run"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(ctx, 0)
	if err != nil || len(runs) != 1 || runs[0].Status != store.StatusPassed {
		t.Fatalf("runs %+v, %v", runs, err)
	}
}

func TestActJSONAndExitCodes(t *testing.T) {
	ctx := patience.Context(t, 60*time.Second)
	env, out := actEnv(true)
	err := actRun(ctx, env, &ActOptions{Device: DeviceFlags{Sim: true}, Dir: t.TempDir(), Getenv: noEnv,
		Goal: `点击“购物清单”，确认出现“共 4 项，已完成 1 项”`})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got struct {
		RunID  string       `json:"run_id"`
		Result agent.Result `json:"result"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Result.Status != agent.Done || len(got.Result.Steps) != 2 {
		t.Fatalf("%v: %s", err, out)
	}

	// A target that is not there fails with exit code 1 and says why.
	env, out = actEnv(false)
	err = actRun(ctx, env, &ActOptions{Device: DeviceFlags{Sim: true}, Dir: t.TempDir(), Getenv: noEnv, Goal: `tap "Airplane"`})
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Code != 1 || !strings.Contains(err.Error(), "Airplane") {
		t.Fatalf("err = %v\n%s", err, out)
	}

	// Plain words with no model: the rule planner says which sentence it
	// could not read, and that a model would.
	env, out = actEnv(false)
	err = actRun(ctx, env, &ActOptions{Device: DeviceFlags{Sim: true}, Dir: t.TempDir(), Getenv: noEnv, Goal: `tap "Shop", then buy some headphones`})
	if !errors.Is(err, agent.ErrNeedsModel) || !strings.Contains(err.Error(), `sentence 2 of 2: "buy some headphones"`) {
		t.Fatalf("err = %v\n%s", err, out)
	}
}

// TestActOCR: apex act taps a button drawn only in pixels with OCR, and
// cannot with --ocr off; a bad --ocr is refused before any phone starts.
func TestActOCR(t *testing.T) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		t.Skip("tesseract is not installed (make deps-apt installs it)")
	}
	goal := `tap "Play", tap "Start game", then check "Level one" exists`
	for _, tc := range []struct {
		ocr  string
		pass bool
	}{{"auto", true}, {"off", false}} {
		env, out := actEnv(false)
		ctx, cancel := context.WithTimeout(context.Background(), patience.Of(60*time.Second))
		err := actRun(ctx, env, &ActOptions{Device: DeviceFlags{Sim: true, Apps: []string{"../examples/apps/arcade.yaml"}}, Launch: "com.apex.arcade",
			Dir: t.TempDir(), Getenv: noEnv, Goal: goal, OCR: tc.ocr})
		cancel()
		if (err == nil) != tc.pass {
			t.Errorf("--ocr %s: %v, want passing %v\n%s", tc.ocr, err, tc.pass, out)
		}
	}
	env, _ := actEnv(false)
	if err := actRun(context.Background(), env, &ActOptions{Device: DeviceFlags{Sim: true}, Getenv: noEnv, Goal: goal, OCR: "sometimes"}); err == nil || !strings.Contains(err.Error(), "auto, always or off") {
		t.Errorf("--ocr sometimes: %v", err)
	}
}

// TestActRecordsEveryStep: a goal's steps leave the record every step
// leaves (screenshots, Scene, touched point) and a report marking them.
func TestActRecordsEveryStep(t *testing.T) {
	env, out := actEnv(false)
	dir := t.TempDir()
	ctx := patience.Context(t, 60*time.Second)
	err := actRun(ctx, env, &ActOptions{Device: DeviceFlags{Sim: true}, Launch: "com.android.settings", Dir: dir, Getenv: noEnv, OCR: "off",
		Goal: `tap "Network & internet", tap "Wi-Fi"`})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "report: ") {
		t.Errorf("apex act does not say where its report is:\n%s", out)
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(ctx, 0)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	recordtest.Steps(t, st, runs[0].ID, `Tap(locate: "Network & internet")`, `Tap(locate: "Wi-Fi")`)
}
