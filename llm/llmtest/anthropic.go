package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/apexagent/apex/llm"
)

// anthropic is the Messages API wire format.
type anthropic struct{}

func (anthropic) auth(h http.Header) string {
	switch {
	case h.Get("x-api-key") != Key:
		return "invalid x-api-key"
	case h.Get("anthropic-version") == "":
		return "anthropic-version: header is required"
	}
	return ""
}

func (anthropic) fail(w http.ResponseWriter, status int, msg string) {
	typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}[status]
	if typ == "" {
		typ = "api_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
}

func (anthropic) decode(raw []byte) (*Request, error) {
	var body struct {
		Model       string          `json:"model"`
		MaxTokens   int             `json:"max_tokens"`
		System      json.RawMessage `json:"system"`
		Temperature *float64        `json:"temperature"`
		Messages    []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, fmt.Errorf("llmtest: request body is not a Messages API call: %v", err)
	}
	if body.Model == "" || body.MaxTokens <= 0 || len(body.Messages) == 0 {
		return nil, fmt.Errorf("llmtest: model, max_tokens and messages are required")
	}
	req := &Request{Protocol: llm.ProviderAnthropic, Model: body.Model, MaxTokens: body.MaxTokens, Temperature: body.Temperature}
	if len(body.System) > 0 {
		var sys string
		if err := json.Unmarshal(body.System, &sys); err != nil {
			return nil, fmt.Errorf("llmtest: system is not a string: %v", err)
		}
		req.Messages = append(req.Messages, Message{Role: "system", Text: sys})
	}
	for _, t := range body.Tools {
		if t.Name == "" || len(t.InputSchema) == 0 {
			return nil, fmt.Errorf("llmtest: a tool needs name and input_schema")
		}
		req.Tools = append(req.Tools, llm.Tool{Name: t.Name, Description: t.Description, Schema: t.InputSchema})
	}
	for i, m := range body.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, fmt.Errorf("llmtest: message %d: role %q is not user or assistant", i, m.Role)
		}
		if i > 0 && body.Messages[i-1].Role == m.Role {
			return nil, fmt.Errorf("llmtest: messages %d and %d are both %s; roles must alternate", i-1, i, m.Role)
		}
		msgs, err := decodeBlocks(m.Role, m.Content)
		if err != nil {
			return nil, fmt.Errorf("llmtest: message %d: %v", i, err)
		}
		req.Messages = append(req.Messages, msgs...)
	}
	return req, nil
}

// decodeBlocks turns one Messages API turn into Messages: tool results
// become tool messages, the rest one user or assistant message.
func decodeBlocks(role string, content json.RawMessage) ([]Message, error) {
	var text string
	if json.Unmarshal(content, &text) == nil {
		return []Message{{Role: role, Text: text}}, nil
	}
	var blocks []struct {
		Type   string `json:"type"`
		Text   string `json:"text"`
		Source struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
		} `json:"source"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(content, &blocks); err != nil {
		return nil, fmt.Errorf("content is neither a string nor blocks: %v", err)
	}
	var out []Message
	main := Message{Role: role}
	var texts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "image":
			if b.Source.Type != "base64" || (b.Source.MediaType != "image/png" && b.Source.MediaType != "image/jpeg") {
				return nil, fmt.Errorf("image source is not base64 PNG or JPEG")
			}
			img, err := base64.StdEncoding.DecodeString(b.Source.Data)
			if err != nil {
				return nil, fmt.Errorf("image data: %v", err)
			}
			main.Images = append(main.Images, img)
		case "tool_use":
			if role != "assistant" || b.ID == "" || !json.Valid(b.Input) {
				return nil, fmt.Errorf("tool_use needs an assistant turn, an id and a JSON input")
			}
			main.ToolCalls = append(main.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Args: b.Input})
		case "tool_result":
			var result string
			if len(b.Content) > 0 {
				if err := json.Unmarshal(b.Content, &result); err != nil {
					return nil, fmt.Errorf("tool_result content is not a string: %v", err)
				}
			}
			out = append(out, Message{Role: "tool", ToolCallID: b.ToolUseID, Text: result})
		default:
			return nil, fmt.Errorf("block type %q is not text, image, tool_use or tool_result", b.Type)
		}
	}
	main.Text = strings.Join(texts, "\n")
	if main.Text != "" || len(main.Images) > 0 || len(main.ToolCalls) > 0 {
		out = append(out, main)
	}
	return out, nil
}

func (anthropic) answer(req *Request, r Reply) any {
	text, calls, u := r.Text, r.ToolCalls, r.Usage
	content := []map[string]any{}
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for _, c := range calls {
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": c.Args})
	}
	stop := "end_turn"
	switch {
	case r.Truncated:
		stop = "max_tokens"
	case len(calls) > 0:
		stop = "tool_use"
	}
	return map[string]any{
		"id": "msg_llmtest", "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": stop,
		"usage": map[string]int{"input_tokens": u.PromptTokens, "output_tokens": u.CompletionTokens},
	}
}
