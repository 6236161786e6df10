package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"time"
)

// Options configure one model endpoint for NewOpenAI and NewAnthropic. The
// zero value of every field but Model means a sensible default.
type Options struct {
	// BaseURL is the API root, e.g. https://api.openai.com/v1 (the client
	// appends /chat/completions or /v1/messages). Empty means the
	// provider's public API.
	BaseURL string
	APIKey  string
	Model   string
	// Temperature and MaxTokens apply when a Request does not set its own.
	Temperature *float64
	MaxTokens   int
	// NoTools says the model cannot call tools: tools are described in the
	// prompt and the model's JSON answer is turned into a ToolCall. The
	// OpenAI client also switches to this by itself when the server says
	// the model does not support tools.
	NoTools bool
	// NoJSONMode says the server rejects response_format; JSON answers are
	// then asked for in the prompt and extracted leniently.
	NoJSONMode bool
	// Timeout bounds each HTTP call (default 120s); ctx bounds the whole
	// Complete, retries included.
	Timeout time.Duration
	// MaxRetries is how many times a 429, 5xx or connection failure is
	// retried (default 3; negative means never).
	MaxRetries int
	// Backoff is the first retry's delay (default 500ms), doubled each
	// retry with jitter, capped at 30s. A Retry-After header wins.
	Backoff time.Duration
	// Wait waits between retries; nil means a timer that stops when ctx
	// ends. Tests replace it to record the delays.
	Wait func(ctx context.Context, d time.Duration) error
	// Header holds extra request headers (OpenRouter's HTTP-Referer, …).
	Header http.Header
	// ExtraBody is a JSON object whose fields are added to every request
	// body, for provider switches such as DashScope's
	// {"enable_thinking": false}. Its fields win over the client's own.
	ExtraBody  json.RawMessage
	HTTPClient *http.Client
	Log        *slog.Logger
}

const (
	defaultTimeout    = 120 * time.Second
	defaultRetries    = 3
	defaultBackoff    = 500 * time.Millisecond
	maxBackoff        = 30 * time.Second
	maxRetryAfter     = 2 * time.Minute
	maxResponseLength = 32 << 20
)

// transport is the part both clients share: one JSON POST with a timeout
// per call and retries with backoff.
type transport struct {
	provider string
	opts     Options
	http     *http.Client
	log      *slog.Logger
}

func newTransport(provider, defaultURL string, o Options) (*transport, error) {
	if o.BaseURL == "" {
		o.BaseURL = defaultURL
	}
	if o.Model == "" {
		return nil, fmt.Errorf("%w: %s client needs a model name (APEX_MODEL_NAME or model.name in apex.yaml)", ErrNotConfigured, provider)
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = defaultRetries
	} else if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.Backoff <= 0 {
		o.Backoff = defaultBackoff
	}
	if len(o.ExtraBody) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(o.ExtraBody, &m); err != nil || m == nil {
			return nil, fmt.Errorf("%w: extra body for %s is not a JSON object: %s", ErrBadRequest, o.Model, o.ExtraBody)
		}
	}
	if o.Wait == nil {
		o.Wait = waitTimer
	}
	t := &transport{provider: provider, opts: o, http: o.HTTPClient, log: o.Log}
	if t.http == nil {
		t.http = http.DefaultClient
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	return t, nil
}

func waitTimer(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errorDecoder pulls the server's error type and message out of an error body.
type errorDecoder func(body []byte) (typ, msg string)

// post sends body to url and returns the 2xx answer's body, retrying what
// is worth retrying. header carries the provider's auth headers.
func (t *transport) post(ctx context.Context, url string, header http.Header, body []byte, decode errorDecoder) ([]byte, error) {
	var last error
	for attempt := 0; ; attempt++ {
		out, delay, err := t.once(ctx, url, header, body, decode)
		if err == nil {
			return out, nil
		}
		last = err
		if delay < 0 || attempt >= t.opts.MaxRetries {
			return nil, last
		}
		if delay == 0 {
			delay = t.backoff(attempt)
		}
		t.log.Debug("llm: retrying", "provider", t.provider, "model", t.opts.Model, "attempt", attempt+1, "delay", delay, "err", err)
		if werr := t.opts.Wait(ctx, delay); werr != nil {
			return nil, fmt.Errorf("llm: %s %s: waiting to retry after %v: %w", t.provider, t.opts.Model, last, werr)
		}
	}
}

// backoff is the delay before retry n (0-based): exponential with jitter
// in [d/2, d).
func (t *transport) backoff(n int) time.Duration {
	d := t.opts.Backoff << n
	if d > maxBackoff || d <= 0 {
		d = maxBackoff
	}
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// once makes one HTTP call. delay < 0 means do not retry; 0 means retry
// after the usual backoff; > 0 is the server's Retry-After.
func (t *transport) once(ctx context.Context, url string, header http.Header, body []byte, decode errorDecoder) ([]byte, time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return nil, -1, fmt.Errorf("llm: %s %s: %w", t.provider, t.opts.Model, err)
	}
	cctx, cancel := context.WithTimeout(ctx, t.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, -1, fmt.Errorf("llm: %s %s: bad base URL: %w", t.provider, t.opts.Model, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, vs := range t.opts.Header {
		req.Header[k] = vs
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := t.http.Do(req)
	if err == nil {
		var out []byte
		out, err = io.ReadAll(io.LimitReader(resp.Body, maxResponseLength))
		resp.Body.Close()
		if err == nil {
			if resp.StatusCode/100 == 2 {
				return out, 0, nil
			}
			return nil, t.statusDelay(resp), t.apiError(resp, out, decode)
		}
	}
	switch {
	case ctx.Err() != nil:
		return nil, -1, fmt.Errorf("llm: %s %s: %w", t.provider, t.opts.Model, ctx.Err())
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return nil, -1, fmt.Errorf("llm: %s %s: no answer from %s within %v: %w (%w)", t.provider, t.opts.Model, url, t.opts.Timeout, ErrTimeout, context.DeadlineExceeded)
	}
	// Connection refused, reset, …: worth another try.
	var uerr *neturl.Error
	if errors.As(err, &uerr) {
		err = uerr.Err // it would repeat the URL
	}
	return nil, 0, fmt.Errorf("llm: %s %s: POST %s: %w", t.provider, t.opts.Model, url, err)
}

func (t *transport) apiError(resp *http.Response, body []byte, decode errorDecoder) error {
	typ, msg := decode(body)
	if msg == "" {
		// A body that is not a model API's error is never echoed: a base
		// URL set by a client could point anywhere, and its page would
		// come back in the error text.
		msg = fmt.Sprintf("the answer (%d bytes of %s) is not a model API's error: is the base URL the API root (…/v1)?",
			len(body), cmp.Or(resp.Header.Get("Content-Type"), "no content type"))
	}
	return &APIError{
		Provider: t.provider, Model: t.opts.Model, Status: resp.StatusCode,
		Type: typ, Message: msg, RetryAfter: retryAfter(resp.Header, time.Now()),
		kind: kindFor(resp.StatusCode),
	}
}

// statusDelay tells whether and when to retry an error status.
func (t *transport) statusDelay(resp *http.Response) time.Duration {
	if !retryable(resp.StatusCode) {
		return -1
	}
	if d := retryAfter(resp.Header, time.Now()); d > 0 {
		return min(d, maxRetryAfter)
	}
	return 0
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After in seconds or
// as an HTTP date; 0 when absent or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}
