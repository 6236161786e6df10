package wda

import (
	"context"
	"encoding/json"
	"fmt"
)

// Strategies of element lookup.
const (
	ByAccessibilityID = "accessibility id"
	ByPredicate       = "predicate string"
	ByClassChain      = "class chain"
	ByClassName       = "class name"
	ByXPath           = "xpath"
)

// Element is a reference to an element of the current session.
type Element struct {
	ID string
	c  *Client
}

func (e *elementRef) id() string {
	if e.W3C != "" {
		return e.W3C
	}
	return e.Legacy
}

type elementRef struct {
	W3C    string `json:"element-6066-11e4-a52e-4f735466cecf"`
	Legacy string `json:"ELEMENT"`
}

// FindElements returns the elements matching value under strategy (see
// the By constants); none is an empty list, not an error.
func (c *Client) FindElements(ctx context.Context, strategy, value string) ([]Element, error) {
	var refs []elementRef
	if err := c.spost(ctx, "/elements", map[string]string{"using": strategy, "value": value}, &refs); err != nil {
		return nil, err
	}
	els := make([]Element, 0, len(refs))
	for _, r := range refs {
		if r.id() == "" {
			return nil, fmt.Errorf("wda: POST /elements: %w: element without an id", ErrBadResponse)
		}
		els = append(els, Element{ID: r.id(), c: c})
	}
	return els, nil
}

// FindElement returns the first element matching value; none is an error
// matching ErrNoSuchElement.
func (c *Client) FindElement(ctx context.Context, strategy, value string) (Element, error) {
	var r elementRef
	if err := c.spost(ctx, "/element", map[string]string{"using": strategy, "value": value}, &r); err != nil {
		return Element{}, err
	}
	if r.id() == "" {
		return Element{}, fmt.Errorf("wda: POST /element: %w: element without an id", ErrBadResponse)
	}
	return Element{ID: r.id(), c: c}, nil
}

// Rect is an element's frame in points.
type Rect struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// Rect returns the element's frame.
func (e Element) Rect(ctx context.Context) (Rect, error) {
	var r Rect
	err := e.c.sget(ctx, "/element/"+e.ID+"/rect", &r)
	return r, err
}

// Click taps the element.
func (e Element) Click(ctx context.Context) error {
	return e.c.spost(ctx, "/element/"+e.ID+"/click", nil, nil)
}

// Text returns the element's text (label or value).
func (e Element) Text(ctx context.Context) (string, error) {
	var s string
	err := e.c.sget(ctx, "/element/"+e.ID+"/text", &s)
	return s, err
}

// Attribute returns one attribute ("name", "label", "value", "type",
// "visible", …) as WebDriverAgent gives it; null is "".
func (e Element) Attribute(ctx context.Context, name string) (string, error) {
	var v json.RawMessage
	if err := e.c.sget(ctx, "/element/"+e.ID+"/attribute/"+name, &v); err != nil {
		return "", err
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, nil
	}
	if string(v) == "null" {
		return "", nil
	}
	return string(v), nil
}
