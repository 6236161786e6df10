package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrNoJSON: a text answer holds no JSON value that could be read.
var ErrNoJSON = errors.New("llm: no JSON in the answer")

// maxCandidates bounds how many opening brackets ExtractJSON tries, so a
// long answer full of braces costs linear time, not quadratic.
const maxCandidates = 16

// ExtractJSON finds the JSON value in a model's text answer and returns it
// compacted. It reads answers that models without a JSON mode write: the
// whole text, a ```json code fence, an object with prose around it, and
// the usual slips — trailing commas, // and /* */ comments, Python's
// True/False/None, and brackets left open when the answer was cut off.
// Objects are preferred over arrays.
func ExtractJSON(text string) (json.RawMessage, error) {
	if v, ok := tryJSON(text); ok {
		return v, nil
	}
	for _, block := range fences(text) {
		if v, ok := tryJSON(block); ok {
			return v, nil
		}
		if v, ok := scan(block); ok {
			return v, nil
		}
	}
	if v, ok := scan(text); ok {
		return v, nil
	}
	excerpt := strings.TrimSpace(text)
	if len(excerpt) > 120 {
		excerpt = excerpt[:120] + "…"
	}
	return nil, fmt.Errorf("%w: %q", ErrNoJSON, excerpt)
}

// tryJSON accepts s if it is JSON as it stands or after repair.
func tryJSON(s string) (json.RawMessage, bool) {
	s = strings.TrimSpace(s)
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return nil, false
	}
	if v, ok := compact(s); ok {
		return v, true
	}
	v, ok := compact(repair(s))
	if ok && (string(v) == "{}" || string(v) == "[]") {
		// Repair that leaves nothing found nothing ("{{{{" is not {}).
		return nil, false
	}
	return v, ok
}

func compact(s string) (json.RawMessage, bool) {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return nil, false
	}
	return json.RawMessage(b.Bytes()), true
}

// fences returns the contents of ``` code fences, in order.
func fences(text string) []string {
	var out []string
	for {
		i := strings.Index(text, "```")
		if i < 0 {
			return out
		}
		rest := text[i+3:]
		// Skip the info string (json, JSON, js…) up to the line end.
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 && !strings.ContainsAny(rest[:nl], "{[") {
			rest = rest[nl+1:]
		}
		j := strings.Index(rest, "```")
		if j < 0 {
			return append(out, rest) // an unclosed fence: the answer was cut
		}
		out = append(out, rest[:j])
		text = rest[j+3:]
	}
}

// scan tries the value starting at each '{' (then each '['), taking the
// text up to its matching bracket.
func scan(text string) (json.RawMessage, bool) {
	for _, open := range []byte{'{', '['} {
		from, tries := 0, 0
		for tries < maxCandidates {
			i := strings.IndexByte(text[from:], open)
			if i < 0 {
				break
			}
			start := from + i
			from = start + 1
			if open == '{' && !looksLikeObject(text[start+1:]) {
				continue // prose in braces, not worth a parse
			}
			end := matchEnd(text, start)
			if v, ok := tryJSON(text[start:end]); ok {
				return v, true
			}
			tries++
		}
	}
	return nil, false
}

// looksLikeObject tells whether the text after a '{' starts like an
// object: a quoted key, the closing brace, or a comment.
func looksLikeObject(rest string) bool {
	rest = strings.TrimLeft(rest, " \t\r\n")
	return rest == "" || strings.IndexByte("\"'}/", rest[0]) >= 0
}

// matchEnd returns the index just past the bracket that closes the one at
// start, skipping strings; len(text) when it never closes.
func matchEnd(text string, start int) int {
	depth, inStr, esc := 0, byte(0), false
	for i := start; i < len(text); i++ {
		c := text[i]
		if inStr != 0 {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == inStr:
				inStr = 0
			}
			continue
		}
		switch c {
		case '"':
			inStr = c
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(text)
}

// repair fixes the slips models make, outside strings: comments, trailing
// commas, Python literals, single-quoted strings, and unclosed brackets.
func repair(s string) string {
	b := make([]byte, 0, len(s)+8)
	var stack []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			b, i = copyString(b, s, i)
			i--
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				i = len(s)
			} else {
				i += end + 3
			}
		case c == '{' || c == '[':
			stack = append(stack, c)
			b = append(b, c)
		case c == '}' || c == ']':
			b = dropTrailingComma(b)
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			b = append(b, c)
		case isWordStart(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			switch w := s[i:j]; w {
			case "True":
				b = append(b, "true"...)
			case "False":
				b = append(b, "false"...)
			case "None":
				b = append(b, "null"...)
			default:
				b = append(b, w...)
			}
			i = j - 1
		default:
			b = append(b, c)
		}
	}
	b = dropTrailingComma(b)
	for k := len(stack) - 1; k >= 0; k-- {
		b = dropTrailingComma(b)
		if stack[k] == '{' {
			b = append(b, '}')
		} else {
			b = append(b, ']')
		}
	}
	return string(b)
}

// copyString appends the string starting at s[i] as a JSON string (a
// single-quoted one is requoted; one cut off is closed) and returns the
// index past it.
func copyString(b []byte, s string, i int) ([]byte, int) {
	q := s[i]
	b = append(b, '"')
	j := i + 1
	for ; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '\\' && j+1 < len(s):
			if q == '\'' && s[j+1] == '\'' {
				b = append(b, '\'')
			} else {
				b = append(b, c, s[j+1])
			}
			j++
		case c == '\\':
			// A lone backslash at the cut: drop it.
		case c == q:
			return append(b, '"'), j + 1
		case c == '"': // only inside a single-quoted string
			b = append(b, '\\', '"')
		case c == '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return append(b, '"'), j
}

// dropTrailingComma removes a comma before a closing bracket, and gives a
// key left without its value (the answer was cut) a null.
func dropTrailingComma(b []byte) []byte {
	t := bytes.TrimRight(b, " \t\r\n")
	switch {
	case len(t) > 0 && t[len(t)-1] == ',':
		return t[:len(t)-1]
	case len(t) > 0 && t[len(t)-1] == ':':
		return append(t, "null"...)
	}
	return b
}

func isWordStart(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
func isWordByte(c byte) bool  { return isWordStart(c) || c >= '0' && c <= '9' || c == '_' }
