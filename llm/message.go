package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// System, User and Assistant build messages.
func System(text string) Message { return Message{Role: RoleSystem, Text: text} }
func User(text string, images ...[]byte) Message {
	return Message{Role: RoleUser, Text: text, Images: images}
}
func Assistant(text string) Message { return Message{Role: RoleAssistant, Text: text} }

// ToolResult is the message that answers a tool call.
func ToolResult(callID, text string) Message {
	return Message{Role: RoleTool, Text: text, ToolCallID: callID}
}

func checkRequest(req *Request) error {
	if req == nil || len(req.Messages) == 0 {
		return fmt.Errorf("%w: a request needs at least one message", ErrBadRequest)
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem, RoleUser, RoleAssistant:
		case RoleTool:
			if m.ToolCallID == "" {
				return fmt.Errorf("%w: message %d: a tool message needs the ToolCallID it answers", ErrBadRequest, i)
			}
		default:
			return fmt.Errorf("%w: message %d: role %q is not system, user, assistant or tool", ErrBadRequest, i, m.Role)
		}
		if len(m.Images) > 0 && m.Role != RoleUser {
			return fmt.Errorf("%w: message %d: only user messages carry images", ErrBadRequest, i)
		}
	}
	for _, t := range req.Tools {
		if t.Name == "" {
			return fmt.Errorf("%w: a tool has no name", ErrBadRequest)
		}
		if len(t.Schema) > 0 && !json.Valid(t.Schema) {
			return fmt.Errorf("%w: tool %s: schema is not valid JSON", ErrBadRequest, t.Name)
		}
	}
	return nil
}

// withSystem returns msgs with text appended to the system prompt (or a
// system message put first), leaving msgs itself unchanged.
func withSystem(msgs []Message, text string) []Message {
	out := make([]Message, 0, len(msgs)+1)
	if len(msgs) > 0 && msgs[0].Role == RoleSystem {
		first := msgs[0]
		first.Text = strings.TrimSpace(first.Text + "\n\n" + text)
		out = append(out, first)
		return append(out, msgs[1:]...)
	}
	out = append(out, System(text))
	return append(out, msgs...)
}

func mentionsJSON(msgs []Message) bool {
	for _, m := range msgs {
		if strings.Contains(strings.ToLower(m.Text), "json") {
			return true
		}
	}
	return false
}

func schemaOrEmpty(s json.RawMessage) json.RawMessage {
	if len(s) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return s
}

func argsOrEmpty(a json.RawMessage) json.RawMessage {
	if len(a) == 0 {
		return json.RawMessage(`{}`)
	}
	return a
}

// marshal encodes v without escaping <, > and &, so prompts reach the
// model as written.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// withExtra adds extra's fields to the JSON object body.
func withExtra(body []byte, extra json.RawMessage) ([]byte, error) {
	if len(extra) == 0 {
		return body, nil
	}
	var m, x map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(extra, &x); err != nil {
		return nil, err
	}
	for k, v := range x {
		m[k] = v
	}
	return marshal(m)
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
