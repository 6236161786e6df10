package wda

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apexagent/apex/sim"
)

// Predicate is a parsed NSPredicate of the kind WebDriverAgent's
// "predicate string" locator takes: comparisons of element attributes
// (name, label, value, type, identifier, placeholderValue, enabled,
// visible, accessible, selected, hittable, focused, rect.x …) with ==, !=,
// <, <=, >, >=, CONTAINS, BEGINSWITH, ENDSWITH, LIKE, MATCHES and IN,
// [c] and [d] modifiers, combined with AND, OR, NOT (&&, ||, !) and
// parentheses. TRUEPREDICATE and FALSEPREDICATE are accepted.
type Predicate struct{ root predNode }

// Match reports whether e satisfies the predicate.
func (p *Predicate) Match(e *sim.XCUIElement) bool { return p.root.eval(e) }

type predNode interface{ eval(*sim.XCUIElement) bool }

type andNode struct{ a, b predNode }
type orNode struct{ a, b predNode }
type notNode struct{ a predNode }
type constNode bool

func (n andNode) eval(e *sim.XCUIElement) bool  { return n.a.eval(e) && n.b.eval(e) }
func (n orNode) eval(e *sim.XCUIElement) bool   { return n.a.eval(e) || n.b.eval(e) }
func (n notNode) eval(e *sim.XCUIElement) bool  { return !n.a.eval(e) }
func (n constNode) eval(*sim.XCUIElement) bool  { return bool(n) }
func (n *cmpNode) eval(e *sim.XCUIElement) bool { return n.compare(e) }

type cmpNode struct {
	attr     string
	op       string
	caseless bool
	diacrit  bool
	negate   bool
	lit      []literal // one, or several for IN
	re       *regexp.Regexp
}

// literal is a string, number or boolean of a predicate.
type literal struct {
	s     string
	num   float64
	isNum bool
}

// maxQueryLen bounds the locators parsed; real ones are short.
const maxQueryLen = 8 << 10

// checkQuery refuses locator text too long or not UTF-8.
func checkQuery(kind, src string) error {
	if len(src) > maxQueryLen {
		return fmt.Errorf("%s of %d bytes is too long (max %d)", kind, len(src), maxQueryLen)
	}
	if !utf8.ValidString(src) {
		return fmt.Errorf("%s is not valid UTF-8", kind)
	}
	return nil
}

// ParsePredicate parses an NSPredicate format string.
func ParsePredicate(src string) (*Predicate, error) {
	if err := checkQuery("predicate", src); err != nil {
		return nil, err
	}
	p := &predParser{src: src}
	n, err := p.or(0)
	if err != nil {
		return nil, fmt.Errorf("invalid predicate %q: %w", src, err)
	}
	p.space()
	if p.pos < len(p.src) {
		return nil, fmt.Errorf("invalid predicate %q: unexpected %q at offset %d", src, p.rest(), p.pos)
	}
	return &Predicate{root: n}, nil
}

type predParser struct {
	src string
	pos int
}

// maxPredicateDepth bounds nesting so hostile input cannot exhaust the stack.
const maxPredicateDepth = 64

func (p *predParser) rest() string {
	r := p.src[p.pos:]
	if len(r) > 20 {
		r = r[:20] + "…"
	}
	return r
}

func (p *predParser) space() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n' || p.src[p.pos] == '\r') {
		p.pos++
	}
}

