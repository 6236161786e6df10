package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// MidsceneInteract is the body Midscene's preview sends to POST /interact:
// a pointer or key action at device coordinates.
type MidsceneInteract struct {
	ActionType          string   `json:"actionType,omitempty"`
	X                   *float64 `json:"x,omitempty"`
	Y                   *float64 `json:"y,omitempty"`
	EndX                *float64 `json:"endX,omitempty"`
	EndY                *float64 `json:"endY,omitempty"`
	Duration            *float64 `json:"duration,omitempty"`
	Repeat              *float64 `json:"repeat,omitempty"`
	Direction           string   `json:"direction,omitempty"`
	ScrollType          string   `json:"scrollType,omitempty"`
	Distance            *float64 `json:"distance,omitempty"`
	KeyName             string   `json:"keyName,omitempty"`
	Value               *string  `json:"value,omitempty"`
	Mode                string   `json:"mode,omitempty"`
	AutoDismissKeyboard *bool    `json:"autoDismissKeyboard,omitempty"`
}

// point is a locator at (x, y), or nil when either is missing.
func point(x, y *float64) map[string]any {
	if x == nil || y == nil {
		return nil
	}
	return map[string]any{"x": int(*x + 0.5), "y": int(*y + 0.5)}
}

// action is the action and params of the space m asks for.
func (m MidsceneInteract) action() (string, json.RawMessage, error) {
	p := map[string]any{}
	at := point(m.X, m.Y)
	name := m.ActionType
	need := func(ok bool, what string) error {
		if !ok {
			return errorf(http.StatusBadRequest, "%s needs %s", m.ActionType, what)
		}
		return nil
	}
	var err error
	switch strings.ToLower(m.ActionType) {
	case "tap", "doubleclick", "longpress":
		err = need(at != nil, "x and y")
		p["locate"] = at
		if strings.EqualFold(name, "doubleclick") {
			name = "DoubleTap"
		}
	case "rightclick", "hover":
		return "", nil, errorf(http.StatusNotFound, "%s needs a mouse; a phone has none: use Tap or LongPress", m.ActionType)
	case "swipe", "draganddrop":
		end := point(m.EndX, m.EndY)
		if err = need(at != nil, "x and y"); err == nil {
			err = need(end != nil, "endX and endY")
		}
		p["from"], p["to"] = at, end
	case "scroll":
		if m.Direction != "" {
			p["direction"] = m.Direction
		}
		if m.Distance != nil {
			p["distance"] = int(*m.Distance)
		}
		if at != nil {
			p["locate"] = at
		}
	case "pinch":
		err = need(at != nil, "x and y")
		p["locate"], p["direction"] = at, m.Direction
		if m.Distance != nil {
			p["distance"] = int(*m.Distance)
		}
		if m.Duration != nil {
			p["duration"] = int(*m.Duration)
		}
	case "keyboardpress":
		err = need(m.KeyName != "", "keyName")
		p["keyName"] = m.KeyName
		if at != nil {
			p["locate"] = at
		}
	case "input":
		if m.Value == nil {
			return "", nil, errorf(http.StatusBadRequest, "Input needs value")
		}
		p["value"] = *m.Value
		if at != nil {
			p["locate"] = at
		}
	}
	if err != nil {
		return "", nil, err
	}
	b, jerr := json.Marshal(p)
	if jerr != nil {
		return "", nil, fmt.Errorf("interact params: %w", jerr)
	}
	return name, b, nil
}
