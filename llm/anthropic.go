package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// AnthropicVersion is the anthropic-version header the client sends.
const AnthropicVersion = "2023-06-01"

// anthropicMaxTokens is sent when neither the request nor the options set
// max tokens: the Messages API requires the field.
const anthropicMaxTokens = 1024

// Anthropic is a client of Anthropic's Messages API. It is safe for
// concurrent use.
type Anthropic struct {
	t   *transport
	url string
}

var _ Client = (*Anthropic)(nil)

// NewAnthropic returns a client for the Anthropic Messages API (or a
// server that speaks it).
func NewAnthropic(o Options) (*Anthropic, error) {
	t, err := newTransport("anthropic", AnthropicURL, o)
	if err != nil {
		return nil, err
	}
	base := strings.TrimRight(t.opts.BaseURL, "/")
	url := base + "/v1/messages"
	switch {
	case strings.HasSuffix(base, "/messages"):
		url = base
	case strings.HasSuffix(base, "/v1"):
		url = base + "/messages"
	}
	return &Anthropic{t: t, url: url}, nil
}

type anRequest struct {
	Model       string      `json:"model"`
	MaxTokens   int         `json:"max_tokens"`
	System      string      `json:"system,omitempty"`
	Messages    []anMessage `json:"messages"`
	Tools       []anTool    `json:"tools,omitempty"`
	Temperature *float64    `json:"temperature,omitempty"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

type anBlock struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// image
	Source *anSource `json:"source,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   string `json:"content,omitempty"`
}

type anSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anResponse struct {
	Model      string    `json:"model"`
	Content    []anBlock `json:"content"`
	StopReason string    `json:"stop_reason"`
	Usage      struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

// Complete sends req as one Messages API call.
func (c *Anthropic) Complete(ctx context.Context, req *Request) (*Response, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	body, err := c.encode(req)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("anthropic-version", AnthropicVersion)
	if c.t.opts.APIKey != "" {
		h.Set("x-api-key", c.t.opts.APIKey)
	}
	raw, err := c.t.post(ctx, c.url, h, body, decodeAnthropicError)
	if err != nil {
		return nil, err
	}
	return c.decode(raw, req)
}

func (c *Anthropic) decode(raw []byte, req *Request) (*Response, error) {
	var r anResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%w: anthropic %s: %v", ErrBadResponse, c.t.opts.Model, err)
	}
	out := &Response{Model: firstNonEmpty(r.Model, c.t.opts.Model), Usage: Usage{PromptTokens: r.Usage.InputTokens, CompletionTokens: r.Usage.OutputTokens}, Truncated: r.StopReason == "max_tokens"}
	var text []string
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			if b.Name == "" {
				return nil, fmt.Errorf("%w: anthropic %s: a tool_use block has no name", ErrBadResponse, c.t.opts.Model)
			}
			out.ToolCalls = append(out.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Args: argsOrEmpty(b.Input)})
		}
	}
	out.Text = strings.Join(text, "\n")
	return finish(out, req, false, c.t.provider, c.t.opts.Model)
}

func (c *Anthropic) encode(req *Request) ([]byte, error) {
	o := c.t.opts
	r := anRequest{Model: o.Model, MaxTokens: o.MaxTokens, Temperature: o.Temperature}
	if req.MaxTokens > 0 {
		r.MaxTokens = req.MaxTokens
	}
	if r.MaxTokens == 0 {
		r.MaxTokens = anthropicMaxTokens
	}
	if req.Temperature != nil {
		r.Temperature = req.Temperature
	}
	if r.Temperature != nil && *r.Temperature > 1 {
		one := 1.0 // the Messages API takes 0…1
		r.Temperature = &one
	}
	var system []string
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, anTool{Name: t.Name, Description: t.Description, InputSchema: schemaOrEmpty(t.Schema)})
	}
	for i, m := range req.Messages {
		var role string
		var blocks []anBlock
		switch m.Role {
		case RoleSystem:
			system = append(system, m.Text)
			continue
		case RoleTool:
			role = RoleUser
			blocks = []anBlock{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Text}}
		default:
			role = m.Role
			for j, img := range m.Images {
				mt, err := imageType(img)
				if err != nil {
					return nil, fmt.Errorf("llm: message %d: image %d: %w", i, j, err)
				}
				blocks = append(blocks, anBlock{Type: "image", Source: &anSource{Type: "base64", MediaType: mt, Data: base64.StdEncoding.EncodeToString(img)}})
			}
			if m.Text != "" {
				blocks = append(blocks, anBlock{Type: "text", Text: m.Text})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: argsOrEmpty(tc.Args)})
			}
		}
		if len(blocks) == 0 {
			continue
		}
		// The API wants user and assistant turns to alternate: tool
		// results that follow each other, or a result and the next user
		// text, share one user turn.
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
			r.Messages[n-1].Content = append(r.Messages[n-1].Content, blocks...)
			continue
		}
		r.Messages = append(r.Messages, anMessage{Role: role, Content: blocks})
	}
	if req.JSON {
		system = append(system, jsonPrompt)
	}
	r.System = strings.Join(system, "\n\n")
	if len(r.Messages) == 0 {
		return nil, fmt.Errorf("%w: anthropic needs a user message besides the system prompt", ErrBadRequest)
	}
	body, err := marshal(r)
	if err != nil {
		return nil, err
	}
	return withExtra(body, o.ExtraBody)
}

// decodeAnthropicError reads {"type":"error","error":{"type","message"}}.
func decodeAnthropicError(body []byte) (typ, msg string) {
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", ""
	}
	return e.Error.Type, e.Error.Message
}
