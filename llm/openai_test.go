package llm

import (
	"strings"
	"testing"
)

func TestReasoningModel(t *testing.T) {
	for model, want := range map[string]bool{
		"o1": true, "o3-mini": true, "o4-mini-2025-04-16": true, "gpt-5": true, "gpt-5.1": true, "gpt-5-mini": true,
		"openai/o3": true, "gpt-4o": false, "gpt-4.1": false, "qwen-vl-max": false, "o1x": false, "deepseek-r1": false,
	} {
		if got := reasoningModel(model); got != want {
			t.Errorf("reasoningModel(%q) = %v, want %v", model, got, want)
		}
	}
}

func TestEndpointURL(t *testing.T) {
	for base, want := range map[string]string{
		"https://api.openai.com/v1":                  "https://api.openai.com/v1/chat/completions",
		"http://127.0.0.1:11434/v1/":                 "http://127.0.0.1:11434/v1/chat/completions",
		"https://gw.example/openai/chat/completions": "https://gw.example/openai/chat/completions",
	} {
		if got := endpointURL(base, "/chat/completions"); got != want {
			t.Errorf("endpointURL(%q) = %q, want %q", base, got, want)
		}
	}
	for base, want := range map[string]string{
		"https://api.anthropic.com":             "https://api.anthropic.com/v1/messages",
		"https://api.deepseek.com/anthropic/v1": "https://api.deepseek.com/anthropic/v1/messages",
		"https://proxy.example/v1/messages/":    "https://proxy.example/v1/messages",
	} {
		c, err := NewAnthropic(Options{BaseURL: base, Model: "m"})
		if err != nil || c.url != want {
			t.Errorf("NewAnthropic(%q).url = %q, %v; want %q", base, c.url, err, want)
		}
	}
}

// An answer cut at max tokens is flagged, and its JSON repaired.
func TestTruncated(t *testing.T) {
	oa, _ := scripted(t, step{200, nil, `{"model":"m","choices":[{"message":{"content":"{\"steps\": [{\"action\": \"tap\", \"target_text\": \"Sea"},"finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":16}}`})
	an, _ := scripted(t, step{200, nil, `{"model":"m","content":[{"type":"text","text":"{\"steps\": [{\"action\": \"tap\""}],"stop_reason":"max_tokens","usage":{"input_tokens":9,"output_tokens":16}}`})
	c1, _ := NewOpenAI(Options{BaseURL: oa.URL, Model: "m"})
	c2, _ := NewAnthropic(Options{BaseURL: an.URL, Model: "m"})
	for name, c := range map[string]Client{"openai": c1, "anthropic": c2} {
		resp, err := c.Complete(t.Context(), &Request{JSON: true, Messages: []Message{User("plan, as JSON")}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !resp.Truncated || !strings.HasPrefix(resp.Text, `{"steps":[{"action":"tap"`) {
			t.Errorf("%s: %+v; want truncated and repaired JSON", name, resp)
		}
	}
}

func TestLacksFeature(t *testing.T) {
	bad := func(msg string) error { return &APIError{Status: 400, Message: msg, kind: ErrBadRequest} }
	tests := []struct {
		msg         string
		tools, json bool
	}{
		{"registry.ollama.ai/library/llava:13b does not support tools", true, false},
		{"deepseek-reasoner does not support Function Calling", true, false},
		{`"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`, true, false},
		{"Invalid parameter: 'response_format' of type 'json_object' is not supported with this model.", false, true},
		{"'response_format.type' must be 'json_schema' or 'text'", false, true},
		{"Invalid schema for function 'tap': 'locator' is not valid under any of the given schemas (tools[0])", false, false},
		{"This model's maximum context length is 8192 tokens", false, false},
	}
	for _, tt := range tests {
		if got := lacksTools(bad(tt.msg)); got != tt.tools {
			t.Errorf("lacksTools(%q) = %v", tt.msg, got)
		}
		if got := lacksJSONMode(bad(tt.msg)); got != tt.json {
			t.Errorf("lacksJSONMode(%q) = %v", tt.msg, got)
		}
	}
	if lacksTools(&APIError{Status: 500, Message: "tools not supported", kind: ErrServer}) {
		t.Error("a 500 is not a missing feature")
	}
}