// keyword consumes an operator word (case-insensitive) or symbol.
func (p *predParser) keyword(words ...string) bool {
	p.space()
	for _, w := range words {
		end := p.pos + len(w)
		if end > len(p.src) || !strings.EqualFold(p.src[p.pos:end], w) {
			continue
		}
		if isWordByte(w[len(w)-1]) && end < len(p.src) && isWordByte(p.src[end]) {
			continue
		}
		p.pos = end
		return true
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func (p *predParser) or(depth int) (predNode, error) {
	n, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for p.keyword("OR", "||") {
		m, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		n = orNode{n, m}
	}
	return n, nil
}

func (p *predParser) and(depth int) (predNode, error) {
	n, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for p.keyword("AND", "&&") {
		m, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		n = andNode{n, m}
	}
	return n, nil
}

func (p *predParser) unary(depth int) (predNode, error) {
	if depth > maxPredicateDepth {
		return nil, fmt.Errorf("nested more than %d levels", maxPredicateDepth)
	}
	if p.keyword("NOT") || p.keyword("!") {
		n, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return notNode{n}, nil
	}
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == '(' {
		p.pos++
		n, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ')' {
			return nil, fmt.Errorf("missing ')' at offset %d", p.pos)
		}
		p.pos++
		return n, nil
	}
	if p.keyword("TRUEPREDICATE") {
		return constNode(true), nil
	}
	if p.keyword("FALSEPREDICATE") {
		return constNode(false), nil
	}
	return p.comparison()
}

// predAttrs are the attributes a predicate may name.
var predAttrs = map[string]string{
	"name": "name", "wdName": "name", "label": "label", "wdLabel": "label", "value": "value", "wdValue": "value",
	"type": "type", "wdType": "type", "elementType": "type", "identifier": "identifier", "rawIdentifier": "identifier",
	"placeholderValue": "placeholderValue", "wdPlaceholderValue": "placeholderValue",
	"enabled": "enabled", "isEnabled": "enabled", "wdEnabled": "enabled",
	"visible": "visible", "isVisible": "visible", "wdVisible": "visible",
	"accessible": "accessible", "isAccessible": "accessible", "wdAccessible": "accessible",
	"selected": "selected", "isSelected": "selected", "wdSelected": "selected",
	"hittable": "hittable", "isHittable": "hittable", "wdHittable": "hittable",
	"focused": "focused", "hasFocus": "focused", "wdFocused": "focused",
	"rect.x": "rect.x", "rect.y": "rect.y", "rect.width": "rect.width", "rect.height": "rect.height",
	"wdRect.x": "rect.x", "wdRect.y": "rect.y", "wdRect.width": "rect.width", "wdRect.height": "rect.height",
	"frame.x": "rect.x", "frame.y": "rect.y", "frame.width": "rect.width", "frame.height": "rect.height",
}

func (p *predParser) comparison() (predNode, error) {
	p.space()
	start := p.pos
	for p.pos < len(p.src) && isWordByte(p.src[p.pos]) {
		p.pos++
	}
	word := p.src[start:p.pos]
	if word == "" {
		return nil, fmt.Errorf("expected an attribute at offset %d, got %q", start, p.rest())
	}
	attr, ok := predAttrs[word]
	if !ok {
		return nil, fmt.Errorf("unknown attribute %q (known: name, label, value, type, identifier, enabled, visible, accessible, selected, hittable, focused, rect.x …)", word)
	}
	n := &cmpNode{attr: attr}
	switch {
	case p.keyword("<=", "=<"):
		n.op = "<="
	case p.keyword(">=", "=>"):
		n.op = ">="
	case p.keyword("!=", "<>"):
		n.op = "!="
	case p.keyword("==", "="):
		n.op = "=="
	case p.keyword("<"):
		n.op = "<"
	case p.keyword(">"):
		n.op = ">"
	case p.keyword("CONTAINS"):
		n.op = "CONTAINS"
	case p.keyword("BEGINSWITH"):
		n.op = "BEGINSWITH"
	case p.keyword("ENDSWITH"):
		n.op = "ENDSWITH"
	case p.keyword("LIKE"):
		n.op = "LIKE"
	case p.keyword("MATCHES"):
		n.op = "MATCHES"
	case p.keyword("IN"):
		n.op = "IN"
	default:
		return nil, fmt.Errorf("expected an operator after %q at offset %d, got %q", word, p.pos, p.rest())
	}
	if p.pos < len(p.src) && p.src[p.pos] == '[' {
		end := strings.IndexByte(p.src[p.pos:], ']')
		if end < 0 {
			return nil, fmt.Errorf("unclosed modifier at offset %d", p.pos)
		}
		for _, m := range p.src[p.pos+1 : p.pos+end] {
			switch m {
			case 'c', 'C':
				n.caseless = true
			case 'd', 'D':
				n.diacrit = true
			case 'n', 'N':
			default:
				return nil, fmt.Errorf("unknown modifier %q (use c, d)", m)
			}
		}
		p.pos += end + 1
	}
	if n.op == "IN" {
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != '{' {
			return nil, fmt.Errorf("IN needs a list {'a', 'b'} at offset %d", p.pos)
		}
		p.pos++
		for {
			lit, err := p.literal()
			if err != nil {
				return nil, err
			}
			n.lit = append(n.lit, lit)
			p.space()
			if p.pos < len(p.src) && p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.src) && p.src[p.pos] == '}' {
				p.pos++
				break
			}
			return nil, fmt.Errorf("expected ',' or '}' at offset %d", p.pos)
		}
		return n, nil
	}
	lit, err := p.literal()
	if err != nil {
		return nil, err
	}
	n.lit = []literal{lit}
	switch n.op {
	case "LIKE":
		n.re, err = likeRegexp(lit.s, n.caseless)
	case "MATCHES":
		flags := ""
		if n.caseless {
			flags = "(?i)"
		}
		n.re, err = regexp.Compile(flags + "^(?:" + lit.s + ")$")
	}
	if err != nil {
		return nil, fmt.Errorf("%s pattern %q: %w", n.op, lit.s, err)
	}
	return n, nil
}

func likeRegexp(pattern string, caseless bool) (*regexp.Regexp, error) {
	var b strings.Builder
	if caseless {
		b.WriteString("(?i)")
	}
	b.WriteString("^")
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// literal reads a quoted string, a number, or YES/NO/TRUE/FALSE/NIL.
func (p *predParser) literal() (literal, error) {
	p.space()
	if p.pos >= len(p.src) {
		return literal{}, fmt.Errorf("expected a value at the end")
	}
	switch q := p.src[p.pos]; q {
	case '\'', '"':
		var b strings.Builder
		i := p.pos + 1
		for i < len(p.src) {
			c := p.src[i]
			if c == '\\' && i+1 < len(p.src) {
				b.WriteByte(p.src[i+1])
				i += 2
				continue
			}
			if c == q {
				p.pos = i + 1
				return literal{s: b.String()}, nil
			}
			b.WriteByte(c)
			i++
		}
		return literal{}, fmt.Errorf("unclosed string at offset %d", p.pos)
	}
	start := p.pos
	for p.pos < len(p.src) && (isWordByte(p.src[p.pos]) || p.src[p.pos] == '-' || p.src[p.pos] == '+') {
		p.pos++
	}
	word := p.src[start:p.pos]
	switch strings.ToUpper(word) {
	case "YES", "TRUE":
		return literal{s: "1", num: 1, isNum: true}, nil
	case "NO", "FALSE":
		return literal{s: "0", num: 0, isNum: true}, nil
	case "NIL", "NULL":
		return literal{}, nil
	}
	f, err := strconv.ParseFloat(word, 64)
	if err != nil || word == "" {
		return literal{}, fmt.Errorf("expected a quoted string, number or YES/NO at offset %d, got %q", start, p.rest())
	}
	return literal{s: word, num: f, isNum: true}, nil
}

// attrValue is an attribute as a predicate sees it: strings, or numbers
// for booleans (1/0) and geometry.
func attrValue(e *sim.XCUIElement, attr string) (s string, num float64, isNum bool) {
	b := func(on bool) (string, float64, bool) {
		if on {
			return "1", 1, true
		}
		return "0", 0, true
	}
	switch attr {
	case "name":
		return e.Name(), 0, false
	case "label":
		return e.Label, 0, false
	case "value":
		return e.Value, 0, false
	case "type":
		return e.Type, 0, false
	case "identifier":
		return e.Identifier, 0, false
	case "placeholderValue":
		return e.Placeholder, 0, false
	case "enabled":
		return b(e.Enabled)
	case "visible":
		return b(e.Visible)
	case "accessible":
		return b(e.Accessible)
	case "selected":
		return b(e.Selected)
	case "hittable":
		return b(e.Visible && e.Enabled)
	case "focused":
		return b(e.Focused)
	case "rect.x":
		return strconv.Itoa(e.Rect.Min.X), float64(e.Rect.Min.X), true
	case "rect.y":
		return strconv.Itoa(e.Rect.Min.Y), float64(e.Rect.Min.Y), true
	case "rect.width":
		return strconv.Itoa(e.Rect.Dx()), float64(e.Rect.Dx()), true
	case "rect.height":
		return strconv.Itoa(e.Rect.Dy()), float64(e.Rect.Dy()), true
	}
	return "", 0, false
}

func (n *cmpNode) compare(e *sim.XCUIElement) bool {
	s, num, isNum := attrValue(e, n.attr)
	fold := func(v string) string {
		if n.diacrit {
			v = stripDiacritics(v)
		}
		if n.caseless {
			v = strings.ToLower(v)
		}
		return v
	}
	eq := func(l literal) bool {
		if isNum && l.isNum {
			return num == l.num
		}
		return fold(s) == fold(l.s)
	}
	lit := n.lit[0]
	switch n.op {
	case "==":
		return eq(lit)
	case "!=":
		return !eq(lit)
	case "<", "<=", ">", ">=":
		a, b := num, lit.num
		if !isNum || !lit.isNum {
			c := strings.Compare(fold(s), fold(lit.s))
			a, b = float64(c), 0
		}
		switch n.op {
		case "<":
			return a < b
		case "<=":
			return a <= b
		case ">":
			return a > b
		}
		return a >= b
	case "CONTAINS":
		return strings.Contains(fold(s), fold(lit.s))
	case "BEGINSWITH":
		return strings.HasPrefix(fold(s), fold(lit.s))
	case "ENDSWITH":
		return strings.HasSuffix(fold(s), fold(lit.s))
	case "LIKE", "MATCHES":
		if n.diacrit {
			s = stripDiacritics(s)
		}
		return n.re.MatchString(s)
	case "IN":
		for _, l := range n.lit {
			if eq(l) {
				return true
			}
		}
	}
	return false
}

// stripDiacritics drops combining marks after a rough decomposition of
// Latin letters, enough for [d] on names like "Café".
func stripDiacritics(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		if base, ok := latinBase[r]; ok {
			r = base
		}
		b.WriteRune(r)
	}
	return b.String()
}

var latinBase = func() map[rune]rune {
	m := map[rune]rune{}
	for base, list := range map[rune]string{'a': "àáâãäåā", 'c': "çć", 'e': "èéêëē", 'i': "ìíîïī", 'n': "ñń", 'o': "òóôõöøō", 'u': "ùúûüū", 'y': "ýÿ",
		'A': "ÀÁÂÃÄÅĀ", 'C': "ÇĆ", 'E': "ÈÉÊËĒ", 'I': "ÌÍÎÏĪ", 'N': "ÑŃ", 'O': "ÒÓÔÕÖØŌ", 'U': "ÙÚÛÜŪ", 'Y': "Ý"} {
		for _, r := range list {
			m[r] = base
		}
	}
	return m
}()

// jsonStrings decodes an array of strings.
func jsonStrings(raw json.RawMessage, out *[]string) error { return json.Unmarshal(raw, out) }
