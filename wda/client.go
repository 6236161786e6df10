// Package wda is a client for WebDriverAgent's HTTP API, the XCTest-based
// server that drives iPhones and iOS simulators: status, sessions, UI
// source, screenshots, element lookup, touches, keys, apps and alerts.
// It knows nothing of scenes or agents.
package wda

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Options configure a Client; nil means defaults.
type Options struct {
	// Timeout bounds each request (default 30 s). Requests also end with
	// their context.
	Timeout time.Duration
	// HTTP is the HTTP client (default: one with keep-alive and no
	// overall timeout, since Timeout is applied per request).
	HTTP *http.Client
	// Capabilities are sent when a session is created (default none, so
	// WebDriverAgent drives whatever app is on screen).
	Capabilities map[string]any
	Log          *slog.Logger
}

// Client talks to one WebDriverAgent. Sessions are created lazily and
// recreated once when WebDriverAgent forgets them (it restarted). A Client
// is safe for concurrent use.
type Client struct {
	base *url.URL
	opts Options
	http *http.Client
	log  *slog.Logger

	mu  sync.Mutex
	sid string
	// created counts sessions made, for tests and logs.
	created int
}

// maxBody bounds how much of an answer is read (a 4K screenshot in base64
// is ~20 MB; sources of huge screens run to a few MB).
const maxBody = 128 << 20

// New returns a client for the WebDriverAgent at rawURL
// ("http://127.0.0.1:8100"). It does not contact it.
func New(rawURL string, opts *Options) (*Client, error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	c := &Client{base: u}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Timeout <= 0 {
		c.opts.Timeout = 30 * time.Second
	}
	c.http = c.opts.HTTP
	if c.http == nil {
		c.http = &http.Client{Transport: &http.Transport{
			Proxy:               nil, // WebDriverAgent is local or port-forwarded: never via a proxy
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	c.log = c.opts.Log
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// ParseURL checks a WebDriverAgent URL; a bare "host:port" gets http://.
func ParseURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, errors.New("wda: empty URL: give one like http://127.0.0.1:8100")
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("wda: URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("wda: URL %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("wda: URL %q has no host: give one like http://127.0.0.1:8100", raw)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// URL is the WebDriverAgent base URL.
func (c *Client) URL() string { return c.base.String() }

// Do sends one request to path (relative to the base URL) and returns the
// decoded answer. body, when not nil, is sent as JSON. Errors are *Error
// for WebDriverAgent's own errors, and wrap ErrUnreachable when no HTTP
// answer came (or ctx's error when ctx ended).
func (c *Client) Do(ctx context.Context, method, path string, body any) (*Response, error) {
	op := method + " " + path
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("wda: %s: encoding the request: %w", op, err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, rd)
	if err != nil {
		return nil, fmt.Errorf("wda: %s: %w", op, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportErr(ctx, op, err)
	}
	defer resp.Body.Close()
	// Screenshots are megabytes: size the buffer once when the length is
	// known instead of growing it by copies.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(resp.ContentLength, 0), maxBody)+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, maxBody)); err != nil {
		return nil, c.transportErr(ctx, op, err)
	}
	return DecodeResponse(op, resp.StatusCode, buf.Bytes())
}

// transportErr tells a caller's cancellation from an unreachable server.
// A request that hit Options.Timeout is unreachable too: WebDriverAgent
// stopped answering.
func (c *Client) transportErr(ctx context.Context, op string, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("wda: %s: %w", op, context.Canceled)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("wda: %s at %s: %w: no answer within the deadline (%w)", op, c.base, ErrUnreachable, ctx.Err())
	}
	return fmt.Errorf("wda: %s at %s: %w: %w", op, c.base, ErrUnreachable, err)
}

// get and post decode a successful answer's value into out (when not nil).
func (c *Client) get(ctx context.Context, path string, out any) error {
	return decodeInto(c.Do(ctx, http.MethodGet, path, nil))(out)
}

func (c *Client) post(ctx context.Context, path string, body, out any) error {
	if body == nil {
		body = struct{}{}
	}
	return decodeInto(c.Do(ctx, http.MethodPost, path, body))(out)
}

func decodeInto(r *Response, err error) func(out any) error {
	return func(out any) error {
		if err != nil {
			return err
		}
		if out == nil || len(r.Value) == 0 {
			return nil
		}
		if err := json.Unmarshal(r.Value, out); err != nil {
			return fmt.Errorf("wda: %w: value %q: %v", ErrBadResponse, snippet(r.Value), err)
		}
		return nil
	}
}
