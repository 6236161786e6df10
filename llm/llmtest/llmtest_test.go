package llmtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/llm/llmtest"
)

func tinyPNG(t *testing.T) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A scripted model that reads the Scene text in the prompt and taps the
// element whose text the goal names, over both wire formats.
func TestScriptedModelReadsPrompt(t *testing.T) {
	srv := llmtest.New(t, func(r *llmtest.Request) llmtest.Reply {
		if !r.HasTool("tap") {
			return llmtest.Fail(400, "no tap tool offered")
		}
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return llmtest.Text("done: " + last.Text)
		}
		for _, line := range strings.Split(r.LastUser(), "\n") {
			if strings.Contains(line, `"Search"`) {
				return llmtest.Call("tap", map[string]string{"id": strings.Fields(line)[0]})
			}
		}
		return llmtest.Text("nothing to tap")
	})
	for _, proto := range []string{llm.ProviderOpenAI, llm.ProviderAnthropic} {
		t.Run(proto, func(t *testing.T) {
			cfg := srv.Config()
			if proto == llm.ProviderAnthropic {
				cfg = srv.AnthropicConfig()
			}
			c, err := cfg.Client("executor")
			if err != nil {
				t.Fatal(err)
			}
			before := len(srv.Requests())
			req := &llm.Request{
				Messages: []llm.Message{llm.System("Pick one action."), llm.User("e1 text \"Shop\"\ne7 button \"Search\"", tinyPNG(t))},
				Tools:    []llm.Tool{{Name: "tap", Description: "Tap an element", Schema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)}},
			}
			resp, err := c.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "tap" || string(resp.ToolCalls[0].Args) != `{"id":"e7"}` {
				t.Fatalf("tool calls = %+v, want tap e7", resp.ToolCalls)
			}
			if resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 {
				t.Errorf("usage = %+v, want tokens counted", resp.Usage)
			}
			reqs := srv.Requests()[before:]
			if len(reqs) != 1 || reqs[0].Protocol != proto || reqs[0].Images() != 1 || reqs[0].System() != "Pick one action." {
				t.Fatalf("requests = %+v", reqs)
			}
			if reqs[0].Temperature == nil || *reqs[0].Temperature != 0.1 || reqs[0].MaxTokens != 300 {
				t.Errorf("executor settings sent: temperature %v max tokens %d, want 0.1/300", reqs[0].Temperature, reqs[0].MaxTokens)
			}

			// The tool result goes back and the model answers from it.
			callID := resp.ToolCalls[0].ID
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: resp.ToolCalls}, llm.ToolResult(resp.ToolCalls[0].ID, "tapped"))
			resp, err = c.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "done: tapped" {
				t.Errorf("answer = %q, want the model to read the tool result", resp.Text)
			}
			last := srv.Requests()[before+1]
			if got := last.Messages[3]; got.Role != "tool" || got.ToolCallID != callID || got.Text != "tapped" {
				t.Errorf("tool turn = %+v", got)
			}
			if got := cfg.Accountant.Role("executor"); got.Calls != 2 {
				t.Errorf("executor tally = %+v", got)
			}
		})
	}
}

func TestScriptRetriesAndErrors(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script(llmtest.Fail(503, "busy"), llmtest.JSON(map[string]bool{"pass": true})))
	cfg := srv.Config()
	c, err := cfg.Client("validator")
	if err != nil {
		t.Fatal(err)
	}
	ctx := llm.WithTask(context.Background(), "task-1")
	resp, err := c.Complete(ctx, &llm.Request{Messages: []llm.Message{llm.User("Is it there? Answer in JSON.")}, JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"pass":true}` {
		t.Errorf("text = %q", resp.Text)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (one retry after 503)", n)
	}
	if !srv.Requests()[1].JSON {
		t.Error("JSON request sent without response_format json_object")
	}
	if got := cfg.Accountant.Task("task-1"); got.Calls != 1 || got.Roles["validator"].Usage.PromptTokens == 0 {
		t.Errorf("task accounts = %+v", got)
	}

	bad := llmtest.New(t, llmtest.Script(llmtest.Fail(400, "messages: too long")))
	_, err = bad.Client(t, "planner").Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.User("x")}})
	if !errors.Is(err, llm.ErrBadRequest) || !strings.Contains(err.Error(), "messages: too long") {
		t.Errorf("err = %v, want ErrBadRequest with the server's message", err)
	}
}

func TestWrongKeyAndDelay(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script(llmtest.Reply{Text: "late", Delay: time.Minute}))
	for _, cfg := range []*llm.Config{srv.Config(), srv.AnthropicConfig()} {
		cfg.Model.APIKey = "wrong"
		c, err := cfg.Client("planner")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.User("x")}}); !errors.Is(err, llm.ErrAuth) {
			t.Errorf("%s: err = %v, want ErrAuth", cfg.Model.Provider, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := srv.Client(t, "planner").Complete(ctx, &llm.Request{Messages: []llm.Message{llm.User("x")}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the delayed answer cut by the deadline", err)
	}
}

func TestTruncatedReply(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script(llmtest.Reply{Text: `{"steps": [`, Truncated: true}))
	for _, cfg := range []*llm.Config{srv.Config(), srv.AnthropicConfig()} {
		c, _ := cfg.Client("planner")
		resp, err := c.Complete(context.Background(), &llm.Request{JSON: true, Messages: []llm.Message{llm.User("plan in JSON")}})
		if err != nil || !resp.Truncated || resp.Text != `{"steps":[]}` {
			t.Errorf("%s: %+v, %v; want a truncated answer", cfg.Model.Provider, resp, err)
		}
	}
}
