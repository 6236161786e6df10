package sim

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// SpecError is an invalid app spec: where, which field, and what was
// expected.
type SpecError struct {
	File  string
	Line  int
	Field string // dotted path: screens[2].elements[0].type
	Msg   string
}

func (e *SpecError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
}

// decoder fills Go structs from a yaml.Node tree, rejecting unknown keys
// and wrong kinds with the line and field path, which yaml.v3's own
// decoder does not give.
type decoder struct{ file string }

func (d *decoder) errf(n *yaml.Node, path, format string, a ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &SpecError{File: d.file, Line: line, Field: path, Msg: fmt.Sprintf(format, a...)}
}

var (
	durationType = reflect.TypeOf(Duration(0))
	actionType   = reflect.TypeOf(Action{})
	anyType      = reflect.TypeOf((*any)(nil)).Elem()
)

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return d.errf(n, path, "dangling alias")
		}
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" && v.Kind() != reflect.Interface {
		return nil
	}
	t := v.Type()
	switch {
	case t == durationType:
		dur, err := parseDuration(n)
		if err != nil {
			return d.errf(n, path, "expected a duration like 800ms or 1.5s, got %s", kindName(n))
		}
		v.SetInt(int64(dur))
		return nil
	case t == actionType && n.Kind == yaml.ScalarNode:
		// "- back" is short for "- back: true".
		switch n.Value {
		case "back", "home", "dismiss":
			return d.decode(&yaml.Node{Kind: yaml.MappingNode, Line: n.Line, Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Value: n.Value, Line: n.Line},
				{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true", Line: n.Line},
			}}, v, path)
		}
		return d.errf(n, path, "expected an action (a mapping like {navigate: cart}, or back, home, dismiss), got %s", kindName(n))
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		return d.decode(n, v.Elem(), path)
	case reflect.Struct:
		return d.decodeStruct(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return d.errf(n, path, "expected a list, got %s", kindName(n))
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, c := range n.Content {
			if err := d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return d.errf(n, path, "expected a mapping, got %s", kindName(n))
		}
		m := reflect.MakeMapWithSize(t, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return d.errf(k, path, "expected text keys")
			}
			ev := reflect.New(t.Elem()).Elem()
			if err := d.decode(val, ev, path+"."+k.Value); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k.Value), ev)
		}
		v.Set(m)
		return nil
	case reflect.Interface:
		var x any
		if err := n.Decode(&x); err != nil {
			return d.errf(n, path, "%v", err)
		}
		x = normalize(x)
		if x == nil {
			v.Set(reflect.Zero(t))
		} else {
			v.Set(reflect.ValueOf(x))
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return d.errf(n, path, "expected %s, got %s", t.Kind(), kindName(n))
	}
	switch t.Kind() {
	case reflect.String:
		v.SetString(n.Value)
	case reflect.Bool:
		b, err := strconv.ParseBool(n.Value)
		if err != nil || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			return d.errf(n, path, "expected true or false, got %s", kindName(n))
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		i, err := strconv.ParseInt(n.Value, 10, 64)
		if err != nil {
			return d.errf(n, path, "expected a whole number, got %s", kindName(n))
		}
		v.SetInt(i)
	case reflect.Float64:
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			return d.errf(n, path, "expected a number, got %s", kindName(n))
		}
		v.SetFloat(f)
	default:
		return d.errf(n, path, "unsupported field type %s", t)
	}
	return nil
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return d.errf(n, path, "expected a mapping, got %s", kindName(n))
	}
	t := v.Type()
	fields := map[string]int{}
	var known []string
	for i := range t.NumField() {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		fields[tag] = i
		known = append(known, tag)
	}
	if f, ok := t.FieldByName("Line"); ok && f.Type.Kind() == reflect.Int {
		v.FieldByIndex(f.Index).SetInt(int64(n.Line))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		fp := k.Value
		if path != "" {
			fp = path + "." + k.Value
		}
		idx, ok := fields[k.Value]
		if !ok {
			return d.errf(k, fp, "unknown field (known: %s)", strings.Join(known, ", "))
		}
		if seen[k.Value] {
			return d.errf(k, fp, "field given twice")
		}
		seen[k.Value] = true
		if err := d.decode(val, v.Field(idx), fp); err != nil {
			return err
		}
	}
	return nil
}

func parseDuration(n *yaml.Node) (time.Duration, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("not a scalar")
	}
	if ms, err := strconv.ParseFloat(n.Value, 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond)), nil
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bad duration")
	}
	return d, nil
}

// normalize turns YAML's ints into float64 and map[any]any into
// map[string]any, so expressions see one number type.
func normalize(x any) any {
	switch x := x.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case map[string]any:
		for k, v := range x {
			x[k] = normalize(v)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, v := range x {
			m[fmt.Sprint(k)] = normalize(v)
		}
		return m
	case []any:
		for i, v := range x {
			x[i] = normalize(v)
		}
		return x
	}
	return x
}

func reflectValue(ptr any) reflect.Value { return reflect.ValueOf(ptr).Elem() }
