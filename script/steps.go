package script

import (
	"encoding/json"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// stepCtx is a step being read: its main key and value and its options.
type stepCtx struct {
	l    *loader
	st   *Step
	node *yaml.Node
	main *yaml.Node // value of the kind key
	opts map[string]pair
	used map[string]bool
}

// opt returns an option's value node and marks it as understood.
func (c *stepCtx) opt(name string) *yaml.Node {
	p, ok := c.opts[name]
	if !ok {
		return nil
	}
	c.used[name] = true
	return p.val
}

func (l *loader) step(n *yaml.Node) (Step, bool) {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		// "- back" or "- home": a step with no value.
		if k, ok := aliases[n.Value]; ok && (k == Back || k == Home) {
			return Step{Kind: k, Key: n.Value, Pos: l.pos(n)}, true
		}
	}
	ps := l.pairs(n, "step")
	if ps == nil {
		return Step{}, false
	}
	var kindPair *pair
	opts := map[string]pair{}
	for i := range ps {
		p := ps[i]
		if k, ok := l.kindKey(p.key.Value); ok {
			ps[i].key.Value = k
			if kindPair != nil {
				l.errorf(p.key, "one step has two kinds, %s and %s: put each on its own list item (- %s: …)", kindPair.key.Value, p.key.Value, p.key.Value)
				return Step{}, false
			}
			kindPair = &ps[i]
			continue
		}
		opts[p.key.Value] = p
	}
	st := &Step{Pos: l.pos(n)}
	if kindPair == nil {
		return l.genericStep(n, ps)
	}
	st.Key = kindPair.key.Value
	st.Kind = aliases[st.Key]
	st.Pos = l.pos(kindPair.key)
	c := &stepCtx{l: l, st: st, node: n, main: kindPair.val, opts: opts, used: map[string]bool{}}
	before := len(l.errs)
	c.read()
	for name, p := range opts {
		if c.used[name] || (st.Kind.IsAI() && midsceneOptions[name]) {
			continue
		}
		l.errorf(p.key, "unknown option %q for %s: expected %s", name, st.Key, c.allowed())
	}
	st.Refs = st.refers()
	switch st.Kind {
	case Read:
		l.vars.store(st.As)
	case AIQuery, AIBoolean, AINumber, AIString, AIAsk:
		if validEnvName(st.Name) {
			l.vars.store(st.Name)
		}
	}
	return *st, len(l.errs) == before
}

// genericStep reads "- actionName: {params}" for an action of the action space.
func (l *loader) genericStep(n *yaml.Node, ps []pair) (Step, bool) {
	if len(ps) != 1 {
		keys := make([]string, len(ps))
		for i, p := range ps {
			keys[i] = p.key.Value
		}
		l.errorf(n, "step has no known kind among its keys (%s): expected one of %s, or an action name", strings.Join(keys, ", "), strings.Join(stepKeys(), ", "))
		return Step{}, false
	}
	p := ps[0]
	if l.opts.Action == nil {
		l.errorf(p.key, "unknown step %q: expected one of %s", p.key.Value, strings.Join(stepKeys(), ", "))
		return Step{}, false
	}
	if known, _ := l.opts.Action(p.key.Value, nil); !known {
		l.errorf(p.key, "unknown step %q: expected one of %s, or an action name (apex do --list lists them)", p.key.Value, strings.Join(stepKeys(), ", "))
		return Step{}, false
	}
	params := l.toAny(p.val)
	if params == nil {
		params = map[string]any{}
	}
	_, isMap := params.(map[string]any)
	if !isMap && p.val.Kind != yaml.ScalarNode {
		l.errorf(p.val, "%s: expected the action's params as a mapping (or its one value: Launch: com.apex.shop), got %s", p.key.Value, describe(p.val))
		return Step{}, false
	}
	raw, _ := json.Marshal(params)
	if _, err := l.opts.Action(p.key.Value, raw); err != nil {
		l.errorf(p.val, "%s: %v", p.key.Value, err)
		return Step{}, false
	}
	st := Step{Kind: Action, Key: p.key.Value, Pos: l.pos(p.key), Params: raw}
	st.Refs = st.refers()
	return st, true
}

