package wda

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Point is a screen position in points.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Tap taps a point. Builds before /wda/tap took an element id take
// /wda/tap/0 (no element: screen coordinates), which is tried when the
// first is unknown.
func (c *Client) Tap(ctx context.Context, p Point) error {
	err := c.spost(ctx, "/wda/tap", p, nil)
	if errors.Is(err, ErrUnknownCommand) {
		return c.spost(ctx, "/wda/tap/0", p, nil)
	}
	return err
}

// PointerAction is one step of a W3C pointer input source.
type PointerAction struct {
	Type     string   `json:"type"` // pointerMove, pointerDown, pointerUp, pause
	Duration *int64   `json:"duration,omitempty"`
	X        *float64 `json:"x,omitempty"`
	Y        *float64 `json:"y,omitempty"`
	Button   *int     `json:"button,omitempty"`
}

// Move is a pointerMove to p taking d.
func Move(p Point, d time.Duration) PointerAction {
	ms := d.Milliseconds()
	return PointerAction{Type: "pointerMove", Duration: &ms, X: &p.X, Y: &p.Y}
}

// Down presses the finger.
func Down() PointerAction { b := 0; return PointerAction{Type: "pointerDown", Button: &b} }

// Up lifts the finger.
func Up() PointerAction { b := 0; return PointerAction{Type: "pointerUp", Button: &b} }

// Pause holds still for d.
func Pause(d time.Duration) PointerAction {
	ms := d.Milliseconds()
	return PointerAction{Type: "pause", Duration: &ms}
}

// Touch performs one finger's W3C actions (POST /actions).
func (c *Client) Touch(ctx context.Context, steps ...PointerAction) error {
	return c.Fingers(ctx, steps)
}

// Fingers performs several fingers' W3C actions at once (POST /actions),
// one touch pointer source per finger: XCTest moves them together, tick by
// tick, so two fingers whose moves line up pinch.
func (c *Client) Fingers(ctx context.Context, fingers ...[]PointerAction) error {
	sources := make([]any, len(fingers))
	for i, steps := range fingers {
		sources[i] = map[string]any{
			"type": "pointer", "id": fmt.Sprintf("finger%d", i+1),
			"parameters": map[string]string{"pointerType": "touch"},
			"actions":    steps,
		}
	}
	return c.spost(ctx, "/actions", map[string]any{"actions": sources}, nil)
}

// Pinch puts two fingers down on either side of center on a horizontal
// line, from apart (points between them), and moves them to `to` apart
// over d: apart zooms in, together zooms out.
func (c *Client) Pinch(ctx context.Context, center Point, from, to float64, d time.Duration) error {
	finger := func(side float64) []PointerAction {
		at := func(span float64) Point { return Point{X: center.X + side*span/2, Y: center.Y} }
		return []PointerAction{Move(at(from), 0), Down(), Pause(50 * time.Millisecond), Move(at(to), d), Up()}
	}
	return c.Fingers(ctx, finger(-1), finger(1))
}

// Swipe drags a finger from one point to another over d.
func (c *Client) Swipe(ctx context.Context, from, to Point, d time.Duration) error {
	return c.Touch(ctx, Move(from, 0), Down(), Pause(50*time.Millisecond), Move(to, d), Up())
}

// LongPress holds a point for d.
func (c *Client) LongPress(ctx context.Context, p Point, d time.Duration) error {
	return c.Touch(ctx, Move(p, 0), Down(), Pause(d), Up())
}

// Drag holds the start point for hold (so the element lifts), then moves
// to the end over d and lets go.
func (c *Client) Drag(ctx context.Context, from, to Point, hold, d time.Duration) error {
	return c.Touch(ctx, Move(from, 0), Down(), Pause(hold), Move(to, d), Up())
}

// Keys types text into the focused element (POST /wda/keys). XCTest types
// any Unicode text; special keys are characters: "\n" return, "\b"
// delete, "\t" tab.
func (c *Client) Keys(ctx context.Context, text string) error {
	// WebDriverAgent joins the array; one character per entry is what
	// Appium sends and what every build accepts.
	chars := make([]string, 0, len(text))
	for _, r := range text {
		chars = append(chars, string(r))
	}
	return c.spost(ctx, "/wda/keys", map[string]any{"value": chars}, nil)
}

// Hardware buttons /wda/pressButton knows on iOS.
const (
	ButtonHome       = "home"
	ButtonVolumeUp   = "volumeUp"
	ButtonVolumeDown = "volumeDown"
)

// PressButton presses a hardware button.
func (c *Client) PressButton(ctx context.Context, name string) error {
	return c.spost(ctx, "/wda/pressButton", map[string]string{"name": name}, nil)
}

// Homescreen goes to the home screen.
func (c *Client) Homescreen(ctx context.Context) error {
	return c.post(ctx, "/wda/homescreen", nil, nil)
}

// Lock locks the screen.
func (c *Client) Lock(ctx context.Context) error {
	return c.spost(ctx, "/wda/lock", nil, nil)
}

// Unlock unlocks the screen (no passcode).
func (c *Client) Unlock(ctx context.Context) error {
	return c.spost(ctx, "/wda/unlock", nil, nil)
}

// Locked reports whether the screen is locked.
func (c *Client) Locked(ctx context.Context) (bool, error) {
	var b bool
	err := c.sget(ctx, "/wda/locked", &b)
	return b, err
}
