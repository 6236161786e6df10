// Package llmtest runs a scripted model server for tests, speaking both
// OpenAI's chat completions and Anthropic's Messages API: a Go func reads
// each request (the prompt, the tools, the images) and decides the answer,
// so a test can script a model that reads the Scene text in the prompt and
// picks an action. Server.Config points every role of an llm.Config at it.
package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/llm"
)

// Key is the API key the server accepts (Config uses it).
const Key = "llmtest-key"

// Model is the model name Config sets.
const Model = "scripted"

// Request is one chat-completions call as the server received it.
type Request struct {
	Protocol    string // llm.ProviderOpenAI or llm.ProviderAnthropic
	Model       string
	Messages    []Message
	Tools       []llm.Tool
	JSON        bool // response_format json_object
	Temperature *float64
	MaxTokens   int
	Header      http.Header
	Body        []byte // the raw request body
}

// Message is one message of a Request.
type Message struct {
	Role       string
	Text       string   // text content (text parts joined by newlines)
	Images     [][]byte // decoded data: URL images
	ToolCalls  []llm.ToolCall
	ToolCallID string
}

// System is the text of the system messages.
func (r *Request) System() string { return r.join(func(m Message) bool { return m.Role == "system" }) }

// Prompt is the text of every message, in order.
func (r *Request) Prompt() string { return r.join(func(Message) bool { return true }) }

// LastUser is the text of the last user message ("" when none).
func (r *Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text
		}
	}
	return ""
}

// Contains tells whether any message's text contains s.
func (r *Request) Contains(s string) bool { return strings.Contains(r.Prompt(), s) }

// HasTool tells whether the request offers a tool named name.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// Images counts the images in all messages.
func (r *Request) Images() int {
	n := 0
	for _, m := range r.Messages {
		n += len(m.Images)
	}
	return n
}

func (r *Request) join(keep func(Message) bool) string {
	var parts []string
	for _, m := range r.Messages {
		if keep(m) && m.Text != "" {
			parts = append(parts, m.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Reply is the scripted answer to one request.
type Reply struct {
	Text      string
	ToolCalls []llm.ToolCall // IDs are filled in when empty
	// Usage is reported as given; nil means counted from the request and
	// the answer with llm.Tokens.
	Usage *llm.Usage
	// Status, when not 0 or 200, answers with that HTTP error and Error as
	// the message (OpenAI's error shape); RetryAfter sets Retry-After.
	Status     int
	Error      string
	RetryAfter time.Duration
	// Truncated answers as if the max tokens limit cut the answer.
	Truncated bool
	// Delay holds the answer back (ended early if the client goes away),
	// to test timeouts and cancellation.
	Delay time.Duration
}

// Text answers with text.
func Text(s string) Reply { return Reply{Text: s} }

// JSON answers with v encoded as JSON text.
func JSON(v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("llmtest.JSON: %v", err))
	}
	return Reply{Text: string(b)}
}

// Call answers with a call of tool name with args (any value that
// encodes to a JSON object, or a json.RawMessage).
func Call(name string, args any) Reply {
	b, err := json.Marshal(args)
	if err != nil {
		panic(fmt.Sprintf("llmtest.Call: %v", err))
	}
	return Reply{ToolCalls: []llm.ToolCall{{Name: name, Args: b}}}
}

// Fail answers with HTTP status and message.
func Fail(status int, message string) Reply { return Reply{Status: status, Error: message} }

// Handler decides the answer to a request.
type Handler func(*Request) Reply

// Script answers with replies in order, then repeats the last one.
func Script(replies ...Reply) Handler {
	var mu sync.Mutex
	i := 0
	return func(*Request) Reply {
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			return Fail(http.StatusInternalServerError, "llmtest.Script: no replies scripted")
		}
		r := replies[min(i, len(replies)-1)]
		i++
		return r
	}
}

// Server is a scripted model server on 127.0.0.1. It answers OpenAI's
// POST …/chat/completions and Anthropic's POST …/v1/messages with the same
// Handler; a wrong API key gets 401.
type Server struct {
	*httptest.Server
	handler Handler

	mu    sync.Mutex
	reqs  []*Request
	calls int
}

// New starts a server answering with h, closed when the test ends.
func New(t testing.TB, h Handler) *Server {
	t.Helper()
	s := Start(h)
	t.Cleanup(s.Close)
	return s
}

// Start starts a server answering with h; the caller closes it. Use New
// in tests; Start serves examples and programs.
func Start(h Handler) *Server {
	s := &Server{handler: h}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the API root to give an OpenAI client (ends in /v1).
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// Config returns a model configuration pointing every role at this server,
// with fast retries and a fresh Accountant.
func (s *Server) Config() *llm.Config {
	return &llm.Config{
		Model:      llm.Endpoint{Provider: llm.ProviderOpenAI, BaseURL: s.BaseURL(), Model: Model, APIKey: Key},
		Backoff:    time.Millisecond,
		Accountant: llm.NewAccountant(),
	}
}

// AnthropicConfig is Config for the server's Anthropic Messages API.
func (s *Server) AnthropicConfig() *llm.Config {
	c := s.Config()
	c.Model.Provider, c.Model.BaseURL = llm.ProviderAnthropic, s.URL
	return c
}

// Client returns a client for role bound to this server.
func (s *Server) Client(t testing.TB, role string) llm.Client {
	t.Helper()
	c, err := s.Config().Client(role)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var p protocol
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		p = openAI{}
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages"):
		p = anthropic{}
	default:
		openAI{}.fail(w, http.StatusNotFound, "llmtest: only POST …/chat/completions and …/v1/messages are served, not "+r.Method+" "+r.URL.Path)
		return
	}
	if msg := p.auth(r.Header); msg != "" {
		p.fail(w, http.StatusUnauthorized, msg)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		p.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	req, err := p.decode(raw)
	if err != nil {
		p.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	req.Header, req.Body = r.Header.Clone(), raw
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	reply := s.handler(req)
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		if reply.RetryAfter > 0 {
			w.Header().Set("Retry-After", fmt.Sprint(int(reply.RetryAfter.Seconds()+0.999)))
		}
		p.fail(w, reply.Status, reply.Error)
		return
	}
	calls := s.callIDs(reply.ToolCalls)
	u := reply.Usage
	if u == nil {
		out := reply.Text
		for _, c := range calls {
			out += c.Name + string(c.Args)
		}
		u = &llm.Usage{PromptTokens: llm.Tokens(req.Prompt()), CompletionTokens: llm.Tokens(out)}
	}
	w.Header().Set("Content-Type", "application/json")
	reply.ToolCalls, reply.Usage = calls, u
	_ = json.NewEncoder(w).Encode(p.answer(req, reply))
}

// callIDs fills in missing tool call IDs, unique per server.
func (s *Server) callIDs(calls []llm.ToolCall) []llm.ToolCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]llm.ToolCall, len(calls))
	for i, tc := range calls {
		s.calls++
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d", s.calls)
		}
		if len(tc.Args) == 0 {
			tc.Args = json.RawMessage(`{}`)
		}
		out[i] = tc
	}
	return out
}

