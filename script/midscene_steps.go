package script

import (
	"encoding/json"
	"strings"

	"gopkg.in/yaml.v3"
)

// Midscene's steps that are one action of the action space: the loader
// writes them as that action's generic step, so the runner runs them as
// any action (and a device whose space lacks the action fails the step
// when it runs, not the file).
const (
	AIClearInput  Kind = "aiClearInput"
	AIDragAndDrop Kind = "aiDragAndDrop"
	AIPinch       Kind = "aiPinch"
)

// kindKey is the step kind key names: as written, or in another case
// (Midscene's action-space forms: RunAdbShell, AiTap) when key is not an
// action of the space itself ("Tap" is the Tap action, "tap" the step).
func (l *loader) kindKey(key string) (string, bool) {
	if _, ok := aliases[key]; ok {
		return key, true
	}
	if l.opts.Action != nil {
		if known, _ := l.opts.Action(key, nil); known {
			return "", false
		}
	}
	for k := range aliases {
		if strings.EqualFold(k, key) {
			return k, true
		}
	}
	return "", false
}

// readMidsceneAction reads aiClearInput, aiDragAndDrop and aiPinch as the
// generic step of the action each is:
//
//	aiClearInput: <element>
//	aiDragAndDrop: {from: <element>, to: <element>}   (or from:, to: beside it)
//	aiPinch: <element>                               direction: in | out, distance, duration
func (c *stepCtx) readMidsceneAction() {
	l, st := c.l, c.st
	if c.main.Kind == yaml.MappingNode {
		c.inlineOptions(c.main)
	}
	params := map[string]any{}
	target := func(n *yaml.Node, what string) any {
		var v any
		_ = json.Unmarshal(l.element(n, what), &v)
		return v
	}
	var name string
	switch st.Kind {
	case AIClearInput:
		name = "ClearInput"
		if c.main.Kind != yaml.MappingNode && !isNull(c.main) {
			params["locate"] = target(c.main, st.Key)
		} else if n := c.opt("locate"); n != nil {
			params["locate"] = target(n, st.Key+".locate")
		}
	case AIDragAndDrop:
		name = "DragAndDrop"
		for _, end := range []string{"from", "to"} {
			n := c.opt(end)
			if n == nil {
				l.errorf(c.main, "%s: expected %s: the element to drag %s", st.Key, end, end)
				continue
			}
			params[end] = target(n, st.Key+"."+end)
		}
	case AIPinch:
		name = "Pinch"
		if c.main.Kind != yaml.MappingNode && !isNull(c.main) {
			params["locate"] = target(c.main, st.Key)
		} else if n := c.opt("locate"); n != nil {
			params["locate"] = target(n, st.Key+".locate")
		}
		if n := c.opt("direction"); n != nil {
			params["direction"] = l.str(n, st.Key+".direction")
		} else {
			l.errorf(c.main, "%s: expected direction: in (zoom out) or out (zoom in)", st.Key)
		}
		if n := c.opt("distance"); n != nil {
			params["distance"] = l.integer(n, st.Key+".distance")
		}
		if n := c.opt("duration"); n != nil {
			params["duration"] = l.millis(n, st.Key+".duration").Milliseconds()
		}
	}
	for k := range c.opts {
		if midsceneOptions[k] {
			c.used[k] = true
		}
	}
	st.Params, _ = json.Marshal(params)
	st.Kind, st.Key = Action, name
}
