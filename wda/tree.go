package wda

import (
	"context"
	"encoding/json"
	"fmt"
)

// Node is one element of WebDriverAgent's JSON source.
type Node struct {
	Type       string  `json:"type"` // without the XCUIElementType prefix
	Name       *string `json:"name"`
	Label      *string `json:"label"`
	Identifier *string `json:"rawIdentifier"`
	Rect       Rect    `json:"rect"`
	Enabled    Flag    `json:"isEnabled"`
	Visible    Flag    `json:"isVisible"`
	Focused    Flag    `json:"isFocused"` // builds from 2022 on
	Children   []*Node `json:"children"`
}

// Flag is a boolean WebDriverAgent writes as "1"/"0" or true/false.
type Flag bool

func (f *Flag) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"1"`, `true`, `1`, `"true"`:
		*f = true
	case `"0"`, `false`, `0`, `"false"`, `null`, `""`:
		*f = false
	default:
		return fmt.Errorf("flag %s: want \"1\", \"0\", true or false", b)
	}
	return nil
}

// Tree returns the JSON source as nodes.
func (c *Client) Tree(ctx context.Context) (*Node, error) {
	raw, err := c.SourceJSON(ctx)
	if err != nil {
		return nil, err
	}
	return ParseTree(raw)
}

// ParseTree reads WebDriverAgent's JSON source.
func ParseTree(raw []byte) (*Node, error) {
	var n Node
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, fmt.Errorf("wda: JSON source: %w: %v", ErrBadResponse, err)
	}
	return &n, nil
}

// Find returns the first node, depth first, for which match holds.
func (n *Node) Find(match func(*Node) bool) *Node {
	if n == nil {
		return nil
	}
	if match(n) {
		return n
	}
	for _, c := range n.Children {
		if f := c.Find(match); f != nil {
			return f
		}
	}
	return nil
}
