package wda

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// envelope is every WebDriverAgent answer: W3C ({"value": …, "sessionId":
// …}) or JSON Wire, which adds a numeric "status" (0 for success).
type envelope struct {
	Value     json.RawMessage `json:"value"`
	SessionID *string         `json:"sessionId"`
	Status    *int            `json:"status"`
}

// errorValue is the W3C error object inside "value".
type errorValue struct {
	Error      string `json:"error"`
	Message    string `json:"message"`
	Traceback  string `json:"traceback"`
	StackTrace string `json:"stacktrace"`
}

// Response is a decoded successful answer.
type Response struct {
	Value     json.RawMessage
	SessionID string
}

// DecodeResponse reads one WebDriverAgent answer. op names the request in
// errors. A WebDriverAgent error becomes an *Error; a body that is not
// WebDriverAgent JSON is ErrBadResponse.
func DecodeResponse(op string, httpStatus int, body []byte) (*Response, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("wda: %s: HTTP %d, %w: %v (body %q)", op, httpStatus, ErrBadResponse, err, snippet(body))
	}
	var sid string
	if env.SessionID != nil {
		sid = *env.SessionID
	}
	// W3C errors: an object with "error" in value, whatever the HTTP status.
	if v := bytes.TrimSpace(env.Value); len(v) > 0 && v[0] == '{' {
		var ev errorValue
		if json.Unmarshal(v, &ev) == nil && ev.Error != "" {
			tb := ev.Traceback
			if tb == "" {
				tb = ev.StackTrace
			}
			return nil, &Error{Op: op, HTTPStatus: httpStatus, Code: ev.Error, Message: ev.Message, Traceback: tb}
		}
	}
	if env.Status != nil && *env.Status != 0 {
		code, ok := legacyStatus[*env.Status]
		if !ok {
			code = "unknown error"
		}
		return nil, &Error{Op: op, HTTPStatus: httpStatus, Code: code, Message: legacyMessage(env.Value)}
	}
	if httpStatus >= 400 {
		code := "unknown error"
		switch httpStatus {
		case http.StatusNotFound:
			code = "unknown command"
		case http.StatusMethodNotAllowed:
			code = "unknown method"
		case http.StatusBadRequest:
			code = "invalid argument"
		}
		return nil, &Error{Op: op, HTTPStatus: httpStatus, Code: code, Message: legacyMessage(env.Value)}
	}
	if env.Value == nil && env.SessionID == nil && env.Status == nil {
		return nil, fmt.Errorf("wda: %s: %w: no value in %q", op, ErrBadResponse, snippet(body))
	}
	return &Response{Value: env.Value, SessionID: sid}, nil
}

// legacyMessage pulls a message out of a JSON Wire error value, which was
// a string or an object with "message" or "description".
func legacyMessage(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var o struct {
		Message     string `json:"message"`
		Description string `json:"description"`
	}
	if json.Unmarshal(v, &o) == nil {
		if o.Message != "" {
			return o.Message
		}
		return o.Description
	}
	return ""
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
