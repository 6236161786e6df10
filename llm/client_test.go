package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/llm/llmtest"
)

func TestAccountingPerRoleAndTask(t *testing.T) {
	srv := llmtest.New(t, func(r *llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "ok", Usage: &llm.Usage{PromptTokens: 1000, CompletionTokens: 100}}
	})
	cfg := srv.Config()
	cfg.Prices = map[string]llm.Price{llmtest.Model: {Input: 2.5, Output: 10}}
	roles := []string{"planner", "executor", "validator"}
	var wg sync.WaitGroup
	for task := range 4 {
		for _, role := range roles {
			wg.Go(func() {
				c, err := cfg.Client(role)
				if err != nil {
					t.Error(err)
					return
				}
				ctx := llm.WithTask(context.Background(), fmt.Sprintf("task-%d", task))
				for range 5 {
					resp, err := c.Complete(ctx, &llm.Request{Messages: []llm.Message{llm.User("hi")}})
					if err != nil {
						t.Error(err)
						return
					}
					if math.Abs(resp.Usage.CostUSD-0.0035) > 1e-12 {
						t.Errorf("cost = %v, want 0.0035", resp.Usage.CostUSD)
					}
				}
			})
		}
	}
	wg.Wait()
	acct := cfg.Accountant
	total := acct.Total()
	if total.Calls != 60 || total.Usage.PromptTokens != 60000 || total.Usage.CompletionTokens != 6000 || math.Abs(total.Usage.CostUSD-0.21) > 1e-9 {
		t.Errorf("total = %+v", total)
	}
	for _, role := range roles {
		if got := acct.Role(role); got.Calls != 20 || got.Usage.PromptTokens != 20000 {
			t.Errorf("role %s = %+v", role, got)
		}
	}
	if got := acct.Tasks(); len(got) != 4 || got[0] != "task-0" {
		t.Errorf("tasks = %v", got)
	}
	task := acct.Task("task-2")
	if task.Calls != 15 || task.Roles["executor"].Calls != 5 || task.Usage.CompletionTokens != 1500 {
		t.Errorf("task-2 = %+v", task)
	}
	snap := acct.Snapshot()
	snap.Tasks["task-2"].Roles["executor"] = llm.Tally{}
	if acct.Task("task-2").Roles["executor"].Calls != 5 {
		t.Error("Snapshot shares maps with the Accountant")
	}
	if b, err := json.Marshal(snap); err != nil || len(b) == 0 {
		t.Errorf("snapshot JSON: %v", err)
	}
}

func TestErrorsAreCounted(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script(llmtest.Fail(400, "bad")))
	cfg := srv.Config()
	c, _ := cfg.Client("planner")
	if _, err := c.Complete(llm.WithTask(context.Background(), "t"), &llm.Request{Messages: []llm.Message{llm.User("x")}}); err == nil {
		t.Fatal("want an error")
	}
	if got := cfg.Accountant.Task("t"); got.Calls != 1 || got.Errors != 1 {
		t.Errorf("task = %+v, want 1 call 1 error", got)
	}
}

func TestRequestOverridesRole(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script(llmtest.Text("ok")))
	c := srv.Client(t, "planner")
	zero := 0.0
	if _, err := c.Complete(context.Background(), &llm.Request{Temperature: &zero, MaxTokens: 42, Messages: []llm.Message{llm.User("x")}}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Temperature == nil || *r.Temperature != 0 || r.MaxTokens != 42 {
		t.Errorf("sent temperature %v max tokens %d; want the request's 0/42", r.Temperature, r.MaxTokens)
	}
}

var tapTool = llm.Tool{Name: "tap", Description: "Tap an element.", Schema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)}

// A model without tool support (Ollama's answer for llava) gets the tools
// in the prompt from then on, and its JSON answer becomes a ToolCall.
func TestAutoToolFallback(t *testing.T) {
	srv := llmtest.New(t, func(r *llmtest.Request) llmtest.Reply {
		if len(r.Tools) > 0 {
			return llmtest.Fail(400, "registry.ollama.ai/library/llava:13b does not support tools")
		}
		if !r.JSON || !r.Contains(`"tool": "<name>"`) || !r.Contains("- tap: Tap an element.") {
			return llmtest.Fail(400, "tools not described")
		}
		return llmtest.Text("Sure!\n```json\n{\"tool\": \"tap\", \"args\": {\"id\": \"e3\"},}\n```")
	})
	c := srv.Client(t, "executor")
	req := &llm.Request{Tools: []llm.Tool{tapTool}, Messages: []llm.Message{llm.User("e3 button \"OK\"")}}
	for i := range 2 {
		resp, err := c.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "tap" || string(resp.ToolCalls[0].Args) != `{"id":"e3"}` {
			t.Fatalf("call %d: tool calls = %+v", i, resp.ToolCalls)
		}
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests; want 3 (the refused one, then straight to the fallback)", n)
	}
}

