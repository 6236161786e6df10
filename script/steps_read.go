package script

import (
	"encoding/json"
	"strings"

	"gopkg.in/yaml.v3"
)

// readTarget reads the element of a tap-like step: the main value, or
// Midscene's locate: option when the main value is empty.
func (c *stepCtx) readTarget(allowLocate bool) {
	l, st := c.l, c.st
	if allowLocate {
		if loc := c.opt("locate"); loc != nil {
			st.Target = l.element(loc, st.Key+".locate")
			return
		}
	}
	if c.main.Kind == yaml.MappingNode && allowLocate {
		if _, ok := mappingKey(c.main, "locate"); ok {
			c.inlineOptions(c.main)
			st.Target = l.element(c.opt("locate"), st.Key+".locate")
			return
		}
	}
	st.Target = l.element(c.main, st.Key)
}

func mappingKey(n *yaml.Node, key string) (*yaml.Node, bool) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1], true
		}
	}
	return nil, false
}

func (c *stepCtx) readLocOpts() {
	l, st := c.l, c.st
	if n := c.opt("optional"); n != nil {
		st.Optional = l.boolean(n, st.Key+".optional")
	}
	if n := c.opt("timeout"); n != nil {
		st.Timeout = l.millis(n, st.Key+".timeout")
	}
	if n := c.opt("duration"); n != nil {
		st.Duration = l.millis(n, st.Key+".duration")
	}
}

// readInput reads input and aiInput. Midscene has two forms:
//
//	aiInput: <element>        aiInput: <text>
//	value: <text>             locate: <element>
func (c *stepCtx) readInput(midscene bool) {
	l, st := c.l, c.st
	st.Mode = "replace"
	if n := c.opt("mode"); n != nil {
		m := l.str(n, st.Key+".mode")
		switch m {
		case "replace", "append", "clear":
			st.Mode = m
		case "typeOnly":
			st.Mode = "append"
		default:
			l.errorf(n, "%s.mode: expected replace, append or clear, got %q", st.Key, m)
		}
	}
	val, loc := c.opt("value"), c.opt("locate")
	switch {
	case val != nil:
		st.Value = l.optText(val, st.Key+".value")
		if loc != nil && midscene {
			st.Target = l.element(loc, st.Key+".locate")
		} else {
			st.Target = l.element(c.main, st.Key)
		}
	case loc != nil && midscene:
		st.Value = l.optText(c.main, st.Key)
		st.Target = l.element(loc, st.Key+".locate")
	case st.Mode == "clear":
		st.Target = l.element(c.main, st.Key)
	default:
		l.errorf(c.main, "%s needs the text to type: add value: <text> (the step's own value names the field)", st.Key)
	}
	c.readLocOpts()
}

var scrollTypes = map[string]string{
	"once": "once", "singleAction": "once",
	"untilBottom": "untilBottom", "scrollToBottom": "untilBottom",
	"untilTop": "untilTop", "scrollToTop": "untilTop",
	"untilLeft": "untilLeft", "scrollToLeft": "untilLeft",
	"untilRight": "untilRight", "scrollToRight": "untilRight",
}

func (c *stepCtx) readScroll() {
	l, st := c.l, c.st
	st.Scroll = &Scroll{Direction: "down", Type: "once"}
	if n := c.opt("direction"); n != nil {
		st.Scroll.Direction = c.direction(n)
	}
	if n := c.opt("scrollType"); n != nil {
		s := l.str(n, st.Key+".scrollType")
		t, ok := scrollTypes[s]
		if !ok {
			l.errorf(n, "%s.scrollType: expected singleAction, scrollToBottom, scrollToTop, scrollToLeft or scrollToRight, got %q", st.Key, s)
		}
		st.Scroll.Type = t
	}
	if n := c.opt("distance"); n != nil && !isNull(n) {
		st.Scroll.Distance = l.integer(n, st.Key+".distance")
		if st.Scroll.Distance < 0 {
			l.errorf(n, "%s.distance: expected pixels (0 or more), got %d", st.Key, st.Scroll.Distance)
		}
	}
}

func (c *stepCtx) direction(n *yaml.Node) string {
	d := strings.ToLower(c.l.str(n, c.st.Key+".direction"))
	switch d {
	case "up", "down", "left", "right":
		return d
	}
	c.l.errorf(n, "%s.direction: expected up, down, left or right, got %q", c.st.Key, d)
	return "down"
}

func (c *stepCtx) readWda() {
	l, st := c.l, c.st
	for _, p := range l.pairs(c.main, st.Key) {
		switch p.key.Value {
		case "method":
			st.Method = strings.ToUpper(l.str(p.val, st.Key+".method"))
		case "endpoint":
			st.Endpoint = l.text(p.val, st.Key+".endpoint")
		case "data":
			raw, err := json.Marshal(l.toAny(p.val))
			if err != nil {
				l.errorf(p.val, "%s.data: %v", st.Key, err)
			}
			st.Params = raw
		default:
			l.errorf(p.key, "unknown key %q in %s: expected method, endpoint or data", p.key.Value, st.Key)
		}
	}
	if st.Method == "" {
		st.Method = "GET"
	}
	if c.main.Kind == yaml.MappingNode && st.Endpoint == "" {
		l.errorf(c.main, "%s: expected endpoint: (e.g. /session/:sessionId/wda/screen)", st.Key)
	}
}

// assertOps are the checks an assert step may make.
const assertOps = "exists, notExists, checked, notChecked, enabled, focused, textEquals, textContains, numberGreater, numberLess or count"

// readAssert reads
//
//	assert: {exists: <target>}            assert: {notExists: <target>}
//	assert: {checked: <target>}           assert: {notChecked: <target>}
//	assert: {enabled: <target>}           assert: {focused: <target>}
//	assert: {textEquals: "3", element: <target>}
//	assert: {numberGreater: 0, element: <target>}
//	assert: {count: 3, element: <target>}
func (c *stepCtx) readAssert() {
	l, st := c.l, c.st
	var ps []pair
	if c.main.Kind == yaml.MappingNode {
		ps = l.pairs(c.main, st.Key)
	} else {
		l.pairs(c.main, st.Key) // reports what the value should be
	}
	st.Assert, st.Target = l.checkOf(c.main, st.Key, ps, func(k *yaml.Node) {
		l.errorf(k, "unknown key %q in assert: expected "+assertOps+", element or message", k.Value)
	})
	if n := c.opt("errorMessage"); n != nil {
		st.Assert.Message = l.text(n, st.Key+".errorMessage")
	}
	if n := c.opt("timeout"); n != nil {
		st.Timeout = l.millis(n, st.Key+".timeout")
	}
}

// checkOf reads a check written as assert writes it from the entries ps
// of the mapping n (what names it in messages); unknown reports a key
// that is not part of a check. The target is the element checked.
func (l *loader) checkOf(n *yaml.Node, what string, ps []pair, unknown func(k *yaml.Node)) (*Assert, json.RawMessage) {
	a := &Assert{}
	var target json.RawMessage
	var elem *yaml.Node
	ops := 0
	for _, p := range ps {
		switch k := p.key.Value; k {
		case "exists", "notExists", "checked", "notChecked", "enabled", "focused":
			a.Op, ops = k, ops+1
			target = l.element(p.val, what+"."+k)
		case "textEquals", "textContains":
			a.Op, ops = k, ops+1
			a.Text = l.optText(p.val, what+"."+k)
		case "numberGreater", "numberLess":
			a.Op, ops = k, ops+1
			a.Number = l.number(p.val, what+"."+k)
		case "count":
			a.Op, ops = k, ops+1
			if n := l.integer(p.val, what+"."+k); n >= 0 {
				a.Number = float64(n)
			} else {
				l.errorf(p.val, "%s.count: expected how many elements match, 0 or more, got %d", what, n)
			}
		case "element":
			elem = p.val
		case "message", "errorMessage":
			a.Message = l.text(p.val, what+"."+k)
		default:
			unknown(p.key)
		}
	}
	if n.Kind != yaml.MappingNode {
		return a, target
	}
	switch {
	case ops == 0:
		l.errorf(n, "%s: expected one check: "+assertOps, what)
	case ops > 1:
		l.errorf(n, "%s: one check per step, found %d: split them into several steps", what, ops)
	case a.Op != "count" && !strings.HasPrefix(a.Op, "text") && !strings.HasPrefix(a.Op, "number"):
		if elem != nil {
			l.errorf(elem, "%s.element: %s already names the element", what, a.Op)
		}
	case elem == nil:
		l.errorf(n, "%s.%s: add element: <target> to say which element to check", what, a.Op)
	default:
		target = l.element(elem, what+".element")
	}
	return a, target
}

// readSwipe reads swipe: up|down|left|right or swipe: {from: [x, y], to: [x, y]}.
func (c *stepCtx) readSwipe() {
	l, st := c.l, c.st
	sw := &Swipe{}
	st.Swipe = sw
	if c.main.Kind == yaml.ScalarNode {
		sw.Direction = c.direction(c.main)
	} else {
		got := map[string]bool{}
		for _, p := range l.pairs(c.main, st.Key) {
			switch k := p.key.Value; k {
			case "from", "to":
				pt := c.point(p.val, st.Key+"."+k)
				if k == "from" {
					sw.From = pt
				} else {
					sw.To = pt
				}
				got[k] = true
			case "direction":
				sw.Direction = c.direction(p.val)
			case "duration":
				st.Duration = l.millis(p.val, st.Key+".duration")
			default:
				l.errorf(p.key, "unknown key %q in swipe: expected from, to, direction or duration", k)
			}
		}
		if sw.Direction == "" && !(got["from"] && got["to"]) && c.main.Kind == yaml.MappingNode {
			l.errorf(c.main, "swipe: expected direction: up|down|left|right, or both from: [x, y] and to: [x, y]")
		}
	}
	if n := c.opt("duration"); n != nil {
		st.Duration = l.millis(n, st.Key+".duration")
	}
}

func (c *stepCtx) point(n *yaml.Node, what string) [2]int {
	if n.Kind != yaml.SequenceNode || len(n.Content) != 2 {
		c.l.errorf(n, "%s: expected a point [x, y], got %s", what, describe(n))
		return [2]int{}
	}
	x, y := c.l.integer(n.Content[0], what+"[0]"), c.l.integer(n.Content[1], what+"[1]")
	if x < 0 || y < 0 {
		c.l.errorf(n, "%s: coordinates must be 0 or more, got [%d, %d]", what, x, y)
	}
	return [2]int{x, y}
}
