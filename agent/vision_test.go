package agent_test

import (
	"bytes"
	"fmt"
	"image/jpeg"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/internal/scenetest"
	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/llm/llmtest"
)

// lookingModel is a multimodal model for the test: the validator and the
// observer say what picture they got, so the test sees what reached the
// model through either wire format.
func lookingModel(r *llmtest.Request) llmtest.Reply {
	seen := "no picture"
	for _, m := range r.Messages {
		for _, img := range m.Images {
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(img))
			if err != nil {
				return llmtest.Fail(400, "the picture is not a JPEG: "+err.Error())
			}
			seen = fmt.Sprintf("picture %dx%d", cfg.Width, cfg.Height)
		}
	}
	if strings.Contains(r.System(), "the validator") {
		return llmtest.Text(`{"pass":true,"confidence":0.95,"evidence":"` + seen + `"}`)
	}
	return llmtest.Text(`{"answer":"` + seen + `"}`)
}

// TestVisionRoles: a validator or observer whose model reads images gets
// the screenshot next to the Scene — downscaled to at most 1024 pixels,
// as JPEG, cropped to the region an assertion names — in OpenAI's and
// Anthropic's wire formats, and its tokens are counted in the model call;
// a text-only model gets the Scene alone, as before.
func TestVisionRoles(t *testing.T) {
	p := startPhone(t, noPopupSeed)
	p.launch(t, shop)
	ctx := ctxT(t, 90*time.Second)
	yes := true
	type ask struct {
		name, goal string
		query      bool
		ratio      float64 // width/height of the picture
	}
	const screen = 1080.0 / 2400
	var cart float64 // the shape of the Shop's cart button
	for _, e := range scenetest.SimScene(t, shop).Elements {
		if e.Text == "Cart (0)" {
			cart = float64(e.Bounds.X1-e.Bounds.X0) / float64(e.Bounds.Y1-e.Bounds.Y0)
		}
	}
	if cart == 0 {
		t.Fatal(`the Shop shows no "Cart (0)"`)
	}
	asks := []ask{
		{"whole screen", "the cart icon shows no items", false, screen},
		{"a part of the screen", "in the header: the cart shows no items", false, 1080.0 / 360},
		{"an element", `in "Cart (0)": the badge is grey`, false, cart},
		{"query", "what colour is the cart button?", true, screen},
	}
	for _, tt := range []struct {
		name      string
		anthropic bool
		vision    bool
	}{{"openai vision", false, true}, {"anthropic vision", true, true}, {"openai text only", false, false}} {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, lookingModel)
			cfg := srv.Config()
			if tt.anthropic {
				cfg = srv.AnthropicConfig()
			}
			if tt.vision {
				cfg.Roles = map[string]llm.Endpoint{"validator": {Vision: &yes}, "observer": {Vision: &yes}}
			}
			var log eventLog
			rt, err := agent.New(agent.Config{LLM: cfg, OnEvent: log.add})
			if err != nil {
				t.Fatal(err)
			}
			task := agent.Task{Driver: p.drv}
			for _, a := range asks {
				task.Goal = a.goal
				var evidence string
				if a.query {
					ans, err := rt.Query(ctx, task, agent.QueryString)
					if err != nil {
						t.Fatalf("%s: %v", a.name, err)
					}
					evidence, _ = ans.(string)
				} else {
					v, err := rt.Assert(ctx, task)
					if err != nil || !v.Pass {
						t.Fatalf("%s: %+v, %v", a.name, v, err)
					}
					evidence = strings.TrimPrefix(v.Evidence, "model: ")
				}
				var w, h int
				if _, err := fmt.Sscanf(evidence, "picture %dx%d", &w, &h); err != nil {
					if tt.vision {
						t.Errorf("%s: the model saw %q, want a picture", a.name, evidence)
					}
					continue
				}
				if !tt.vision {
					t.Errorf("%s: a text-only model got a %s", a.name, evidence)
					continue
				}
				if max(w, h) > llm.MaxImageSide {
					t.Errorf("%s: %s, want at most %d pixels a side", a.name, evidence, llm.MaxImageSide)
				}
				if got := float64(w) / float64(h); math.Abs(got-a.ratio) > 0.02*a.ratio {
					t.Errorf("%s: %s has shape %.3f, want %.3f", a.name, evidence, got, a.ratio)
				}
			}
			// The requests carried an image each for a vision model, none
			// otherwise; the model calls count the pictures' tokens.
			reqs := srv.Requests()
			if len(reqs) != len(asks) {
				t.Fatalf("%d requests, want %d", len(reqs), len(asks))
			}
			calls := payloads[map[string]any](t, log.evs, event.EvModelCall)
			if len(calls) != len(reqs) {
				t.Fatalf("%d model calls, %d requests", len(calls), len(reqs))
			}
			for i, r := range reqs {
				wantImages := 0
				if tt.vision {
					wantImages = 1
				}
				if r.Images() != wantImages {
					t.Errorf("request %d (%s) carries %d images, want %d", i, calls[i]["role"], r.Images(), wantImages)
				}
				imgTokens := 0
				for _, m := range r.Messages {
					for _, img := range m.Images {
						imgTokens += llm.ImageTokens(img)
					}
				}
				got, _ := calls[i]["image_tokens"].(float64)
				prompt, _ := calls[i]["prompt_tokens"].(float64)
				if int(got) != imgTokens || int(prompt)-imgTokens <= 0 || int(prompt)-imgTokens > agent.PromptBudget || imgTokens > llm.MaxImageTokens {
					t.Errorf("model call %d: %v; want image_tokens %d within prompt_tokens, the text within %d", i, calls[i], imgTokens, agent.PromptBudget)
				}
			}
			if role := calls[len(calls)-1]["role"]; role != event.RoleObserver {
				t.Errorf("the query was answered by the %v, want the observer", role)
			}
		})
	}
}

// Only the roles that read the screen get pictures: with every role's
// model multimodal, the planner's and the executor's requests carry none.
func TestVisionOnlyForScreenReaders(t *testing.T) {
	tk := taskNamed(t, "shop add to cart")
	m := newScripted()
	srv := llmtest.New(t, m.serve)
	cfg := srv.Config()
	yes := true
	cfg.Model.Vision = &yes
	rt, err := agent.New(agent.Config{LLM: cfg})
	if err != nil {
		t.Fatal(err)
	}
	runSuiteTask(t, tk, rt, tk.natural)
	planned := 0
	for i, r := range srv.Requests() {
		system := r.System()
		if !strings.Contains(system, "the planner") && !strings.Contains(system, "the executor") {
			continue
		}
		planned++
		if r.Images() != 0 {
			t.Errorf("request %d (%.40s…) carries %d images; only the validator and observer get pictures", i, system, r.Images())
		}
	}
	if planned == 0 {
		t.Fatal("no planner or executor request was made")
	}
}
