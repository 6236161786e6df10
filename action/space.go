package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apexagent/apex/device"
)

// Space is the set of actions available on one kind of device. It is
// immutable: With returns a new Space. Safe for concurrent use.
type Space struct {
	platform string // "any", "android", "ios"
	actions  []*Action
	index    map[string]int // normalised name -> position in actions
	aliases  map[string]int // normalised alias -> position; names win over aliases
}

var (
	common  = newSpace("any", Tap, DoubleTap, LongPress, Input, ClearInput, Scroll, Swipe, DragAndDrop, Pinch, KeyboardPress, Launch, Terminate, Sleep)
	android = newSpace("android").with(common.actions...).with(Back, Home, RecentApps, PullGesture).with(settings...)
	ios     = newSpace("ios").with(common.actions...).with(Back, Home, AppSwitcher).with(settings...)
)

// Common returns the actions every platform has: Tap, DoubleTap, LongPress,
// Input, ClearInput, Scroll, Swipe, DragAndDrop, Pinch, KeyboardPress,
// Launch, Terminate and Sleep.
func Common() *Space { return common }

// ForPlatform returns the actions of a platform: Common plus, on Android,
// Back, Home, RecentApps and PullGesture, and on iOS, Back, Home and AppSwitcher.
// An unknown platform gets Common.
func ForPlatform(p device.Platform) *Space {
	switch p {
	case device.Android:
		return android
	case device.IOS:
		return ios
	}
	return common
}

func newSpace(platform string, as ...*Action) *Space {
	return (&Space{platform: platform}).with(as...)
}

// With returns a new space with more actions. An action whose name matches
// one already there (ignoring case) replaces it in place, so a plugin can
// override a built-in.
func (s *Space) With(as ...*Action) *Space { return s.with(as...) }

func (s *Space) with(as ...*Action) *Space {
	n := &Space{platform: s.platform, actions: append([]*Action(nil), s.actions...), index: make(map[string]int, len(s.actions)+len(as))}
	for k, v := range s.index {
		n.index[k] = v
	}
	for _, a := range as {
		key := normName(a.name)
		if i, ok := n.index[key]; ok {
			n.actions[i] = a
			continue
		}
		n.index[key] = len(n.actions)
		n.actions = append(n.actions, a)
	}
	n.aliases = map[string]int{}
	for i, a := range n.actions {
		for _, alias := range a.aliases {
			n.aliases[normName(alias)] = i
		}
	}
	return n
}

// Platform names the platform the space is for: "android", "ios", or "any".
func (s *Space) Platform() string { return s.platform }

// Actions lists the actions in a stable order: common ones first.
func (s *Space) Actions() []*Action { return append([]*Action(nil), s.actions...) }

// Lookup finds an action by name or alias, ignoring case, spaces, "-" and
// "_": "tap", "double_tap", "Keyboard Press" and "AndroidBackButton" all
// work.
func (s *Space) Lookup(name string) (*Action, bool) {
	key := normName(name)
	i, ok := s.index[key]
	if !ok {
		i, ok = s.aliases[key]
	}
	if !ok {
		return nil, false
	}
	return s.actions[i], true
}

// ErrUnknownAction matches (with errors.Is) the error of Find and Run for a
// name the space does not have.
var ErrUnknownAction = errors.New("unknown action")

// Find is Lookup with an error a model or a user can act on: it lists the
// actions this space has.
func (s *Space) Find(name string) (*Action, error) {
	if a, ok := s.Lookup(name); ok {
		return a, nil
	}
	return nil, fmt.Errorf("%w %q on %s: use one of %s", ErrUnknownAction, name, s.deviceWord(), strings.Join(s.Names(), ", "))
}

// Run finds the named action and runs it with raw JSON params.
func (s *Space) Run(ctx context.Context, env *Env, name string, raw json.RawMessage) error {
	a, err := s.Find(name)
	if err != nil {
		return err
	}
	return a.Run(ctx, env, raw)
}

func (s *Space) deviceWord() string {
	if s.platform == "any" {
		return "this device"
	}
	return "this " + s.platform + " device"
}

// Names lists the action names, in order.
func (s *Space) Names() []string {
	names := make([]string, len(s.actions))
	for i, a := range s.actions {
		names[i] = a.name
	}
	return names
}

// normName is how names compare: without spaces, dashes and underscores,
// in lower case.
func normName(name string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '_' {
			return -1
		}
		return r
	}, strings.TrimSpace(name)))
}

// Describe is the text that tells a model which actions exist here: one
// line per action (its signature and what it does), then a line per
// described param.
func (s *Space) Describe() string { return s.describe(true) }

// Brief is Describe without the lines per param: the signatures and what
// each action does, for a prompt that lists every action in a tight token
// budget (a planner's).
func (s *Space) Brief() string { return s.describe(false) }

func (s *Space) describe(params bool) string {
	var b strings.Builder
	b.WriteString("Actions on ")
	b.WriteString(s.deviceWord())
	b.WriteString(". Params marked ? are optional; = gives the default.\n")
	b.WriteString(`A locator param is found on screen: write a short description of the element ("the Login button"), or an object with any of prompt, text, id (scene id like e7, or resource id), desc, type, index (0-based, among several matches), or x and y (a point in device pixels).`)
	b.WriteString("\n\n")
	var settings []string
	for _, a := range s.actions {
		if !params && a.IsSetting() {
			// Settings are many and self-explaining: one line of
			// signatures keeps every planner prompt short.
			settings = append(settings, a.Signature())
			continue
		}
		b.WriteString(a.ModelText())
		b.WriteByte('\n')
		if !params {
			continue
		}
		for _, f := range a.plan.fields {
			if f.desc == "" {
				continue
			}
			b.WriteString("    ")
			b.WriteString(f.name)
			b.WriteString(": ")
			b.WriteString(f.desc)
			b.WriteByte('\n')
		}
	}
	if len(settings) > 0 {
		b.WriteString("Device settings (each answers the value read back): ")
		b.WriteString(strings.Join(settings, "; "))
		b.WriteByte('\n')
	}
	return b.String()
}

// Tool is an action as a model tool definition (OpenAI function, Anthropic
// tool, MCP tool).
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Tools lists the actions as tool definitions, in order.
func (s *Space) Tools() []Tool {
	tools := make([]Tool, len(s.actions))
	for i, a := range s.actions {
		tools[i] = Tool{Name: a.name, Description: a.description, InputSchema: a.SchemaJSON()}
	}
	return tools
}
