package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/engine"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// actionTool is one tool derived from an action, present in one or more of
// the server's spaces.
type actionTool struct {
	name      string // the tool name: the action's name in snake_case
	action    string // the action's name
	platforms []string
}

// builtinTools are the tool names an action may not take.
var builtinTools = []string{"device_list", "device_open", "device_close", "device_screenshot",
	"observe", "scene_diff", "act", "assert", "query", "app_install", "shell"}

// ToolName is the MCP tool name of an action: its name in snake_case
// ("DoubleTap" is double_tap).
func ToolName(actionName string) string {
	var b strings.Builder
	rs := []rune(actionName)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))) && rs[i-1] != '_' {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// addActionTools adds one tool per action of every space, in the spaces'
// order. The tool's description and schema come from the action's
// declaration, plus the device param every tool takes.
func (s *Server) addActionTools() error {
	byName := map[string]int{}
	var defs []*sdk.Tool
	for _, sp := range s.spaces {
		for _, a := range sp.Actions() {
			name := ToolName(a.Name())
			if slices.Contains(builtinTools, name) {
				return fmt.Errorf("mcp: action %s would be tool %s, which is a built-in tool: rename the action", a.Name(), name)
			}
			if i, ok := byName[name]; ok {
				if !slices.Contains(s.tools[i].platforms, sp.Platform()) {
					s.tools[i].platforms = append(s.tools[i].platforms, sp.Platform())
				}
				continue
			}
			schema, err := toolSchema(a)
			if err != nil {
				return err
			}
			byName[name] = len(s.tools)
			s.tools = append(s.tools, actionTool{name: name, action: a.Name(), platforms: []string{sp.Platform()}})
			defs = append(defs, &sdk.Tool{Name: name, InputSchema: schema})
		}
	}
	for i, def := range defs {
		at := s.tools[i]
		a, _ := s.spaceNamed(at.platforms[0]).Lookup(at.action)
		def.Description = toolDescription(a, at.platforms, len(s.spaces))
		s.srv.AddTool(def, s.runAction(at))
	}
	return nil
}

func (s *Server) spaceNamed(platform string) *action.Space {
	for _, sp := range s.spaces {
		if sp.Platform() == platform {
			return sp
		}
	}
	return s.spaces[0]
}

func toolDescription(a *action.Action, platforms []string, spaces int) string {
	var b strings.Builder
	b.WriteString(a.Description())
	fmt.Fprintf(&b, "\nAction %s.", a.Signature())
	if len(platforms) < spaces {
		fmt.Fprintf(&b, " Only on %s devices.", strings.Join(platforms, " and "))
	}
	if len(a.Locators()) > 0 {
		b.WriteString(" Elements can be named by an id from the last observe (\"e7\"), their text, or a short description.")
	}
	return b.String()
}

// toolSchema is the action's params schema with the device param added.
func toolSchema(a *action.Action) (*jsonschema.Schema, error) {
	sc := a.Schema()
	if sc == nil {
		sc = &jsonschema.Schema{Type: "object"}
	}
	if sc.Type != "object" {
		return nil, fmt.Errorf("mcp: action %s: params schema is %q, not an object", a.Name(), sc.Type)
	}
	if _, ok := sc.Properties["device"]; ok {
		return nil, fmt.Errorf("mcp: action %s has a param named device, which every tool uses for the device id: rename it", a.Name())
	}
	props := map[string]*jsonschema.Schema{"device": {Type: "string", Description: "the device id from device_open"}}
	for k, v := range sc.Properties {
		props[k] = v
	}
	sc.Properties = props
	sc.PropertyOrder = append([]string{"device"}, sc.PropertyOrder...)
	sc.Required = append([]string{"device"}, sc.Required...)
	return sc, nil
}

// toolNames lists the tools of the actions in sp.
func (s *Server) toolNames(sp *action.Space) []string {
	var names []string
	for _, a := range sp.Actions() {
		names = append(names, ToolName(a.Name()))
	}
	return names
}

// runAction is the handler of one derived tool: it splits off the device,
// finds the action in that device's space, and runs it with the rest of the
// arguments as the action's params.
func (s *Server) runAction(at actionTool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		dev, raw, err := splitDevice(req.Params.Arguments)
		if err != nil {
			return failed(fmt.Errorf("%s: %w", at.name, err)), nil
		}
		l, err := s.acquire(req.Session, dev)
		if err != nil {
			return failed(err), nil
		}
		defer s.release(l)
		a, ok := l.space.Lookup(at.action)
		if !ok {
			return failed(fmt.Errorf("%s is not an action of %s devices (%s is %s); its actions: %s", at.name, l.target.Platform, l.target.ID, l.target.Platform, strings.Join(s.toolNames(l.space), ", "))), nil
		}
		params, err := a.Decode(raw)
		if err != nil {
			return failed(fmt.Errorf("%s on %s: %w", at.name, l.target.ID, err)), nil
		}
		call := action.Call{Action: a, Params: params}
		written, err := pinObserved(ctx, l, call)
		if err != nil {
			return failed(fmt.Errorf("%s on %s: %w", at.name, l.target.ID, err)), nil
		}
		rec := l.sess.Run(ctx, engine.Step{Call: call, Name: at.name})
		if rec.Err != nil {
			err := rec.Err
			// The error may list elements by id; those are the screen's
			// now, which ids in later calls do not refer to until the
			// next observe.
			if rec.Before != nil && (l.scene == nil || l.scene.Fingerprint() != rec.Before.FP) && errors.Is(err, action.ErrNotFound) {
				err = fmt.Errorf("%w (ids here are of the screen now: call observe before using them)", err)
			}
			return failed(fmt.Errorf("%s on %s: %w", at.name, l.target.ID, err)), nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s done on %s", at.name, l.target.ID)
		var found []string
		for _, ref := range rec.Call.Locators() {
			if ref.Locator.Resolved() {
				found = append(found, targetText(written[ref.Name], ref.Locator.Target()))
			}
		}
		if len(found) > 0 {
			fmt.Fprintf(&b, ": %s", strings.Join(found, "; "))
		}
		if rec.Result != nil {
			answer, _ := json.Marshal(rec.Result)
			fmt.Fprintf(&b, "; the device reports %s", answer)
		}
		b.WriteString(". Call observe (or scene_diff) to see the screen now.\n")
		return text(b.String()), nil
	}
}

// splitDevice splits a tool's arguments into the device and the action's
// params (the rest, as a JSON object).
func splitDevice(raw json.RawMessage) (string, json.RawMessage, error) {
	args := map[string]json.RawMessage{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", nil, fmt.Errorf("arguments must be a JSON object: %w", err)
		}
	}
	var dev string
	if d, ok := args["device"]; ok {
		if err := json.Unmarshal(d, &dev); err != nil {
			return "", nil, fmt.Errorf("device must be a string (the id from device_open)")
		}
	}
	delete(args, "device")
	params, err := json.Marshal(args)
	return dev, params, err
}

// failed is a tool result reporting err to the model, which can correct
// itself; protocol errors are for broken requests only.
func failed(err error) *sdk.CallToolResult {
	r := &sdk.CallToolResult{}
	r.SetError(err)
	return r
}
