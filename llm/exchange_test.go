package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden request files in testdata")

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ptr[T any](v T) *T { return &v }

var tapTool = Tool{
	Name:        "tap",
	Description: "Tap the element the locator finds.",
	Schema:      json.RawMessage(`{"type":"object","properties":{"locator":{"type":"object","properties":{"text":{"type":"string"},"id":{"type":"string"}}}},"required":["locator"]}`),
}

// recorded is what the client sent: the parts a golden file pins.
type recorded struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

// exchange serves testdata/<name>.response.json and checks the request
// against testdata/<name>.request.json (rewritten with -update).
func exchange(t *testing.T, name string) (url string, check func()) {
	t.Helper()
	answer := readFile(t, name+".response.json")
	var got *recorded
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, body, "    ", "  "); err != nil {
			t.Errorf("request body is not JSON: %v", err)
		}
		got = &recorded{Method: r.Method, Path: r.URL.Path, Headers: map[string]string{}, Body: pretty.Bytes()}
		for _, h := range []string{"Authorization", "X-Api-Key", "Anthropic-Version", "Content-Type", "Http-Referer"} {
			if v := r.Header.Get(h); v != "" {
				got.Headers[h] = v
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() {
		t.Helper()
		if got == nil {
			t.Fatal("the client sent no request")
		}
		gotJSON, _ := json.MarshalIndent(got, "", "  ")
		gotJSON = append(gotJSON, '\n')
		golden := filepath.Join("testdata", name+".request.json")
		if *update {
			if err := os.WriteFile(golden, gotJSON, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./llm -run Exchange -update to record it)", err)
		}
		if d := cmp.Diff(string(want), string(gotJSON)); d != "" {
			t.Errorf("request differs from %s (-want +got):\n%s", golden, d)
		}
	}
}

type exchangeCase struct {
	name string
	opts Options
	req  Request
	want Response
}

// runExchanges runs each case against its recorded answer in
// testdata/<dir>/ and checks both the request sent and the response read.
func runExchanges(t *testing.T, dir string, tests []exchangeCase, newClient func(Options, string) (Client, error)) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, check := exchange(t, dir+"/"+tt.name)
			c, err := newClient(tt.opts, url)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Complete(context.Background(), &tt.req)
			if err != nil {
				t.Fatal(err)
			}
			check()
			if d := cmp.Diff(&tt.want, got); d != "" {
				t.Errorf("response (-want +got):\n%s", d)
			}
		})
	}
}

func TestExchangesOpenAI(t *testing.T) {
	png, jpg := readFile(t, "screen.png"), readFile(t, "screen.jpg")
	tests := []exchangeCase{{
		name: "text",
		opts: Options{Model: "gpt-4o", APIKey: "sk-test", Temperature: ptr(0.2), MaxTokens: 1500},
		req:  Request{Role: "planner", Messages: []Message{System("You plan phone tasks."), User("Goal: search for headphones.")}},
		want: Response{Text: "1. Tap \"Search\"\n2. Type \"headphones\"\n3. Check \"Results\" exists", Model: "gpt-4o-2024-08-06", Usage: Usage{PromptTokens: 41, CompletionTokens: 22}},
	}, {
		name: "tools-image",
		opts: Options{Model: "qwen-vl-max", APIKey: "sk-dash", Temperature: ptr(0.1), MaxTokens: 300},
		req: Request{Role: "executor", Tools: []Tool{tapTool}, Messages: []Message{
			System("Pick one action."),
			User("e7 button \"Search\"", png, jpg),
		}},
		want: Response{ToolCalls: []ToolCall{{ID: "call_4f3e0a9c", Name: "tap", Args: json.RawMessage(`{"locator":{"text":"Search"}}`)}}, Model: "qwen-vl-max", Usage: Usage{PromptTokens: 812, CompletionTokens: 19}},
	}, {
		name: "tool-result",
		opts: Options{Model: "deepseek-chat", APIKey: "sk-ds"},
		req: Request{Tools: []Tool{tapTool}, Temperature: ptr(0.0), MaxTokens: 100, Messages: []Message{
			User("Tap Search."),
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "tap", Args: json.RawMessage(`{"locator":{"text":"Search"}}`)}}},
			ToolResult("call_1", "ok: tapped e7"),
		}},
		want: Response{Text: "Tapped Search; the search box is open.", Model: "deepseek-chat", Usage: Usage{PromptTokens: 120, CompletionTokens: 11}},
	}, {
		name: "json",
		opts: Options{Model: "llama3.1:8b"},
		req:  Request{Role: "validator", JSON: true, Messages: []Message{User("Does \"Results\" exist?\ne4 text \"Results\"")}},
		want: Response{Text: `{"pass":true,"confidence":0.92,"evidence":"e4 text \"Results\""}`, Model: "llama3.1:8b", Usage: Usage{PromptTokens: 95, CompletionTokens: 30}},
	}, {
		name: "fallback-tools",
		opts: Options{Model: "llava:13b", NoTools: true, Header: http.Header{"Http-Referer": {"https://apex.example"}}},
		req: Request{Tools: []Tool{tapTool}, Messages: []Message{
			System("Pick one action."),
			User("Tap Search."),
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "tap", Args: json.RawMessage(`{"locator":{"text":"Shop"}}`)}}},
			ToolResult("call_1", "error: no element reads Shop"),
			User("e7 button \"Search\""),
		}},
		want: Response{ToolCalls: []ToolCall{{ID: "call_text_1", Name: "tap", Args: json.RawMessage(`{"locator":{"text":"Search"}}`)}}, Model: "llava:13b", Usage: Usage{PromptTokens: 300, CompletionTokens: 25}},
	}, {
		name: "reasoning",
		opts: Options{Model: "o3-mini", APIKey: "sk-test", Temperature: ptr(0.2), MaxTokens: 300},
		req:  Request{Messages: []Message{User("ping")}},
		want: Response{Text: "pong", Model: "o3-mini-2025-01-31", Usage: Usage{PromptTokens: 12, CompletionTokens: 75}},
	}}
	runExchanges(t, "openai", tests, func(o Options, url string) (Client, error) {
		o.BaseURL = url + "/v1"
		return NewOpenAI(o)
	})
}