// allowed lists the options a kind understands, for error messages.
func (c *stepCtx) allowed() string {
	names := stepOptions[c.st.Kind]
	if len(names) == 0 {
		return "no options"
	}
	s := append([]string(nil), names...)
	sort.Strings(s)
	return strings.Join(s, ", ")
}

var (
	locOpts   = []string{"locate", "optional", "timeout"}
	queryOpts = []string{"name", "as", "domIncluded", "screenshotIncluded"}
)

var stepOptions = map[Kind][]string{
	AITap: locOpts, AIDoubleClick: locOpts, AIHover: locOpts, AIRightClick: locOpts,
	AILongPress:     append([]string{"duration"}, locOpts...),
	AIInput:         append([]string{"value", "mode"}, locOpts...),
	AIScroll:        {"locate", "direction", "scrollType", "distance"},
	AIKeyboardPress: {"locate", "keyName"},
	AIAssert:        {"errorMessage", "name"},
	AIQuery:         queryOpts, AIBoolean: queryOpts, AINumber: queryOpts, AIString: queryOpts, AIAsk: queryOpts,
	AIWaitFor: {"timeout"}, AILocate: {"name"}, LogScreenshot: {"content"}, JavaScript: {"name"},
	Tap: {"optional", "timeout"}, DoubleTap: {"optional", "timeout"},
	LongPress:  {"optional", "timeout", "duration"},
	Input:      {"value", "mode", "optional", "timeout"},
	AssertStep: {"timeout", "errorMessage"}, WaitFor: {"timeout", "gone"},
	ScrollUntilVisible: {"direction", "maxSwipes", "timeout"},
	SwipeStep:          {"duration"},
	RunAdbShell:        {"name", "timeout"},
	AIClearInput:       {"locate"},
	AIDragAndDrop:      {"from", "to"},
	AIPinch:            {"locate", "direction", "distance", "duration"},
	Read:               {"locate", "as", "timeout"},
	If:                 {"flow", "else"},
	Repeat:             {"flow"},
	RunFlow:            {"with"},
}

