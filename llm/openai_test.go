package llm

import "testing"

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
