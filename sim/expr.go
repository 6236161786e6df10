package sim

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// An expr is a compiled expression of the app spec language: literals,
// paths (cart.count, item.price), arithmetic, comparisons, logic and a few
// functions. Values are float64, string, bool, nil, []any and map[string]any.
type expr interface {
	eval(s scope) any
}

// scope resolves the first name of a path.
type scope interface {
	lookup(name string) (any, bool)
}

type (
	litExpr   struct{ v any }
	nameExpr  struct{ name string }
	fieldExpr struct {
		x     expr
		field string
	}
	indexExpr struct{ x, i expr }
	unaryExpr struct {
		op string
		x  expr
	}
	binExpr struct {
		op   string
		l, r expr
	}
	callExpr struct {
		fn   string
		args []expr
	}
)

func (e litExpr) eval(scope) any { return e.v }

func (e nameExpr) eval(s scope) any {
	v, _ := s.lookup(e.name)
	return v
}

func (e fieldExpr) eval(s scope) any { return field(e.x.eval(s), e.field) }

func (e indexExpr) eval(s scope) any {
	x, i := e.x.eval(s), e.i.eval(s)
	switch x := x.(type) {
	case []any:
		n := int(toNum(i))
		if n >= 0 && n < len(x) {
			return x[n]
		}
	case map[string]any:
		return x[toStr(i)]
	}
	return nil
}

// field reads a property: map keys, and count/length of lists and strings.
func field(v any, name string) any {
	switch v := v.(type) {
	case map[string]any:
		return v[name]
	case []any:
		if name == "count" || name == "length" {
			return float64(len(v))
		}
	case string:
		if name == "count" || name == "length" {
			return float64(utf8.RuneCountInString(v))
		}
	}
	return nil
}

func (e unaryExpr) eval(s scope) any {
	v := e.x.eval(s)
	if e.op == "!" {
		return !truthy(v)
	}
	return -toNum(v)
}

func (e binExpr) eval(s scope) any {
	switch e.op {
	case "&&":
		l := e.l.eval(s)
		if !truthy(l) {
			return l
		}
		return e.r.eval(s)
	case "||":
		l := e.l.eval(s)
		if truthy(l) {
			return l
		}
		return e.r.eval(s)
	}
	l, r := e.l.eval(s), e.r.eval(s)
	switch e.op {
	case "+":
		_, ls := l.(string)
		_, rs := r.(string)
		if ls || rs {
			return toStr(l) + toStr(r)
		}
		return toNum(l) + toNum(r)
	case "-":
		return toNum(l) - toNum(r)
	case "*":
		return toNum(l) * toNum(r)
	case "/":
		if toNum(r) == 0 {
			return 0.0
		}
		return toNum(l) / toNum(r)
	case "%":
		if int64(toNum(r)) == 0 {
			return 0.0
		}
		return float64(int64(toNum(l)) % int64(toNum(r)))
	case "==":
		return equal(l, r)
	case "!=":
		return !equal(l, r)
	}
	var c int
	if ls, ok := l.(string); ok {
		c = strings.Compare(ls, toStr(r))
	} else {
		a, b := toNum(l), toNum(r)
		switch {
		case a < b:
			c = -1
		case a > b:
			c = 1
		}
	}
	switch e.op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	default: // ">="
		return c >= 0
	}
}

func equal(a, b any) bool {
	switch a := a.(type) {
	case float64:
		return a == toNum(b)
	case bool:
		return a == truthy(b)
	case nil:
		return b == nil || b == ""
	case string:
		if b == nil {
			return a == ""
		}
		return a == toStr(b)
	}
	return false
}

// truthy follows the usual scripting rules: nil, false, 0, "" and empty
// lists are false.
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case float64:
		return v != 0
	case string:
		return v != "" && v != "false"
	case []any:
		return len(v) > 0
	}
	return true
}

func toNum(v any) float64 {
	switch v := v.(type) {
	case float64:
		return v
	case int:
		return float64(v)
	case bool:
		if v {
			return 1
		}
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err == nil {
			return f
		}
	}
	return 0
}

func toStr(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case int:
		return strconv.Itoa(v)
	case bool:
		return strconv.FormatBool(v)
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = toStr(x)
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

// exprCache holds compiled expressions; specs are immutable so compiled
// forms are shared by every phone.
var exprCache sync.Map // string -> expr

func compileExpr(src string) (expr, error) {
	if e, ok := exprCache.Load(src); ok {
		return e.(expr), nil
	}
	p := &exprParser{src: src}
	p.next()
	e, err := p.parseOr()
	if err == nil && p.tok.kind != tEOF {
		err = p.errorf("unexpected %q", p.tok.text)
	}
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", src, err)
	}
	exprCache.Store(src, e)
	return e, nil
}

// evalExpr evaluates src; an invalid expression (already rejected when the
// spec was parsed) yields nil.
func evalExpr(src string, s scope) any {
	e, err := compileExpr(src)
	if err != nil {
		return nil
	}
	return e.eval(s)
}

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tStr
	tIdent
	tOp
)

type token struct {
	kind tokKind
	text string
	num  float64
}

type exprParser struct {
	src string
	pos int
	tok token
	err error
}

func (p *exprParser) errorf(format string, a ...any) error {
	return fmt.Errorf("at offset %d: %s", p.pos, fmt.Sprintf(format, a...))
}

