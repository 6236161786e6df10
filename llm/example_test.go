package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/llm/llmtest"
)

// A role's client calls the configured endpoint with the role's settings,
// and the Accountant adds up what each role and task used.
func ExampleConfig_Client() {
	// A scripted model standing in for an OpenAI-compatible server: it
	// taps the element the prompt's Scene lists as "Search".
	srv := llmtest.Start(func(r *llmtest.Request) llmtest.Reply {
		for _, line := range strings.Split(r.LastUser(), "\n") {
			if strings.Contains(line, `"Search"`) {
				return llmtest.Reply{
					ToolCalls: []llm.ToolCall{{Name: "tap", Args: json.RawMessage(`{"id":"` + strings.Fields(line)[0] + `"}`)}},
					Usage:     &llm.Usage{PromptTokens: 120, CompletionTokens: 9},
				}
			}
		}
		return llmtest.Text("no Search on screen")
	})
	defer srv.Close()

	env := map[string]string{"APEX_MODEL_BASE_URL": srv.BaseURL(), "APEX_MODEL_NAME": "qwen-vl-max", "APEX_MODEL_API_KEY": llmtest.Key}
	cfg, err := llm.LoadConfig("", func(k string) string { return env[k] })
	if err != nil {
		panic(err)
	}
	cfg.Prices = map[string]llm.Price{"qwen-vl-max": {Input: 0.8, Output: 3.2}}
	executor, err := cfg.Client("executor")
	if err != nil {
		panic(err)
	}
	ctx := llm.WithTask(context.Background(), "task-1")
	resp, err := executor.Complete(ctx, &llm.Request{
		Messages: []llm.Message{llm.System("Pick one action."), llm.User("e1 text \"Shop\"\ne7 button \"Search\"")},
		Tools:    []llm.Tool{{Name: "tap", Description: "Tap an element", Schema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)}},
	})
	if err != nil {
		panic(err)
	}
	sent := srv.Requests()[0]
	fmt.Printf("sent temperature %.1f, max tokens %d\n", *sent.Temperature, sent.MaxTokens)
	fmt.Printf("%s %s\n", resp.ToolCalls[0].Name, resp.ToolCalls[0].Args)
	task := cfg.Accountant.Task("task-1")
	fmt.Printf("task-1: %d call, %d+%d tokens, $%.6f\n", task.Calls, task.Usage.PromptTokens, task.Usage.CompletionTokens, task.Usage.CostUSD)
	// Output:
	// sent temperature 0.1, max tokens 300
	// tap {"id":"e7"}
	// task-1: 1 call, 120+9 tokens, $0.000125
}

func ExampleExtractJSON() {
	v, err := llm.ExtractJSON("Sure! Here is the verdict:\n```json\n{\"pass\": True, \"evidence\": \"e4 reads Results\",}\n```")
	fmt.Println(string(v), err)
	// Output: {"pass":true,"evidence":"e4 reads Results"} <nil>
}

func ExampleTokens() {
	fmt.Println(llm.Tokens("tiktoken is great!"), llm.Tokens("点击“搜索”"))
	// Output: 6 4
}
