package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
)

// OpenAIURL is OpenAI's API root; every OpenAI-compatible server has its
// own (see Providers).
const OpenAIURL = "https://api.openai.com/v1"

// OpenAI is a client of the OpenAI chat-completions API, which OpenAI,
// Qwen (DashScope), DeepSeek, Doubao, Ollama, vLLM, LM Studio and
// OpenRouter all serve. It is safe for concurrent use.
type OpenAI struct {
	t   *transport
	url string
	// noTools and noJSONMode latch on when the server says the model lacks
	// the feature, so later calls go straight to the fallback.
	noTools, noJSONMode atomic.Bool
}

var _ Client = (*OpenAI)(nil)

// NewOpenAI returns a client for an OpenAI-compatible endpoint.
func NewOpenAI(o Options) (*OpenAI, error) {
	t, err := newTransport("openai", OpenAIURL, o)
	if err != nil {
		return nil, err
	}
	c := &OpenAI{t: t, url: endpointURL(t.opts.BaseURL, "/chat/completions")}
	c.noTools.Store(o.NoTools)
	c.noJSONMode.Store(o.NoJSONMode)
	return c, nil
}

// endpointURL appends path to base unless base already ends with it.
func endpointURL(base, path string) string {
	base = strings.TrimRight(base, "/")
	if strings.HasSuffix(base, path) {
		return base
	}
	return base + path
}

type oaRequest struct {
	Model               string      `json:"model"`
	Messages            []oaMessage `json:"messages"`
	Tools               []oaTool    `json:"tools,omitempty"`
	Temperature         *float64    `json:"temperature,omitempty"`
	MaxTokens           int         `json:"max_tokens,omitempty"`
	MaxCompletionTokens int         `json:"max_completion_tokens,omitempty"`
	ResponseFormat      *oaFormat   `json:"response_format,omitempty"`
}

type oaFormat struct {
	Type string `json:"type"`
}

type oaMessage struct {
	Role       string       `json:"role"`
	Content    any          `json:"content"` // string, []oaPart, or nil
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaPart struct {
	Type     string      `json:"type"`
	Text     string      `json:"text,omitempty"`
	ImageURL *oaImageURL `json:"image_url,omitempty"`
}

type oaImageURL struct {
	URL string `json:"url"`
}

type oaTool struct {
	Type     string     `json:"type"`
	Function oaFunction `json:"function"`
}

type oaFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content          *string      `json:"content"`
			ReasoningContent string       `json:"reasoning_content"`
			Refusal          string       `json:"refusal"`
			ToolCalls        []oaToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// Complete sends req as one chat completion.
func (c *OpenAI) Complete(ctx context.Context, req *Request) (*Response, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	// Each feature the server refuses is switched off once, for good.
	for {
		fallback := len(req.Tools) > 0 && c.noTools.Load()
		resp, err := c.complete(ctx, req, fallback)
		switch {
		case err == nil:
			return resp, nil
		case len(req.Tools) > 0 && !fallback && lacksTools(err):
			c.t.log.Info("llm: model does not support tools; describing them in the prompt", "model", c.t.opts.Model, "err", err)
			c.noTools.Store(true)
		case (req.JSON || fallback) && !c.noJSONMode.Load() && lacksJSONMode(err):
			c.t.log.Info("llm: server rejects response_format; asking for JSON in the prompt", "model", c.t.opts.Model, "err", err)
			c.noJSONMode.Store(true)
		default:
			return nil, err
		}
	}
}

func (c *OpenAI) complete(ctx context.Context, req *Request, fallback bool) (*Response, error) {
	body, err := c.encode(req, fallback)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	if c.t.opts.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.t.opts.APIKey)
	}
	raw, err := c.t.post(ctx, c.url, h, body, decodeOpenAIError)
	if err != nil {
		return nil, err
	}
	return c.decode(raw, req, fallback)
}

