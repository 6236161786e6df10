package wda

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Source returns the UI hierarchy of the active app as XCUITest XML.
func (c *Client) Source(ctx context.Context) ([]byte, error) {
	var s string
	if err := c.sget(ctx, "/source", &s); err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// SourceJSON returns the UI hierarchy as WebDriverAgent's JSON tree
// ({"type", "label", "rect", "children", …}).
func (c *Client) SourceJSON(ctx context.Context) (json.RawMessage, error) {
	r, err := c.InSession(ctx, "GET", "/source?format=json", nil)
	if err != nil {
		return nil, err
	}
	// Some builds return the tree as a JSON string.
	var s string
	if json.Unmarshal(r.Value, &s) == nil {
		if !json.Valid([]byte(s)) {
			return nil, fmt.Errorf("wda: GET /source?format=json: %w: a string that is not JSON", ErrBadResponse)
		}
		return json.RawMessage(s), nil
	}
	return r.Value, nil
}

// Screenshot returns the screen as PNG bytes, in pixels.
func (c *Client) Screenshot(ctx context.Context) ([]byte, error) {
	var s string
	if err := c.get(ctx, "/screenshot", &s); err != nil {
		return nil, err
	}
	// Old builds wrap lines of the base64 text.
	s = strings.NewReplacer("\n", "", "\r", "").Replace(s)
	png, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("wda: GET /screenshot: %w: base64: %v", ErrBadResponse, err)
	}
	return png, nil
}

// Size is a width and height in points.
type Size struct {
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// WindowSize is the size of the screen in points.
func (c *Client) WindowSize(ctx context.Context) (Size, error) {
	var s Size
	err := c.sget(ctx, "/window/size", &s)
	if err == nil && (s.Width <= 0 || s.Height <= 0) {
		err = fmt.Errorf("wda: window size %vx%v: %w", s.Width, s.Height, ErrBadResponse)
	}
	return s, err
}

// Screen describes the display: its scale is pixels per point (3 on most
// current iPhones).
type Screen struct {
	Scale         float64 `json:"scale"`
	StatusBarSize Size    `json:"statusBarSize"`
	ScreenSize    Size    `json:"screenSize"` // newer builds only
}

// Screen returns /wda/screen.
func (c *Client) Screen(ctx context.Context) (Screen, error) {
	var s Screen
	err := c.sget(ctx, "/wda/screen", &s)
	if err == nil && s.Scale <= 0 {
		err = fmt.Errorf("wda: screen scale %v: %w", s.Scale, ErrBadResponse)
	}
	return s, err
}
