package llm

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/apexagent/apex/internal/lazy"
	"github.com/apexagent/apex/internal/yamlerr"
	"gopkg.in/yaml.v3"
)

// ConfigError is a problem in apex.yaml, at the line to fix.
type ConfigError struct {
	File string
	Line int    // 1-based; 0 when the problem is not on one line
	Key  string // the setting, as a dotted path (model.roles.planner.temperature); "" for the file's shape
	Msg  string
}

func (e *ConfigError) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		s += ": " + e.Key
	}
	return s + ": " + e.Msg
}

// fieldError is a setting's value that is wrong; the loader turns it into
// a ConfigError at the setting's line.
type fieldError struct {
	key, msg string
}

func (e *fieldError) Error() string { return e.key + ": " + e.msg }

func fieldErrorf(key, format string, args ...any) error {
	return &fieldError{key: key, msg: fmt.Sprintf(format, args...)}
}

// at places err (a fieldError, or any other error) at its key's line in
// the mapping node whose settings are path.
func at(file string, node *yaml.Node, path string, err error) error {
	var fe *fieldError
	if !errors.As(err, &fe) {
		return &ConfigError{File: file, Line: node.Line, Key: path, Msg: err.Error()}
	}
	line := node.Line
	if k, _ := mapEntry(node, fe.key); k != nil {
		line = k.Line
	}
	return &ConfigError{File: file, Line: line, Key: path + "." + fe.key, Msg: fe.msg}
}

// syntaxError is apex.yaml's YAML error at the line to fix.
func syntaxError(file string, data []byte, err error) error {
	line, msg := yamlerr.Locate(data, err)
	return &ConfigError{File: file, Line: line, Msg: "invalid YAML: " + msg}
}

// mapEntry is the key and value nodes of key in mapping node n.
func mapEntry(n *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// checkKeys fails at the first key of mapping n that the struct v (its
// yaml tags, inline structs included) does not know, naming the one
// closest to it.
func checkKeys(file string, n *yaml.Node, path string, v any) error {
	if n.Kind != yaml.MappingNode {
		return &ConfigError{File: file, Line: n.Line, Key: path, Msg: "expected settings (key: value lines), got " + describeNode(n)}
	}
	known := yamlKeys(reflect.TypeOf(v))
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if slices.Contains(known, k.Value) {
			continue
		}
		msg := fmt.Sprintf("unknown setting %q", k.Value)
		if near := closest(k.Value, known); near != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", near)
		}
		return &ConfigError{File: file, Line: k.Line, Key: path, Msg: msg + "; known settings: " + strings.Join(known, ", ")}
	}
	return nil
}

// yamlKeys are the keys a struct type decodes, in field order.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" {
			keys = append(keys, yamlKeys(f.Type)...)
			continue
		}
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}

// closest is the known key within two edits of k, if any.
func closest(k string, known []string) string {
	best, bestD := "", 3
	for _, c := range known {
		if d := editDistance(k, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// typeMismatch is one of yaml.v3's type errors.
var typeMismatch = lazy.Regexp("^line (\\d+): cannot unmarshal !!\\w+ `(.*)` into (.+)$")

// typeError turns yaml.v3's type error (which names Go types) into a
// ConfigError that says what the setting takes, at the first bad line.
func typeError(file string, root *yaml.Node, path string, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return &ConfigError{File: file, Line: root.Line, Key: path, Msg: err.Error()}
	}
	m := typeMismatch().FindStringSubmatch(te.Errors[0])
	if m == nil {
		return &ConfigError{File: file, Line: root.Line, Key: path, Msg: te.Errors[0]}
	}
	line, _ := strconv.Atoi(m[1])
	key := path
	if k := keyAtLine(root, line, path); k != "" {
		key = k
	}
	return &ConfigError{File: file, Line: line, Key: key, Msg: fmt.Sprintf("%q is not %s", m[2], goTypeWords(m[3]))}
}

// keyAtLine is the dotted path of the setting whose value is on line.
func keyAtLine(n *yaml.Node, line int, path string) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := path + "." + k.Value
		if v.Line == line && v.Kind != yaml.MappingNode {
			return p
		}
		if sub := keyAtLine(v, line, p); sub != "" {
			return sub
		}
	}
	return ""
}

// goTypeWords says in words what a Go type holds.
func goTypeWords(t string) string {
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "text"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	}
	return "a group of settings (key: value lines)"
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	}
	return "something else"
}
