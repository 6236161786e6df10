package wda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Status is WebDriverAgent's /status answer.
type Status struct {
	Ready   bool   `json:"ready"`
	Message string `json:"message"`
	State   string `json:"state"`
	Device  string `json:"device"` // "iphone", "ipad" (newer builds)
	OS      struct {
		Name       string `json:"name"`
		Version    string `json:"version"`
		SDKVersion string `json:"sdkVersion"`
	} `json:"os"`
	IOS struct {
		IP               string `json:"ip"`
		SimulatorVersion string `json:"simulatorVersion"`
	} `json:"ios"`
	Build struct {
		Time                    string `json:"time"`
		ProductBundleIdentifier string `json:"productBundleIdentifier"`
		Version                 string `json:"version"`
	} `json:"build"`
	// SessionID is the current session, if WebDriverAgent has one.
	SessionID string `json:"-"`
}

// Status asks WebDriverAgent whether it is up. Builds before the W3C
// switch leave out "ready"; an answer at all means ready for them.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	r, err := c.Do(ctx, http.MethodGet, "/status", nil)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	var st Status
	if err := json.Unmarshal(r.Value, &st); err != nil {
		return nil, fmt.Errorf("wda: GET /status: %w: %v", ErrBadResponse, err)
	}
	if json.Unmarshal(r.Value, &raw) == nil {
		if _, ok := raw["ready"]; !ok {
			st.Ready = true
		}
	}
	st.SessionID = r.SessionID
	return &st, nil
}

// Session returns the current session id, creating a session if there is
// none.
func (c *Client) Session(ctx context.Context) (string, error) {
	c.mu.Lock()
	sid := c.sid
	c.mu.Unlock()
	if sid != "" {
		return sid, nil
	}
	return c.newSession(ctx, "")
}

// newSession creates a session unless another goroutine already replaced
// stale (the id that failed).
func (c *Client) newSession(ctx context.Context, stale string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sid != "" && c.sid != stale {
		return c.sid, nil
	}
	caps := c.opts.Capabilities
	if caps == nil {
		caps = map[string]any{}
	}
	// W3C shape for current builds, desiredCapabilities for old ones.
	body := map[string]any{
		"capabilities":        map[string]any{"alwaysMatch": caps, "firstMatch": []any{map[string]any{}}},
		"desiredCapabilities": caps,
	}
	r, err := c.Do(ctx, http.MethodPost, "/session", body)
	if err != nil {
		return "", err
	}
	var v struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(r.Value, &v)
	sid := v.SessionID
	if sid == "" {
		sid = r.SessionID
	}
	if sid == "" {
		return "", fmt.Errorf("wda: POST /session: %w: no session id in %q", ErrBadResponse, snippet(r.Value))
	}
	c.sid = sid
	c.created++
	c.log.Debug("wda session created", "url", c.base.String(), "session", sid, "count", c.created)
	return sid, nil
}

// SessionsCreated counts the sessions this client has created.
func (c *Client) SessionsCreated() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.created
}

// DeleteSession ends the current session, if any.
func (c *Client) DeleteSession(ctx context.Context) error {
	c.mu.Lock()
	sid := c.sid
	c.sid = ""
	c.mu.Unlock()
	if sid == "" {
		return nil
	}
	_, err := c.Do(ctx, http.MethodDelete, "/session/"+sid, nil)
	if errors.Is(err, ErrInvalidSession) {
		return nil
	}
	return err
}

// InSession sends a request to path under the current session
// ("/session/<id>"+path). When WebDriverAgent says the session does not
// exist (it restarted), a new session is created and the request sent once
// more.
func (c *Client) InSession(ctx context.Context, method, path string, body any) (*Response, error) {
	sid, err := c.Session(ctx)
	if err != nil {
		return nil, err
	}
	r, err := c.Do(ctx, method, "/session/"+sid+path, body)
	if !errors.Is(err, ErrInvalidSession) {
		return r, err
	}
	c.log.Info("wda session lost; creating a new one", "url", c.base.String(), "session", sid)
	nsid, nerr := c.newSession(ctx, sid)
	if nerr != nil {
		return nil, fmt.Errorf("%w (recreating the session: %w)", err, nerr)
	}
	return c.Do(ctx, method, "/session/"+nsid+path, body)
}

func (c *Client) sget(ctx context.Context, path string, out any) error {
	return decodeInto(c.InSession(ctx, http.MethodGet, path, nil))(out)
}

func (c *Client) spost(ctx context.Context, path string, body, out any) error {
	if body == nil {
		body = struct{}{}
	}
	return decodeInto(c.InSession(ctx, http.MethodPost, path, body))(out)
}

// DeviceInfo is /wda/device/info: the phone's name and identity.
type DeviceInfo struct {
	Name   string `json:"name"`  // "John's iPhone", or the simulator's model
	Model  string `json:"model"` // "iPhone", "iPad"
	UUID   string `json:"uuid"`  // identifierForVendor
	Locale string `json:"currentLocale"`
	TZ     string `json:"timeZone"`
}

// DeviceInfo asks WebDriverAgent about the phone (builds from 2019 on).
func (c *Client) DeviceInfo(ctx context.Context) (DeviceInfo, error) {
	var d DeviceInfo
	err := c.sget(ctx, "/wda/device/info", &d)
	return d, err
}
