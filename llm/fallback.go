package llm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// jsonPrompt asks for a JSON answer where the server has no JSON mode.
const jsonPrompt = "Answer with one JSON object only, no prose and no code fence."

// toolPrompt describes tools to a model that cannot call them, asking for
// a JSON object naming one.
func toolPrompt(tools []Tool) string {
	var b strings.Builder
	b.WriteString("You can call these tools. To call one, answer with one JSON object only: ")
	b.WriteString(`{"tool": "<name>", "args": {…arguments matching its schema…}}`)
	b.WriteString(`. If no tool fits, answer {"answer": "<your text>"}.` + "\n\nTools:\n")
	for _, t := range tools {
		fmt.Fprintf(&b, "- %s: %s\n  schema: %s\n", t.Name, strings.TrimSpace(t.Description), compactSchema(t.Schema))
	}
	return strings.TrimRight(b.String(), "\n")
}

func compactSchema(s json.RawMessage) string {
	if v, ok := compact(string(schemaOrEmpty(s))); ok {
		return string(v)
	}
	return string(s)
}

// toolCallJSON is how a call reads in a transcript sent without tools.
func toolCallJSON(tc ToolCall) string {
	b, _ := json.Marshal(struct {
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	}{tc.Name, argsOrEmpty(tc.Args)})
	return string(b)
}

// finish turns a text answer into what req asked for: a ToolCall named in
// the text (the tool fallback, or a model that writes its calls as text),
// or the JSON extracted from it.
func finish(out *Response, req *Request, fallback bool, provider, model string) (*Response, error) {
	if len(req.Tools) > 0 && len(out.ToolCalls) == 0 {
		tc, answer, err := toolFromText(out.Text, req.Tools)
		switch {
		case err != nil && fallback:
			return nil, fmt.Errorf("%w: %s %s: %v", ErrBadResponse, provider, model, err)
		case tc != nil:
			out.ToolCalls, out.Text = []ToolCall{*tc}, ""
			return out, nil
		case answer != "":
			out.Text = answer
		}
	}
	if req.JSON && len(out.ToolCalls) == 0 {
		v, err := ExtractJSON(out.Text)
		if err != nil {
			return nil, fmt.Errorf("%w: %s %s: asked for JSON: %w", ErrBadResponse, provider, model, err)
		}
		out.Text = string(v)
	}
	return out, nil
}

// toolFromText reads {"tool": name, "args": {…}} (also the "name" /
// "arguments" shape and Qwen's <tool_call> tags) from a text answer. A
// JSON {"answer": …} comes back as answer. With no JSON or no known tool
// it returns an error saying what was wrong.
func toolFromText(text string, tools []Tool) (*ToolCall, string, error) {
	v, err := ExtractJSON(text)
	if err != nil {
		return nil, "", err
	}
	var call struct {
		Tool       string          `json:"tool"`
		Name       string          `json:"name"`
		Function   json.RawMessage `json:"function"`
		Args       json.RawMessage `json:"args"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
		Input      json.RawMessage `json:"input"`
		Answer     *string         `json:"answer"`
	}
	if json.Unmarshal(v, &call) != nil {
		return nil, "", fmt.Errorf("the answer is JSON but not an object naming a tool: %.200s", v)
	}
	name := firstNonEmpty(call.Tool, call.Name)
	if name == "" && len(call.Function) > 0 {
		// {"function": {"name": …, "arguments": …}}
		var fn struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(call.Function, &fn) == nil {
			name, call.Arguments = fn.Name, fn.Arguments
		} else {
			_ = json.Unmarshal(call.Function, &name)
		}
	}
	if name == "" {
		if call.Answer != nil {
			return nil, *call.Answer, nil
		}
		return nil, "", fmt.Errorf(`the answer names no tool (want {"tool": …, "args": …}): %.200s`, v)
	}
	known := false
	for _, t := range tools {
		known = known || t.Name == name
	}
	if !known {
		return nil, "", fmt.Errorf("the answer calls tool %q, which is not one of %s", name, toolNames(tools))
	}
	args := json.RawMessage(`{}`)
	for _, a := range []json.RawMessage{call.Args, call.Arguments, call.Parameters, call.Input} {
		if len(a) == 0 || string(a) == "null" {
			continue
		}
		var s string
		if json.Unmarshal(a, &s) == nil {
			// Arguments as a JSON string, as the OpenAI wire has them.
			if inner, err := ExtractJSON(s); err == nil {
				a = inner
			}
		}
		args = a
		break
	}
	return &ToolCall{ID: "call_text_1", Name: name, Args: args}, "", nil
}

func toolNames(tools []Tool) string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
