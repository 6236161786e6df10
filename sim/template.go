package sim

import (
	"fmt"
	"strings"
	"sync"
)

// A template is text with ${expr} holes: "Cart (${cart.count})".
type template struct {
	parts []tmplPart
	// whole is set when the template is exactly one ${expr}; its value is
	// then kept as is (a list, a number) rather than turned into text.
	whole expr
}

type tmplPart struct {
	lit string
	x   expr
}

var tmplCache sync.Map // string -> *template

func compileTemplate(src string) (*template, error) {
	if t, ok := tmplCache.Load(src); ok {
		return t.(*template), nil
	}
	t := &template{}
	rest := src
	for {
		i := strings.Index(rest, "${")
		if i < 0 {
			if rest != "" {
				t.parts = append(t.parts, tmplPart{lit: rest})
			}
			break
		}
		if i > 0 {
			t.parts = append(t.parts, tmplPart{lit: rest[:i]})
		}
		j := closingBrace(rest[i+2:])
		if j < 0 {
			return nil, fmt.Errorf("template %q: missing '}' after '${'", src)
		}
		x, err := compileExpr(rest[i+2 : i+2+j])
		if err != nil {
			return nil, fmt.Errorf("template %q: %w", src, err)
		}
		t.parts = append(t.parts, tmplPart{x: x})
		rest = rest[i+2+j+1:]
	}
	if len(t.parts) == 1 && t.parts[0].x != nil {
		t.whole = t.parts[0].x
	}
	tmplCache.Store(src, t)
	return t, nil
}

// closingBrace finds the '}' that ends an expression, skipping quoted text.
func closingBrace(s string) int {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '}':
			return i
		}
	}
	return -1
}

func (t *template) text(s scope) string {
	if len(t.parts) == 1 && t.parts[0].x == nil {
		return t.parts[0].lit
	}
	var b strings.Builder
	for _, p := range t.parts {
		if p.x == nil {
			b.WriteString(p.lit)
		} else {
			b.WriteString(toStr(p.x.eval(s)))
		}
	}
	return b.String()
}

func (t *template) value(s scope) any {
	if t.whole != nil {
		return t.whole.eval(s)
	}
	return t.text(s)
}

// render expands a template string; text that is not a valid template
// (rejected when the spec was parsed) is returned as is.
func render(src string, s scope) string {
	if !strings.Contains(src, "${") {
		return src
	}
	t, err := compileTemplate(src)
	if err != nil {
		return src
	}
	return t.text(s)
}

// value expands src keeping the type of a lone ${expr}; other YAML values
// (numbers, lists, maps of templates) are expanded recursively.
func value(v any, s scope) any {
	switch v := v.(type) {
	case string:
		if !strings.Contains(v, "${") {
			return v
		}
		t, err := compileTemplate(v)
		if err != nil {
			return v
		}
		return t.value(s)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = value(x, s)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = value(x, s)
		}
		return out
	case int:
		return float64(v)
	}
	return v
}

// cond evaluates a condition written either as a bare expression
// ("cart.count > 0") or as a template ("${cart.count > 0}"). Empty is true.
func cond(src string, s scope) bool {
	src = strings.TrimSpace(src)
	if src == "" {
		return true
	}
	if strings.HasPrefix(src, "${") && strings.HasSuffix(src, "}") {
		return truthy(value(src, s))
	}
	return truthy(evalExpr(src, s))
}

func checkCond(src string) error {
	src = strings.TrimSpace(src)
	if src == "" {
		return nil
	}
	if strings.HasPrefix(src, "${") && strings.HasSuffix(src, "}") {
		_, err := compileTemplate(src)
		return err
	}
	_, err := compileExpr(src)
	return err
}
