package wda

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apexagent/apex/sim"
)

// ClassChain is a parsed WebDriverAgent class chain:
// "**/XCUIElementTypeCell[`name BEGINSWITH 'A'`][-1]/XCUIElementTypeButton".
// Steps are separated by "/"; "**/" makes the next step search all
// descendants instead of children; a step is an element type or "*",
// qualified by [n] (1-based, negative from the end), [`predicate`] and
// [$predicate$] (has a descendant matching it), applied left to right.
type ClassChain struct{ steps []chainStep }

type chainStep struct {
	descendant bool
	typ        string // "" for *
	filters    []chainFilter
}

type chainFilter struct {
	index int // 1-based; negative from the end; 0 when a predicate
	pred  *Predicate
	deep  bool // $predicate$: a descendant must match
}

// ParseClassChain parses a class chain query.
func ParseClassChain(src string) (*ClassChain, error) {
	if err := checkQuery("class chain", src); err != nil {
		return nil, err
	}
	if strings.TrimSpace(src) == "" {
		return nil, fmt.Errorf("class chain is empty")
	}
	c := &ClassChain{}
	i := 0
	for {
		var st chainStep
		if strings.HasPrefix(src[i:], "**/") {
			st.descendant = true
			i += 3
		}
		start := i
		for i < len(src) && src[i] != '[' && src[i] != '/' {
			i++
		}
		name := src[start:i]
		switch {
		case name == "*":
		case name == "":
			return nil, fmt.Errorf("invalid class chain %q: expected an element type or * at offset %d", src, start)
		case strings.HasPrefix(name, "XCUIElementType") && isIdent(name):
			st.typ = name
		case isIdent(name):
			st.typ = "XCUIElementType" + name
		default:
			return nil, fmt.Errorf("invalid class chain %q: %q is not an element type", src, name)
		}
		for i < len(src) && src[i] == '[' {
			f, n, err := parseChainFilter(src[i:])
			if err != nil {
				return nil, fmt.Errorf("invalid class chain %q at offset %d: %w", src, i, err)
			}
			st.filters = append(st.filters, f)
			i += n
		}
		c.steps = append(c.steps, st)
		if i == len(src) {
			return c, nil
		}
		if src[i] != '/' {
			return nil, fmt.Errorf("invalid class chain %q: unexpected %q at offset %d", src, src[i:i+1], i)
		}
		i++
		if i == len(src) {
			return nil, fmt.Errorf("invalid class chain %q: ends with '/'", src)
		}
	}
}

func isIdent(s string) bool {
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// parseChainFilter reads one [...] qualifier and returns its length.
func parseChainFilter(s string) (chainFilter, int, error) {
	if len(s) > 1 && (s[1] == '`' || s[1] == '$') {
		q := s[1]
		end := strings.IndexByte(s[2:], q)
		if end < 0 {
			return chainFilter{}, 0, fmt.Errorf("unclosed %c predicate", q)
		}
		body := s[2 : 2+end]
		n := 2 + end + 1
		if n >= len(s) || s[n] != ']' {
			return chainFilter{}, 0, fmt.Errorf("expected ']' after the predicate")
		}
		p, err := ParsePredicate(body)
		if err != nil {
			return chainFilter{}, 0, err
		}
		return chainFilter{pred: p, deep: q == '$'}, n + 1, nil
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return chainFilter{}, 0, fmt.Errorf("unclosed '['")
	}
	idx, err := strconv.Atoi(strings.TrimSpace(s[1:end]))
	if err != nil || idx == 0 || idx > 1<<20 || idx < -(1<<20) {
		return chainFilter{}, 0, fmt.Errorf("index %q: use a non-zero integer (1 is the first, -1 the last)", s[1:end])
	}
	return chainFilter{index: idx}, end + 1, nil
}

// find evaluates the chain below root.
func (c *ClassChain) find(root found) []found {
	cur := []found{root}
	for _, st := range c.steps {
		var next []found
		seen := map[string]bool{}
		for _, f := range cur {
			var cands []found
			if st.descendant {
				cands = descendants(f.e, f.path, nil)
			} else {
				for i, ch := range f.e.Children {
					cands = append(cands, found{ch, append(slices.Clip(f.path), i)})
				}
			}
			for _, cand := range cands {
				if st.typ != "" && cand.e.Type != st.typ {
					continue
				}
				key := fmt.Sprint(cand.path)
				if seen[key] {
					continue
				}
				seen[key] = true
				next = append(next, cand)
			}
		}
		for _, flt := range st.filters {
			next = flt.apply(next)
		}
		cur = next
		if len(cur) == 0 {
			return nil
		}
	}
	return cur
}

func (f chainFilter) apply(in []found) []found {
	if f.pred == nil {
		i := f.index - 1
		if f.index < 0 {
			i = len(in) + f.index
		}
		if i < 0 || i >= len(in) {
			return nil
		}
		return in[i : i+1]
	}
	var out []found
	for _, c := range in {
		if f.deep {
			if !c.e.Walk(func(d *sim.XCUIElement) bool { return d == c.e || !f.pred.Match(d) }) {
				out = append(out, c)
			}
		} else if f.pred.Match(c.e) {
			out = append(out, c)
		}
	}
	return out
}