// encode builds the request body. With fallback, tools are described in
// the system prompt and the answer is a JSON object naming one.
func (c *OpenAI) encode(req *Request, fallback bool) ([]byte, error) {
	o := c.t.opts
	r := oaRequest{Model: o.Model, Temperature: o.Temperature, MaxTokens: o.MaxTokens}
	if req.Temperature != nil {
		r.Temperature = req.Temperature
	}
	if req.MaxTokens > 0 {
		r.MaxTokens = req.MaxTokens
	}
	if reasoningModel(o.Model) {
		// o-series and GPT-5 models take max_completion_tokens and only
		// their default temperature.
		r.MaxCompletionTokens, r.MaxTokens, r.Temperature = r.MaxTokens, 0, nil
	}
	msgs := req.Messages
	switch {
	case fallback:
		msgs = withSystem(msgs, toolPrompt(req.Tools))
	case len(req.Tools) > 0:
		for _, t := range req.Tools {
			r.Tools = append(r.Tools, oaTool{Type: "function", Function: oaFunction{Name: t.Name, Description: t.Description, Parameters: schemaOrEmpty(t.Schema)}})
		}
	}
	wantJSON := req.JSON || fallback
	if wantJSON {
		if c.noJSONMode.Load() {
			msgs = withSystem(msgs, jsonPrompt)
		} else {
			r.ResponseFormat = &oaFormat{Type: "json_object"}
			if !mentionsJSON(msgs) {
				// OpenAI rejects json_object unless a message says "JSON".
				msgs = withSystem(msgs, jsonPrompt)
			}
		}
	}
	for i, m := range msgs {
		om, err := encodeOpenAIMessage(m, fallback)
		if err != nil {
			return nil, fmt.Errorf("llm: message %d: %w", i, err)
		}
		r.Messages = append(r.Messages, om)
	}
	body, err := marshal(r)
	if err != nil {
		return nil, err
	}
	return withExtra(body, o.ExtraBody)
}

func encodeOpenAIMessage(m Message, fallback bool) (oaMessage, error) {
	om := oaMessage{Role: m.Role, Content: m.Text, ToolCallID: m.ToolCallID}
	if len(m.Images) > 0 {
		parts := []oaPart{}
		if m.Text != "" {
			parts = append(parts, oaPart{Type: "text", Text: m.Text})
		}
		for i, img := range m.Images {
			u, err := dataURL(img)
			if err != nil {
				return om, fmt.Errorf("image %d: %w", i, err)
			}
			parts = append(parts, oaPart{Type: "image_url", ImageURL: &oaImageURL{URL: u}})
		}
		om.Content = parts
	}
	if fallback {
		// Without tools the transcript must not hold tool turns: replay
		// them as the JSON the model wrote and the result it got.
		switch {
		case m.Role == RoleAssistant && len(m.ToolCalls) > 0:
			om.Content = strings.TrimSpace(m.Text + "\n" + toolCallJSON(m.ToolCalls[0]))
			return om, nil
		case m.Role == RoleTool:
			return oaMessage{Role: RoleUser, Content: "Result of the tool call: " + m.Text}, nil
		}
	}
	for _, tc := range m.ToolCalls {
		otc := oaToolCall{ID: tc.ID, Type: "function"}
		otc.Function.Name = tc.Name
		otc.Function.Arguments = string(argsOrEmpty(tc.Args))
		om.ToolCalls = append(om.ToolCalls, otc)
	}
	if len(om.ToolCalls) > 0 && m.Text == "" {
		om.Content = nil
	}
	return om, nil
}

