package llm

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecodeResponses feeds server bodies to both decoders: they never
// panic, fail only with ErrBadResponse, and what they return is usable —
// tool calls have a name and JSON arguments, JSON answers are JSON.
func FuzzDecodeResponses(f *testing.F) {
	for _, s := range []string{
		okBody, anOKBody,
		`{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c","function":{"name":"tap","arguments":"{\"id\":\"e1\",}"}}]}}]}`,
		`{"choices":[{"message":{"content":"{\"tool\": \"tap\", \"args\": {}}"},"finish_reason":"length"}]}`,
		`{"content":[{"type":"tool_use","id":"t","name":"tap","input":{"id":"e1"}}],"stop_reason":"tool_use"}`,
		`{"content":[{"type":"text","text":"{'pass': True"}],"stop_reason":"max_tokens"}`,
		`{"choices":[]}`, `null`, `{"error":{"message":"x"}}`, `{"choices":[{"message":{"tool_calls":[{"function":{"name":"","arguments":""}}]}}]}`,
	} {
		f.Add([]byte(s), false, false)
		f.Add([]byte(s), true, true)
	}
	oa, err := NewOpenAI(Options{Model: "m"})
	if err != nil {
		f.Fatal(err)
	}
	an, err := NewAnthropic(Options{Model: "m"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, tools, wantJSON bool) {
		req := &Request{JSON: wantJSON, Messages: []Message{User("x")}}
		if tools {
			req.Tools = []Tool{{Name: "tap"}}
		}
		for name, decode := range map[string]func() (*Response, error){
			"openai":          func() (*Response, error) { return oa.decode(body, req, false) },
			"openai fallback": func() (*Response, error) { return oa.decode(body, req, tools) },
			"anthropic":       func() (*Response, error) { return an.decode(body, req) },
		} {
			resp, err := decode()
			if err != nil {
				if !errors.Is(err, ErrBadResponse) {
					t.Fatalf("%s: error %v is not ErrBadResponse", name, err)
				}
				continue
			}
			for _, tc := range resp.ToolCalls {
				if tc.Name == "" || !json.Valid(tc.Args) {
					t.Fatalf("%s: tool call %+v has no name or bad args", name, tc)
				}
			}
			if wantJSON && len(resp.ToolCalls) == 0 && !json.Valid([]byte(resp.Text)) {
				t.Fatalf("%s: JSON asked, got %q", name, resp.Text)
			}
			if resp.Model == "" {
				t.Fatalf("%s: no model", name)
			}
		}
	})
}

func TestDecodeErrorBodies(t *testing.T) {
	tests := []struct {
		body, typ, msg string
		anthropic      bool
	}{
		{`{"error":{"message":"Invalid API key","type":"invalid_request_error","code":"invalid_api_key"}}`, "invalid_request_error", "Invalid API key", false},
		{`{"error":{"message":"Throttled","code":"Throttling.RateQuota"}}`, "Throttling.RateQuota", "Throttled", false},
		{`{"error":"model 'x' not found"}`, "", "model 'x' not found", false},
		{`{"message":"Not Found"}`, "", "Not Found", false},
		{`{"detail":"Not authenticated"}`, "", "Not authenticated", false},
		{`<html>502</html>`, "", "", false},
		{`{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}`, "rate_limit_error", "Number of requests has exceeded your rate limit", true},
	}
	for _, tt := range tests {
		decode := decodeOpenAIError
		if tt.anthropic {
			decode = decodeAnthropicError
		}
		if typ, msg := decode([]byte(tt.body)); typ != tt.typ || msg != tt.msg {
			t.Errorf("decode(%s) = %q, %q; want %q, %q", tt.body, typ, msg, tt.typ, tt.msg)
		}
	}
}