func TestAutoJSONModeFallback(t *testing.T) {
	srv := llmtest.New(t, func(r *llmtest.Request) llmtest.Reply {
		if r.JSON {
			return llmtest.Fail(400, "'response_format.type' json_object is not supported by this model")
		}
		if !r.Contains("Answer with one JSON object only") {
			return llmtest.Fail(400, "JSON not asked for")
		}
		return llmtest.Text(`Verdict: {"pass": true, "confidence": 0.9}`)
	})
	resp, err := srv.Client(t, "validator").Complete(context.Background(), &llm.Request{JSON: true, Messages: []llm.Message{llm.User("Is it on screen?")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"pass":true,"confidence":0.9}` {
		t.Errorf("text = %q", resp.Text)
	}
}

func TestJSONAnswerWithoutJSONFails(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script(llmtest.Text("I think it passed.")))
	_, err := srv.Client(t, "validator").Complete(context.Background(), &llm.Request{JSON: true, Messages: []llm.Message{llm.User("json please")}})
	if err == nil || !errors.Is(err, llm.ErrBadResponse) || !errors.Is(err, llm.ErrNoJSON) {
		t.Fatalf("err = %v; want ErrBadResponse wrapping ErrNoJSON", err)
	}
}

func TestBadRequestsAreRefusedLocally(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script(llmtest.Text("ok")))
	c := srv.Client(t, "planner")
	for name, req := range map[string]*llm.Request{
		"no messages": {},
		"bad role":    {Messages: []llm.Message{{Role: "robot", Text: "x"}}},
		"tool no id":  {Messages: []llm.Message{{Role: llm.RoleTool, Text: "x"}}},
		"gif image":   {Messages: []llm.Message{llm.User("x", []byte("GIF89a...."))}},
		"bad schema":  {Messages: []llm.Message{llm.User("x")}, Tools: []llm.Tool{{Name: "t", Schema: json.RawMessage(`{`)}}},
	} {
		if _, err := c.Complete(context.Background(), req); !errors.Is(err, llm.ErrBadRequest) {
			t.Errorf("%s: err = %v; want ErrBadRequest", name, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

// A server with neither tools nor JSON mode (an old Ollama model behind a
// strict proxy) is met on the third try, and on the first after that.
func TestAutoFallbackBoth(t *testing.T) {
	srv := llmtest.New(t, func(r *llmtest.Request) llmtest.Reply {
		switch {
		case len(r.Tools) > 0:
			return llmtest.Fail(400, "model does not support tools")
		case r.JSON:
			return llmtest.Fail(400, "response_format is not supported")
		case !r.Contains("Answer with one JSON object only") || !r.Contains("- tap:"):
			return llmtest.Fail(400, "fallback prompt missing")
		}
		return llmtest.Text(`{"tool": "tap", "args": {"id": "e1"}}`)
	})
	c := srv.Client(t, "executor")
	for i, wantRequests := range []int{3, 4} {
		resp, err := c.Complete(context.Background(), &llm.Request{Tools: []llm.Tool{tapTool}, Messages: []llm.Message{llm.User("e1 button")}})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if len(resp.ToolCalls) != 1 || string(resp.ToolCalls[0].Args) != `{"id":"e1"}` {
			t.Errorf("call %d: %+v", i, resp.ToolCalls)
		}
		if n := len(srv.Requests()); n != wantRequests {
			t.Errorf("after call %d: %d requests, want %d", i, n, wantRequests)
		}
	}
}

func TestHeadersAndExtraBody(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script(llmtest.Text("ok")))
	file := filepath.Join(t.TempDir(), "apex.yaml")
	yaml := "model:\n  headers: {HTTP-Referer: \"${SITE}\", X-Title: apex}\n  extra_body: {enable_thinking: false}\n  roles:\n    planner:\n      extra_body: {enable_thinking: true, top_k: 5}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"APEX_MODEL_BASE_URL": srv.BaseURL(), "APEX_MODEL_NAME": "qwen3-vl-plus", "APEX_MODEL_API_KEY": llmtest.Key, "SITE": "https://apex.example"}
	cfg, err := llm.LoadConfig(file, func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"executor", "planner"} {
		c, err := cfg.Client(role)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.User("x")}}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	var exec, plan map[string]any
	json.Unmarshal(reqs[0].Body, &exec)
	json.Unmarshal(reqs[1].Body, &plan)
	if exec["enable_thinking"] != false || plan["enable_thinking"] != true || plan["top_k"] != 5.0 || exec["model"] != "qwen3-vl-plus" {
		t.Errorf("bodies: executor %v, planner %v", exec, plan)
	}
	if got := reqs[0].Header.Get("Http-Referer"); got != "https://apex.example" || reqs[1].Header.Get("X-Title") != "apex" {
		t.Errorf("headers = %v", reqs[0].Header)
	}
	if _, err := llm.LoadConfig("", func(k string) string {
		return map[string]string{"MIDSCENE_MODEL_EXTRA_BODY_JSON": "[1]"}[k]
	}); err == nil || !strings.Contains(err.Error(), "MIDSCENE_MODEL_EXTRA_BODY_JSON") {
		t.Errorf("err = %v; want one naming the variable", err)
	}
}