func (c *stepCtx) read() {
	l, st, main := c.l, c.st, c.main
	what := st.Key
	switch st.Kind {
	case AIAct:
		st.Prompt = l.text(main, what)
	case AITap, AIDoubleClick, AIHover, AIRightClick, AILongPress:
		c.readTarget(true)
		c.readLocOpts()
	case AIInput:
		c.readInput(true)
	case AIScroll:
		if loc := c.opt("locate"); loc != nil {
			st.Target = l.element(loc, what+".locate")
		} else if !isNull(main) {
			if main.Kind == yaml.MappingNode {
				// Midscene's older form: aiScroll: {direction, scrollType, distance}.
				c.inlineOptions(main)
			} else {
				st.Target = l.element(main, what)
			}
		}
		c.readScroll()
	case AIKeyboardPress:
		if kn := c.opt("keyName"); kn != nil {
			st.Value = l.text(kn, what+".keyName")
			if !isNull(main) {
				st.Target = l.element(main, what)
			}
		} else {
			st.Value = l.text(main, what)
			if loc := c.opt("locate"); loc != nil {
				st.Target = l.element(loc, what+".locate")
			}
		}
	case AIAssert:
		st.Prompt = l.text(main, what)
		if n := c.opt("errorMessage"); n != nil {
			st.ErrorMessage = l.text(n, what+".errorMessage")
		}
		if n := c.opt("name"); n != nil {
			st.Name = l.str(n, what+".name")
		}
	case AIQuery, AIBoolean, AINumber, AIString, AIAsk, AILocate, AIWaitFor:
		if main.Kind == yaml.MappingNode {
			// Older form: aiQuery: {prompt, name} / aiWaitFor: {prompt, timeout}.
			c.inlineOptions(main)
			if p := c.opt("prompt"); p != nil {
				st.Prompt = l.text(p, what+".prompt")
			} else {
				l.errorf(main, "%s: expected prompt: inside the mapping", what)
			}
		} else {
			st.Prompt = l.text(main, what)
		}
		if n := c.opt("name"); n != nil {
			st.Name = l.str(n, what+".name")
		}
		if n := c.opt("as"); n != nil {
			if st.Name != "" {
				l.errorf(n, "%s: give name: or as:, not both", what)
			}
			st.Name = l.valueName(n, what+".as")
		}
		if n := c.opt("timeout"); n != nil && st.Kind == AIWaitFor {
			st.Timeout = l.millis(n, what+".timeout")
		}
		c.opt("domIncluded")
		c.opt("screenshotIncluded")
	case Sleep:
		st.Duration = l.millis(main, what)
	case RunAdbShell:
		st.Value = l.text(main, what)
		if n := c.opt("name"); n != nil {
			st.Name = l.str(n, what+".name")
		}
		if n := c.opt("timeout"); n != nil {
			st.Timeout = l.millis(n, what+".timeout")
		}
	case AIClearInput, AIDragAndDrop, AIPinch:
		c.readMidsceneAction()
	case RunWdaRequest:
		c.readWda()
		if n := c.opt("timeout"); n != nil {
			st.Timeout = l.millis(n, what+".timeout")
		}
	case LogScreenshot:
		st.Prompt = l.optText(main, what)
		if n := c.opt("content"); n != nil {
			st.Value = l.optText(n, what+".content")
		}
	case JavaScript:
		st.Value = l.text(main, what)
		if n := c.opt("name"); n != nil {
			st.Name = l.str(n, what+".name")
		}
	case Tap, DoubleTap, LongPress, WaitFor:
		c.readTarget(false)
		c.readLocOpts()
		if n := c.opt("gone"); n != nil && st.Kind == WaitFor && l.boolean(n, what+".gone") {
			st.Mode = "gone"
		}
	case Input:
		c.readInput(false)
	case AssertStep:
		c.readAssert()
	case Launch, Terminate:
		st.Value = l.text(main, what)
	case Back, Home:
		if !isNull(main) && !(main.Kind == yaml.ScalarNode && main.Value == "true") {
			l.errorf(main, "%s takes no value: write - %s", what, what)
		}
	case PressKey:
		st.Value = l.text(main, what)
	case SwipeStep:
		c.readSwipe()
	case Read:
		c.readRead()
	case RunFlow:
		c.readRunFlow()
	case If:
		c.readIf()
	case Repeat:
		c.readRepeat()
	case ScrollUntilVisible:
		st.Target = l.element(main, what)
		st.Scroll = &Scroll{Direction: "down", Type: "once", MaxSwipes: 10}
		if n := c.opt("direction"); n != nil {
			st.Scroll.Direction = c.direction(n)
		}
		if n := c.opt("maxSwipes"); n != nil {
			st.Scroll.MaxSwipes = l.integer(n, what+".maxSwipes")
			if st.Scroll.MaxSwipes < 1 || st.Scroll.MaxSwipes > 100 {
				l.errorf(n, "%s.maxSwipes: expected 1 to 100, got %d", what, st.Scroll.MaxSwipes)
			}
		}
		if n := c.opt("timeout"); n != nil {
			st.Timeout = l.millis(n, what+".timeout")
		}
	}
}

// inlineOptions treats the keys of a mapping main value as options.
func (c *stepCtx) inlineOptions(m *yaml.Node) {
	for _, p := range c.l.pairs(m, c.st.Key) {
		if _, dup := c.opts[p.key.Value]; dup {
			c.l.errorf(p.key, "%s: option %q given twice", c.st.Key, p.key.Value)
			continue
		}
		c.opts[p.key.Value] = p
	}
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }
