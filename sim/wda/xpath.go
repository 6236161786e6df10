package wda

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apexagent/apex/sim"
)

// XPath is a parsed query of the XPath subset scripts use against
// WebDriverAgent's XML source: absolute paths of / (child) and //
// (descendant) steps naming an element type or *, each with predicates:
// [n], [last()], [@attr], [@attr="v"], [@attr!="v"],
// [contains(@attr, "v")], [starts-with(@attr, "v")], combined with and,
// or, not(…) and parentheses. Attributes are those of the XML source
// (type, name, label, value, enabled, visible, accessible, x, y, width,
// height, index, placeholderValue); positions count among each parent's
// matching children, as XPath does.
//
// A whole path in parentheses may be indexed, (//X)[2] or (//X)[last()]:
// the nth match in document order.
type XPath struct {
	steps []xpathStep
	pick  int // 0: all; n > 0: the nth match; -1: the last
}

type xpathStep struct {
	descendant bool
	typ        string // "" for *
	preds      []xpathExpr
}

// xpathExpr evaluates a predicate for the node at position pos (1-based)
// of size candidates.
type xpathExpr interface {
	eval(e *sim.XCUIElement, index, pos, size int) bool
}

type (
	xpAnd   struct{ a, b xpathExpr }
	xpOr    struct{ a, b xpathExpr }
	xpNot   struct{ a xpathExpr }
	xpPos   struct{ n int } // n < 0: last()
	xpAttr  struct{ attr, op, val string }
	xpExist struct{ attr string }
)

func (x xpAnd) eval(e *sim.XCUIElement, i, p, n int) bool {
	return x.a.eval(e, i, p, n) && x.b.eval(e, i, p, n)
}
func (x xpOr) eval(e *sim.XCUIElement, i, p, n int) bool {
	return x.a.eval(e, i, p, n) || x.b.eval(e, i, p, n)
}
func (x xpNot) eval(e *sim.XCUIElement, i, p, n int) bool { return !x.a.eval(e, i, p, n) }
func (x xpPos) eval(_ *sim.XCUIElement, _, p, n int) bool {
	if x.n < 0 {
		return p == n
	}
	return p == x.n
}
func (x xpExist) eval(e *sim.XCUIElement, i, _, _ int) bool {
	_, ok := xmlAttr(e, x.attr, i)
	return ok
}
func (x xpAttr) eval(e *sim.XCUIElement, i, _, _ int) bool {
	v, ok := xmlAttr(e, x.attr, i)
	switch x.op {
	case "=":
		return ok && v == x.val
	case "!=":
		return ok && v != x.val
	case "contains":
		return ok && strings.Contains(v, x.val)
	case "starts-with":
		return ok && strings.HasPrefix(v, x.val)
	}
	return false
}

// xmlAttr is an attribute as the XML source writes it (absent ones
// report false).
func xmlAttr(e *sim.XCUIElement, name string, index int) (string, bool) {
	tf := func(b bool) (string, bool) { return strconv.FormatBool(b), true }
	nonEmpty := func(s string) (string, bool) { return s, s != "" }
	switch name {
	case "type":
		return e.Type, true
	case "name":
		return nonEmpty(e.Name())
	case "label":
		return nonEmpty(e.Label)
	case "value":
		return e.Value, e.HasValue
	case "placeholderValue":
		return nonEmpty(e.Placeholder)
	case "enabled":
		return tf(e.Enabled)
	case "visible":
		return tf(e.Visible)
	case "accessible":
		return tf(e.Accessible)
	case "selected":
		if e.Selected {
			return "true", true
		}
	case "x":
		return strconv.Itoa(e.Rect.Min.X), true
	case "y":
		return strconv.Itoa(e.Rect.Min.Y), true
	case "width":
		return strconv.Itoa(e.Rect.Dx()), true
	case "height":
		return strconv.Itoa(e.Rect.Dy()), true
	case "index":
		return strconv.Itoa(index), true
	}
	return "", false
}

// ParseXPath parses a query of the supported subset.
func ParseXPath(src string) (*XPath, error) {
	if err := checkQuery("xpath", src); err != nil {
		return nil, err
	}
	if s := strings.TrimSpace(src); strings.HasPrefix(s, "(") {
		return parseIndexedXPath(src, s)
	}
	p := &xpParser{src: strings.TrimSpace(src)}
	x := &XPath{}
	if !strings.HasPrefix(p.src, "/") {
		return nil, fmt.Errorf("invalid xpath %q: only absolute paths (/… or //…) are supported", src)
	}
	for p.pos < len(p.src) {
		var st xpathStep
		switch {
		case strings.HasPrefix(p.src[p.pos:], "//"):
			st.descendant = true
			p.pos += 2
		case p.src[p.pos] == '/':
			p.pos++
		default:
			return nil, fmt.Errorf("invalid xpath %q: expected / at offset %d", src, p.pos)
		}
		name := p.name()
		switch {
		case name == "*":
		case isIdent(name):
			st.typ = name
		default:
			return nil, fmt.Errorf("invalid xpath %q: expected an element name or * at offset %d", src, p.pos)
		}
		for p.pos < len(p.src) && p.src[p.pos] == '[' {
			p.pos++
			e, err := p.or(0)
			if err != nil {
				return nil, fmt.Errorf("invalid xpath %q: %w", src, err)
			}
			p.space()
			if !p.eat("]") {
				return nil, fmt.Errorf("invalid xpath %q: expected ] at offset %d", src, p.pos)
			}
			st.preds = append(st.preds, e)
		}
		x.steps = append(x.steps, st)
	}
	if len(x.steps) == 0 {
		return nil, fmt.Errorf("invalid xpath %q: no steps", src)
	}
	return x, nil
}

type xpParser struct {
	src string
	pos int
}

func (p *xpParser) space() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
}

func (p *xpParser) eat(s string) bool {
	p.space()
	if strings.HasPrefix(p.src[p.pos:], s) {
		p.pos += len(s)
		return true
	}
	return false
}

// word consumes a keyword followed by a non-name character.
func (p *xpParser) word(w string) bool {
	p.space()
	end := p.pos + len(w)
	if !strings.HasPrefix(p.src[p.pos:], w) || end < len(p.src) && isNameByte(p.src[end]) {
		return false
	}
	p.pos = end
	return true
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func (p *xpParser) name() string {
	if p.pos < len(p.src) && p.src[p.pos] == '*' {
		p.pos++
		return "*"
	}
	start := p.pos
	for p.pos < len(p.src) && isNameByte(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// maxXPathDepth bounds nesting so hostile input cannot exhaust the stack.
const maxXPathDepth = 64

func (p *xpParser) or(depth int) (xpathExpr, error) {
	e, err := p.and(depth)
	for err == nil && p.word("or") {
		var f xpathExpr
		if f, err = p.and(depth); err == nil {
			e = xpOr{e, f}
		}
	}
	return e, err
}

func (p *xpParser) and(depth int) (xpathExpr, error) {
	e, err := p.unary(depth)
	for err == nil && p.word("and") {
		var f xpathExpr
		if f, err = p.unary(depth); err == nil {
			e = xpAnd{e, f}
		}
	}
	return e, err
}

func (p *xpParser) unary(depth int) (xpathExpr, error) {
	if depth > maxXPathDepth {
		return nil, fmt.Errorf("nested more than %d levels", maxXPathDepth)
	}
	p.space()
	switch {
	case p.word("not"):
		if !p.eat("(") {
			return nil, fmt.Errorf("expected ( after not at offset %d", p.pos)
		}
		e, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if !p.eat(")") {
			return nil, fmt.Errorf("expected ) at offset %d", p.pos)
		}
		return xpNot{e}, nil
	case p.eat("("):
		e, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if !p.eat(")") {
			return nil, fmt.Errorf("expected ) at offset %d", p.pos)
		}
		return e, nil
	case p.word("last"):
		if !p.eat("(") || !p.eat(")") {
			return nil, fmt.Errorf("expected last() at offset %d", p.pos)
		}
		return xpPos{-1}, nil
	case p.eat("@"):
		attr := p.name()
		if attr == "" || attr == "*" {
			return nil, fmt.Errorf("expected an attribute name at offset %d", p.pos)
		}
		for _, op := range []string{"!=", "="} {
			if p.eat(op) {
				v, err := p.literal()
				return xpAttr{attr: attr, op: op, val: v}, err
			}
		}
		return xpExist{attr}, nil
	}
	for _, fn := range []string{"contains", "starts-with"} {
		if p.word(fn) {
			if !p.eat("(") || !p.eat("@") {
				return nil, fmt.Errorf("%s needs (@attribute, 'text') at offset %d", fn, p.pos)
			}
			attr := p.name()
			if !p.eat(",") {
				return nil, fmt.Errorf("expected , at offset %d", p.pos)
			}
			v, err := p.literal()
			if err != nil {
				return nil, err
			}
			if !p.eat(")") {
				return nil, fmt.Errorf("expected ) at offset %d", p.pos)
			}
			return xpAttr{attr: attr, op: fn, val: v}, nil
		}
	}
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.Atoi(p.src[start:p.pos])
	if err != nil || n < 1 || n > 1<<20 {
		return nil, fmt.Errorf("expected a position, @attribute, contains(), starts-with(), last(), not() at offset %d", start)
	}
	return xpPos{n}, nil
}

func (p *xpParser) literal() (string, error) {
	p.space()
	if p.pos >= len(p.src) || p.src[p.pos] != '"' && p.src[p.pos] != '\'' {
		return "", fmt.Errorf("expected a quoted string at offset %d", p.pos)
	}
	q := p.src[p.pos]
	end := strings.IndexByte(p.src[p.pos+1:], q)
	if end < 0 {
		return "", fmt.Errorf("unclosed string at offset %d", p.pos)
	}
	v := p.src[p.pos+1 : p.pos+1+end]
	p.pos += end + 2
	return v, nil
}

// find evaluates the query against the application root; the root itself
// is the document's top element.
// parseIndexedXPath parses (PATH)[n] and (PATH)[last()].
func parseIndexedXPath(src, s string) (*XPath, error) {
	end, depth := -1, 0
	for i, r := range s {
		if r == '(' {
			depth++
		} else if r == ')' {
			if depth--; depth == 0 {
				end = i
				break
			}
		}
	}
	if end < 0 {
		return nil, fmt.Errorf("invalid xpath %q: unbalanced parentheses", src)
	}
	idx := strings.TrimSpace(s[end+1:])
	x, err := ParseXPath(s[1:end])
	if err != nil {
		return nil, err
	}
	if x.pick != 0 {
		return nil, fmt.Errorf("invalid xpath %q: one index per path", src)
	}
	inner, ok := strings.CutPrefix(idx, "[")
	inner, ok2 := strings.CutSuffix(inner, "]")
	n, err := strconv.Atoi(strings.TrimSpace(inner))
	switch {
	case !ok || !ok2:
		return nil, fmt.Errorf("invalid xpath %q: expected [n] or [last()] after the parenthesised path", src)
	case strings.TrimSpace(inner) == "last()":
		x.pick = -1
	case err != nil || n < 1:
		return nil, fmt.Errorf("invalid xpath %q: the index must be a number from 1 or last()", src)
	default:
		x.pick = n
	}
	return x, nil
}

func (x *XPath) find(root found) []found {
	out := x.findAll(root)
	switch {
	case x.pick == 0:
		return out
	case x.pick < 0 && len(out) > 0:
		return out[len(out)-1:]
	case x.pick > 0 && x.pick <= len(out):
		return out[x.pick-1 : x.pick]
	}
	return nil
}

func (x *XPath) findAll(root found) []found {
	// The document node's only child is the application.
	doc := &sim.XCUIElement{Children: []*sim.XCUIElement{root.e}}
	cur := []xpNode{{found: found{e: doc, path: root.path}, doc: true}}
	for _, st := range x.steps {
		var ctx []xpNode
		if st.descendant {
			seen := map[string]bool{}
			for _, c := range cur {
				c.selfAndDescendants(func(n xpNode) {
					if k := fmt.Sprint(n.path, n.doc); !seen[k] {
						seen[k] = true
						ctx = append(ctx, n)
					}
				})
			}
		} else {
			ctx = cur
		}
		var next []xpNode
		seen := map[string]bool{}
		for _, c := range ctx {
			var kids []xpNode
			for i, ch := range c.e.Children {
				if st.typ != "" && ch.Type != st.typ {
					continue
				}
				kids = append(kids, xpNode{found: found{ch, c.childPath(i)}, index: i})
			}
			for _, pred := range st.preds {
				var kept []xpNode
				for j, k := range kids {
					if pred.eval(k.e, k.index, j+1, len(kids)) {
						kept = append(kept, k)
					}
				}
				kids = kept
			}
			for _, k := range kids {
				if key := fmt.Sprint(k.path); !seen[key] {
					seen[key] = true
					next = append(next, k)
				}
			}
		}
		cur = next
		if len(cur) == 0 {
			return nil
		}
	}
	out := make([]found, 0, len(cur))
	for _, c := range cur {
		out = append(out, c.found)
	}
	// Document order: a parent before its children, siblings in order.
	slices.SortFunc(out, func(a, b found) int { return slices.Compare(a.path, b.path) })
	return out
}

// xpNode is a node of the query: an element with its path and its index
// among its siblings, or the document node.
type xpNode struct {
	found
	index int
	doc   bool
}

// childPath is the path of the node's child i: the document's only child
// is the search root, at the document's path.
func (n xpNode) childPath(i int) []int {
	if n.doc {
		return n.path
	}
	return append(slices.Clip(n.path), i)
}

func (n xpNode) selfAndDescendants(fn func(xpNode)) {
	fn(n)
	for i, c := range n.e.Children {
		xpNode{found: found{c, n.childPath(i)}, index: i}.selfAndDescendants(fn)
	}
}