func TestExchangesAnthropic(t *testing.T) {
	png, jpg := readFile(t, "screen.png"), readFile(t, "screen.jpg")
	tests := []exchangeCase{{
		name: "text",
		opts: Options{Model: "claude-sonnet-4-5", APIKey: "sk-ant-test", Temperature: ptr(0.2), MaxTokens: 1500},
		req:  Request{Messages: []Message{System("You plan phone tasks."), User("Goal: search for headphones.")}},
		want: Response{Text: "1. Tap \"Search\"\n2. Type \"headphones\"", Model: "claude-sonnet-4-5-20250929", Usage: Usage{PromptTokens: 44, CompletionTokens: 18}},
	}, {
		name: "tools-image",
		opts: Options{Model: "claude-sonnet-4-5", APIKey: "sk-ant-test", Temperature: ptr(0.1), MaxTokens: 300},
		req:  Request{Tools: []Tool{tapTool}, Messages: []Message{System("Pick one action."), User("e7 button \"Search\"", png, jpg)}},
		want: Response{Text: "I'll tap the Search field.", ToolCalls: []ToolCall{{ID: "toolu_01A09q90qw90lq917835lq9", Name: "tap", Args: json.RawMessage(`{"locator": {"text": "Search"}}`)}}, Model: "claude-sonnet-4-5-20250929", Usage: Usage{PromptTokens: 1520, CompletionTokens: 61}},
	}, {
		name: "tool-result",
		opts: Options{Model: "claude-sonnet-4-5", APIKey: "sk-ant-test"},
		req: Request{Tools: []Tool{tapTool}, Messages: []Message{
			System("Act."),
			User("Tap Search, then Cart."),
			{Role: RoleAssistant, Text: "Tapping both.", ToolCalls: []ToolCall{
				{ID: "toolu_1", Name: "tap", Args: json.RawMessage(`{"locator":{"text":"Search"}}`)},
				{ID: "toolu_2", Name: "tap", Args: json.RawMessage(`{"locator":{"text":"Cart"}}`)},
			}},
			ToolResult("toolu_1", "ok"),
			ToolResult("toolu_2", "ok"),
			User("Did both land?"),
		}},
		want: Response{Text: "Both taps landed.", Model: "claude-sonnet-4-5-20250929", Usage: Usage{PromptTokens: 210, CompletionTokens: 6}},
	}, {
		name: "json",
		opts: Options{Model: "claude-haiku-4-5", APIKey: "sk-ant-test", Temperature: ptr(0.0), MaxTokens: 300},
		req:  Request{JSON: true, Messages: []Message{System("You check phone screens."), User("Does \"Results\" exist?")}},
		want: Response{Text: `{"pass":false,"confidence":0.7,"evidence":"no element reads Results"}`, Model: "claude-haiku-4-5", Usage: Usage{PromptTokens: 80, CompletionTokens: 20}},
	}}
	runExchanges(t, "anthropic", tests, func(o Options, url string) (Client, error) {
		o.BaseURL = url
		return NewAnthropic(o)
	})
}
