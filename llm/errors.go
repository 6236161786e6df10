package llm

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors, matched with errors.Is against what Complete returns.
var (
	// ErrNotConfigured: no model is configured for a role.
	ErrNotConfigured = errors.New("llm: no model configured")
	// ErrAuth: the server refused the API key (401/403).
	ErrAuth = errors.New("llm: authentication failed")
	// ErrRateLimit: the server kept answering 429 after every retry.
	ErrRateLimit = errors.New("llm: rate limited")
	// ErrBadRequest: the server rejected the request (400, 404, 413, 422).
	ErrBadRequest = errors.New("llm: bad request")
	// ErrServer: the server kept failing (5xx) after every retry.
	ErrServer = errors.New("llm: server error")
	// ErrTimeout: one call took longer than the configured timeout.
	ErrTimeout = errors.New("llm: timeout")
	// ErrBadResponse: the answer could not be decoded.
	ErrBadResponse = errors.New("llm: bad response")
)

// APIError is an error answer from a model server: its HTTP status, the
// server's own message, and the sentinel it matches.
type APIError struct {
	Provider   string // openai or anthropic
	Model      string
	Status     int
	Type       string // the server's error type or code, when it gives one
	Message    string // the server's message
	RetryAfter time.Duration
	kind       error
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "no message"
	}
	hint := ""
	switch e.kind {
	case ErrAuth:
		hint = " (check the API key: APEX_MODEL_API_KEY or model.api_key in apex.yaml)"
	case ErrRateLimit:
		hint = " (rate limited; retries exhausted)"
	}
	return fmt.Sprintf("llm: %s %s: HTTP %d: %s%s", e.Provider, e.Model, e.Status, msg, hint)
}

// Is matches the sentinel for the error's kind (ErrAuth, ErrRateLimit, …).
func (e *APIError) Is(target error) bool { return target == e.kind }

// Unwrap returns the sentinel for the error's kind.
func (e *APIError) Unwrap() error { return e.kind }

// kindFor maps an HTTP status to the sentinel it stands for.
func kindFor(status int) error {
	switch {
	case status == 401 || status == 403:
		return ErrAuth
	case status == 429:
		return ErrRateLimit
	case status >= 500:
		return ErrServer
	default:
		return ErrBadRequest
	}
}

// retryable tells whether a status is worth another try: rate limits,
// server errors, and Anthropic's 529 "overloaded".
func retryable(status int) bool {
	return status == 408 || status == 409 || status == 429 || status >= 500
}