func (p *exprParser) next() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n') {
		p.pos++
	}
	if p.pos >= len(p.src) {
		p.tok = token{kind: tEOF}
		return
	}
	c := p.src[p.pos]
	start := p.pos
	switch {
	case c >= '0' && c <= '9':
		for p.pos < len(p.src) && (p.src[p.pos] >= '0' && p.src[p.pos] <= '9' || p.src[p.pos] == '.') {
			p.pos++
		}
		f, err := strconv.ParseFloat(p.src[start:p.pos], 64)
		if err != nil && p.err == nil {
			p.err = p.errorf("bad number %q", p.src[start:p.pos])
		}
		p.tok = token{kind: tNum, text: p.src[start:p.pos], num: f}
	case c == '\'' || c == '"':
		p.pos++
		var b strings.Builder
		for p.pos < len(p.src) && p.src[p.pos] != c {
			if p.src[p.pos] == '\\' && p.pos+1 < len(p.src) {
				p.pos++
			}
			b.WriteByte(p.src[p.pos])
			p.pos++
		}
		if p.pos >= len(p.src) {
			if p.err == nil {
				p.err = p.errorf("unterminated string")
			}
		} else {
			p.pos++
		}
		p.tok = token{kind: tStr, text: b.String()}
	case c == '_' || c < utf8.RuneSelf && unicode.IsLetter(rune(c)):
		for p.pos < len(p.src) {
			r := p.src[p.pos]
			if r != '_' && !(r >= '0' && r <= '9') && !(r < utf8.RuneSelf && unicode.IsLetter(rune(r))) {
				break
			}
			p.pos++
		}
		p.tok = token{kind: tIdent, text: p.src[start:p.pos]}
	default:
		for _, op := range []string{"&&", "||", "==", "!=", "<=", ">="} {
			if strings.HasPrefix(p.src[p.pos:], op) {
				p.pos += 2
				p.tok = token{kind: tOp, text: op}
				return
			}
		}
		if strings.ContainsRune("+-*/%<>!().,[]", rune(c)) {
			p.pos++
			p.tok = token{kind: tOp, text: string(c)}
			return
		}
		r, size := utf8.DecodeRuneInString(p.src[p.pos:])
		if p.err == nil {
			p.err = p.errorf("unexpected character %q", r)
		}
		p.pos += size
		p.tok = token{kind: tEOF}
	}
}

func (p *exprParser) isOp(ops ...string) bool {
	if p.tok.kind != tOp {
		return false
	}
	for _, op := range ops {
		if p.tok.text == op {
			return true
		}
	}
	return false
}

func (p *exprParser) binary(ops []string, sub func() (expr, error)) (expr, error) {
	l, err := sub()
	if err != nil {
		return nil, err
	}
	for p.isOp(ops...) {
		op := p.tok.text
		p.next()
		r, err := sub()
		if err != nil {
			return nil, err
		}
		l = binExpr{op: op, l: l, r: r}
	}
	return l, p.err
}

func (p *exprParser) parseOr() (expr, error) {
	return p.binary([]string{"||"}, p.parseAnd)
}

func (p *exprParser) parseAnd() (expr, error) {
	return p.binary([]string{"&&"}, p.parseCmp)
}

func (p *exprParser) parseCmp() (expr, error) {
	return p.binary([]string{"==", "!=", "<", "<=", ">", ">="}, p.parseAdd)
}

func (p *exprParser) parseAdd() (expr, error) {
	return p.binary([]string{"+", "-"}, p.parseMul)
}

func (p *exprParser) parseMul() (expr, error) {
	return p.binary([]string{"*", "/", "%"}, p.parseUnary)
}

func (p *exprParser) parseUnary() (expr, error) {
	if p.isOp("!", "-") {
		op := p.tok.text
		p.next()
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return unaryExpr{op: op, x: x}, nil
	}
	return p.parsePostfix()
}

func (p *exprParser) parsePostfix() (expr, error) {
	x, err := p.parsePrimary()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.isOp("."):
			p.next()
			if p.tok.kind != tIdent {
				return nil, p.errorf("expected a field name after '.'")
			}
			x = fieldExpr{x: x, field: p.tok.text}
			p.next()
		case p.isOp("["):
			p.next()
			i, err := p.parseOr()
			if err != nil {
				return nil, err
			}
			if !p.isOp("]") {
				return nil, p.errorf("expected ']'")
			}
			p.next()
			x = indexExpr{x: x, i: i}
		default:
			return x, p.err
		}
	}
}

func (p *exprParser) parsePrimary() (expr, error) {
	if p.err != nil {
		return nil, p.err
	}
	t := p.tok
	switch t.kind {
	case tNum:
		p.next()
		return litExpr{t.num}, nil
	case tStr:
		p.next()
		return litExpr{t.text}, nil
	case tIdent:
		p.next()
		switch t.text {
		case "true":
			return litExpr{true}, nil
		case "false":
			return litExpr{false}, nil
		case "null", "nil":
			return litExpr{nil}, nil
		}
		if !p.isOp("(") {
			return nameExpr{t.text}, nil
		}
		fn, ok := funcs[t.text]
		if !ok {
			return nil, p.errorf("unknown function %s (known: %s)", t.text, funcNames())
		}
		p.next()
		var args []expr
		for !p.isOp(")") {
			a, err := p.parseOr()
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			if p.isOp(",") {
				p.next()
			} else if !p.isOp(")") {
				return nil, p.errorf("expected ',' or ')' in call of %s", t.text)
			}
		}
		p.next()
		if len(args) < fn.min || len(args) > fn.max {
			return nil, p.errorf("%s takes %d to %d arguments, got %d", t.text, fn.min, fn.max, len(args))
		}
		return callExpr{fn: t.text, args: args}, p.err
	case tOp:
		if t.text == "(" {
			p.next()
			x, err := p.parseOr()
			if err != nil {
				return nil, err
			}
			if !p.isOp(")") {
				return nil, p.errorf("expected ')'")
			}
			p.next()
			return x, nil
		}
		return nil, p.errorf("unexpected %q", t.text)
	}
	return nil, p.errorf("unexpected end of expression")
}
