package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

type function struct {
	min, max int
	call     func(args []any) any
	doc      string
}

// funcs are the functions an expression may call. They never fail: wrong
// argument types give a neutral result, as template engines do.
var funcs = map[string]function{
	"count": {1, 1, func(a []any) any { return field(a[0], "count") }, "count(list) — number of items"},
	"sum": {2, 3, func(a []any) any {
		list, _ := a[0].([]any)
		total := 0.0
		for _, it := range list {
			v := toNum(field(it, toStr(a[1])))
			if len(a) == 3 {
				v *= toNum(field(it, toStr(a[2])))
			}
			total += v
		}
		return total
	}, "sum(list, 'field' [, 'factor']) — total of a field (times another field)"},
	"money": {1, 1, func(a []any) any { return fmt.Sprintf("$%.2f", toNum(a[0])) }, "money(x) — $12.50"},
	"fixed": {2, 2, func(a []any) any {
		return fmt.Sprintf("%.*f", int(toNum(a[1])), toNum(a[0]))
	}, "fixed(x, digits) — x with a fixed number of decimals"},
	"round":    {1, 1, func(a []any) any { return math.Round(toNum(a[0])) }, "round(x)"},
	"lower":    {1, 1, func(a []any) any { return strings.ToLower(toStr(a[0])) }, "lower(s)"},
	"upper":    {1, 1, func(a []any) any { return strings.ToUpper(toStr(a[0])) }, "upper(s)"},
	"trim":     {1, 1, func(a []any) any { return strings.TrimSpace(toStr(a[0])) }, "trim(s)"},
	"str":      {1, 1, func(a []any) any { return toStr(a[0]) }, "str(x)"},
	"contains": {2, 2, func(a []any) any { return contains(a[0], a[1]) }, "contains(s|list, x) — case-insensitive for text"},
	"if": {3, 3, func(a []any) any {
		if truthy(a[0]) {
			return a[1]
		}
		return a[2]
	}, "if(cond, a, b)"},
	"filter": {3, 3, func(a []any) any {
		list, _ := a[0].([]any)
		q := strings.TrimSpace(toStr(a[2]))
		if q == "" {
			return list
		}
		var out []any
		for _, it := range list {
			if contains(field(it, toStr(a[1])), q) {
				out = append(out, it)
			}
		}
		if out == nil {
			out = []any{}
		}
		return out
	}, "filter(list, 'field', query) — items whose field contains query (all when query is empty)"},
	"where": {3, 3, func(a []any) any {
		list, _ := a[0].([]any)
		out := []any{}
		for _, it := range list {
			if equal(field(it, toStr(a[1])), a[2]) {
				out = append(out, it)
			}
		}
		return out
	}, "where(list, 'field', value) — items whose field equals value"},
	"find": {3, 3, func(a []any) any {
		list, _ := a[0].([]any)
		for _, it := range list {
			if equal(field(it, toStr(a[1])), a[2]) {
				return it
			}
		}
		return nil
	}, "find(list, 'field', value) — first item whose field equals value"},
	"stars": {1, 1, func(a []any) any {
		n := int(math.Round(toNum(a[0])))
		n = max(0, min(5, n))
		return strings.Repeat("★", n) + strings.Repeat("☆", 5-n)
	}, "stars(rating) — ★★★★☆"},
	"plural": {3, 3, func(a []any) any {
		if toNum(a[0]) == 1 {
			return toStr(a[1])
		}
		return toStr(a[2])
	}, "plural(n, one, many)"},
}

func funcNames() string {
	var names []string
	for n := range funcs {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func (e callExpr) eval(s scope) any {
	args := make([]any, len(e.args))
	for i, a := range e.args {
		args[i] = a.eval(s)
	}
	return funcs[e.fn].call(args)
}

func contains(hay, needle any) bool {
	switch h := hay.(type) {
	case string:
		return strings.Contains(strings.ToLower(h), strings.ToLower(toStr(needle)))
	case []any:
		for _, x := range h {
			if equal(x, needle) {
				return true
			}
		}
	case map[string]any:
		_, ok := h[toStr(needle)]
		return ok
	}
	return false
}
