// Package llm talks to language models: an OpenAI-compatible client, an
// Anthropic client, configuration from apex.yaml and the environment, and
// per-role settings. Callers depend on the Client interface only.
package llm

import (
	"context"
	"encoding/json"
)

// Client sends one request to a model and returns its answer. It retries
// rate limits and server errors with backoff, bounds each call with a
// timeout, and stops when ctx ends. Implementations are safe for
// concurrent use.
type Client interface {
	Complete(ctx context.Context, req *Request) (*Response, error)
}

// Request is one model call.
type Request struct {
	// Role names the agent role making the call (planner, executor, …), for
	// accounting and per-role settings.
	Role     string
	Messages []Message
	// Tools the model may call; empty means plain text.
	Tools []Tool
	// JSON asks for a JSON object answer (used when the model has no tools).
	JSON bool
	// Temperature and MaxTokens override the role's settings when set.
	Temperature *float64
	MaxTokens   int
}

// Message is one turn of the conversation.
type Message struct {
	Role string `json:"role"` // system, user, assistant, tool
	Text string `json:"text,omitempty"`
	// Images are encoded PNG or JPEG images sent with a user message.
	Images     [][]byte   `json:"-"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // assistant turns
	ToolCallID string     `json:"tool_call_id,omitempty"` // tool turns
}

// Tool is a function the model may call, described by a JSON Schema (as
// the action space derives it).
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

// ToolCall is the model's call of a tool.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Response is the model's answer.
type Response struct {
	Text      string     `json:"text,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Usage     Usage      `json:"usage"`
	Model     string     `json:"model,omitempty"`
	// Truncated says the answer stopped at the max tokens limit, so a
	// JSON answer may have been closed by repair rather than by the model.
	Truncated bool `json:"truncated,omitempty"`
}

// Usage counts tokens and, when prices are known, cost.
type Usage struct {
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.PromptTokens + v.PromptTokens, u.CompletionTokens + v.CompletionTokens, u.CostUSD + v.CostUSD}
}