// protocol is one wire format the server speaks.
type protocol interface {
	auth(http.Header) string // "" when the key is right
	decode(body []byte) (*Request, error)
	answer(req *Request, r Reply) any // r has its tool call IDs and usage
	fail(w http.ResponseWriter, status int, msg string)
}

type openAI struct{}

func (openAI) auth(h http.Header) string {
	if h.Get("Authorization") != "Bearer "+Key {
		return "Incorrect API key provided"
	}
	return ""
}

func (openAI) answer(req *Request, r Reply) any {
	text, calls, u := r.Text, r.ToolCalls, r.Usage
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	msg := map[string]any{"role": "assistant", "content": text}
	finish := "stop"
	if len(calls) > 0 {
		var cs []call
		for _, tc := range calls {
			c := call{ID: tc.ID, Type: "function"}
			c.Function.Name, c.Function.Arguments = tc.Name, string(tc.Args)
			cs = append(cs, c)
		}
		msg["tool_calls"], finish = cs, "tool_calls"
		if text == "" {
			msg["content"] = nil
		}
	}
	if r.Truncated {
		finish = "length"
	}
	return map[string]any{
		"id": "chatcmpl-llmtest", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": map[string]int{
			"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
			"total_tokens": u.PromptTokens + u.CompletionTokens,
		},
	}
}

func (openAI) fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": http.StatusText(status)}})
}

// decode reads the OpenAI wire format into a Request.
func (openAI) decode(raw []byte) (*Request, error) {
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		ResponseFormat *struct {
			Type string `json:"type"`
		} `json:"response_format"`
		Temperature         *float64 `json:"temperature"`
		MaxTokens           int      `json:"max_tokens"`
		MaxCompletionTokens int      `json:"max_completion_tokens"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, fmt.Errorf("llmtest: request body is not a chat completion: %v", err)
	}
	if body.Model == "" || len(body.Messages) == 0 {
		return nil, fmt.Errorf("llmtest: request needs a model and messages")
	}
	req := &Request{
		Protocol: llm.ProviderOpenAI, Model: body.Model, Temperature: body.Temperature, MaxTokens: max(body.MaxTokens, body.MaxCompletionTokens),
		JSON: body.ResponseFormat != nil && body.ResponseFormat.Type == "json_object",
	}
	for _, t := range body.Tools {
		if t.Type != "function" {
			return nil, fmt.Errorf("llmtest: tool type %q is not function", t.Type)
		}
		req.Tools = append(req.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description, Schema: t.Function.Parameters})
	}
	for i, m := range body.Messages {
		msg := Message{Role: m.Role, ToolCallID: m.ToolCallID}
		if err := decodeContent(m.Content, &msg); err != nil {
			return nil, fmt.Errorf("llmtest: message %d: %v", i, err)
		}
		for _, tc := range m.ToolCalls {
			if !json.Valid([]byte(tc.Function.Arguments)) {
				return nil, fmt.Errorf("llmtest: message %d: tool call arguments are not JSON: %q", i, tc.Function.Arguments)
			}
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: json.RawMessage(tc.Function.Arguments)})
		}
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

func decodeContent(c json.RawMessage, m *Message) error {
	if len(c) == 0 || string(c) == "null" {
		return nil
	}
	if err := json.Unmarshal(c, &m.Text); err == nil {
		return nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(c, &parts); err != nil {
		return fmt.Errorf("content is neither a string nor a list of parts: %v", err)
	}
	var texts []string
	for _, p := range parts {
		switch p.Type {
		case "text":
			texts = append(texts, p.Text)
		case "image_url":
			img, err := decodeDataURL(p.ImageURL.URL)
			if err != nil {
				return err
			}
			m.Images = append(m.Images, img)
		default:
			return fmt.Errorf("content part type %q is not text or image_url", p.Type)
		}
	}
	m.Text = strings.Join(texts, "\n")
	return nil
}

func decodeDataURL(u string) ([]byte, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return nil, fmt.Errorf("image URL is not a data: URL: %.40q", u)
	}
	mt, data, ok := strings.Cut(rest, ";base64,")
	if !ok || (mt != "image/png" && mt != "image/jpeg") {
		return nil, fmt.Errorf("image data URL is not base64 PNG or JPEG: %.40q", u)
	}
	return base64.StdEncoding.DecodeString(data)
}