func (c *OpenAI) decode(raw []byte, req *Request, fallback bool) (*Response, error) {
	var r oaResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrBadResponse, c.t.provider, c.t.opts.Model, err)
	}
	if len(r.Choices) == 0 {
		return nil, fmt.Errorf("%w: %s %s: no choices in %.200s", ErrBadResponse, c.t.provider, c.t.opts.Model, raw)
	}
	ch := r.Choices[0].Message
	out := &Response{Model: r.Model, Usage: Usage{PromptTokens: r.Usage.PromptTokens, CompletionTokens: r.Usage.CompletionTokens}, Truncated: r.Choices[0].FinishReason == "length"}
	if out.Model == "" {
		out.Model = c.t.opts.Model
	}
	if ch.Content != nil {
		out.Text = *ch.Content
	}
	if out.Text == "" && ch.Refusal != "" {
		out.Text = ch.Refusal
	}
	for _, tc := range ch.ToolCalls {
		if tc.Function.Name == "" {
			return nil, fmt.Errorf("%w: %s %s: a tool call has no name", ErrBadResponse, c.t.provider, c.t.opts.Model)
		}
		args := json.RawMessage(tc.Function.Arguments)
		if strings.TrimSpace(tc.Function.Arguments) == "" {
			args = json.RawMessage(`{}`)
		}
		if !json.Valid(args) {
			fixed, err := ExtractJSON(tc.Function.Arguments)
			if err != nil {
				return nil, fmt.Errorf("%w: %s %s: tool call %s has arguments that are not JSON: %.200q", ErrBadResponse, c.t.provider, c.t.opts.Model, tc.Function.Name, tc.Function.Arguments)
			}
			args = fixed
		}
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: args})
	}
	return finish(out, req, fallback, c.t.provider, c.t.opts.Model)
}

// decodeOpenAIError reads {"error": {"message", "type", "code"}} and the
// variants Ollama and others send ({"error": "text"}, {"message": …}).
func decodeOpenAIError(body []byte) (typ, msg string) {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", ""
	}
	var s string
	if json.Unmarshal(e.Error, &s) == nil {
		return "", s
	}
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
		typ = obj.Type
		if typ == "" && len(obj.Code) > 0 {
			typ = strings.Trim(string(obj.Code), `"`)
		}
		return typ, obj.Message
	}
	if e.Message != "" {
		return "", e.Message
	}
	return "", e.Detail
}

// dataURL encodes a PNG or JPEG image as a data: URL.
func dataURL(img []byte) (string, error) {
	mt, err := imageType(img)
	if err != nil {
		return "", err
	}
	return "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(img), nil
}

func imageType(img []byte) (string, error) {
	switch mt := http.DetectContentType(img); mt {
	case "image/png", "image/jpeg":
		return mt, nil
	default:
		return "", fmt.Errorf("%w: image is %s, not PNG or JPEG", ErrBadRequest, mt)
	}
}

// reasoningModel tells OpenAI's o-series and GPT-5 models apart, which
// reject max_tokens and a temperature other than their default.
func reasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if m == p || strings.HasPrefix(m, p+"-") || strings.HasPrefix(m, p+".") {
			return true
		}
	}
	return false
}

// lacksTools tells a 400 saying the model or server cannot call tools
// (Ollama's "does not support tools", DeepSeek's "does not support
// Function Calling", vLLM started without a tool parser) from other bad
// requests, such as a schema the server refuses.
func lacksTools(err error) bool {
	m, ok := badRequestMessage(err)
	if !ok {
		return false
	}
	if strings.Contains(m, "enable-auto-tool-choice") || strings.Contains(m, "tool-call-parser") {
		return true
	}
	return (strings.Contains(m, "tool") || strings.Contains(m, "function call")) && notSupported(m)
}

// lacksJSONMode tells a 400 refusing response_format json_object (LM
// Studio's "'response_format.type' must be 'json_schema' or 'text'").
func lacksJSONMode(err error) bool {
	m, ok := badRequestMessage(err)
	if !ok || !(strings.Contains(m, "response_format") || strings.Contains(m, "json_object") || strings.Contains(m, "json mode")) {
		return false
	}
	return notSupported(m) || strings.Contains(m, "must be")
}

func notSupported(m string) bool {
	return strings.Contains(m, "not support") || strings.Contains(m, "unsupported") || strings.Contains(m, "not available")
}

func badRequestMessage(err error) (string, bool) {
	var ae *APIError
	if !errorsAs(err, &ae) || ae.kind != ErrBadRequest {
		return "", false
	}
	return strings.ToLower(ae.Message), true
}
