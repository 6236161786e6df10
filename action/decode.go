package action

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// decodeObject fills the struct v from a JSON object, strictly: unknown keys,
// missing required fields, nulls and wrong types are all reported, every one
// of them, in a stable order (unknown keys first, then fields in
// declaration order).
//
// noun is what the keys are called in messages: "param" at the top of an
// action's params, "field" inside them.
func (p *structPlan) decodeObject(path string, data []byte, v reflect.Value, noun string) []*FieldError {
	if k := jsonKind(data); k != "object" {
		return []*FieldError{{Field: path, Message: "expected an object, got " + describeJSON(data)}}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return []*FieldError{{Field: path, Message: "is not valid JSON: " + err.Error()}}
	}
	var errs []*FieldError
	keys := make([]string, 0, len(m))
	for k := range m {
		if p.byName[k] == nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		errs = append(errs, &FieldError{Field: joinPath(path, k), Message: p.unknownMessage(noun)})
	}
	for _, f := range p.fields {
		raw, ok := m[f.name]
		fv := v.FieldByIndex(f.index)
		switch {
		case ok:
			errs = append(errs, decodeValue(joinPath(path, f.name), raw, fv, f)...)
		case f.required:
			errs = append(errs, &FieldError{Field: joinPath(path, f.name), Message: "is required (" + typeName(f.typ) + ")"})
		case f.def.IsValid():
			fv.Set(f.def)
		}
	}
	return errs
}

func (p *structPlan) unknownMessage(what string) string {
	if len(p.fields) == 0 {
		return "unknown " + what + ": there are none to give"
	}
	names := make([]string, len(p.fields))
	for i, f := range p.fields {
		names[i] = f.name
	}
	return "unknown " + what + ": known " + what + "s are " + strings.Join(names, ", ")
}

// decodeValue fills v from one JSON value; f, when not nil, carries the
// field's enum and bounds.
func decodeValue(path string, data []byte, v reflect.Value, f *fieldPlan) []*FieldError {
	data = trimJSONSpace(data)
	kind := jsonKind(data)
	fail := func(format string, args ...any) []*FieldError {
		return []*FieldError{{Field: path, Message: fmt.Sprintf(format, args...)}}
	}
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		if kind == "null" {
			v.SetZero()
			return nil
		}
		elem := reflect.New(t.Elem())
		if errs := decodeValue(path, data, elem.Elem(), f); len(errs) > 0 {
			return errs
		}
		v.Set(elem)
		return nil
	}
	if kind == "null" {
		return fail("expected %s, got null", typeName(t))
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(data); err != nil {
			return []*FieldError{prefixed(path, err)}
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		p, err := planFor(t)
		if err != nil {
			return fail("%v", err)
		}
		return p.decodeObject(path, data, v, "field")
	case reflect.String:
		if kind != "string" {
			return fail("expected string, got %s", describeJSON(data))
		}
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fail("expected string: %v", err)
		}
		if f != nil && f.enum != nil && !slices.Contains(f.enum, s) {
			return fail("must be one of %s; got %q", quoteAll(f.enum), s)
		}
		v.SetString(s)
	case reflect.Bool:
		if kind != "boolean" {
			return fail("expected boolean, got %s", describeJSON(data))
		}
		v.SetBool(data[0] == 't')
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if kind != "number" {
			return fail("expected %s, got %s", typeName(t), describeJSON(data))
		}
		return setNumber(path, string(data), v, f)
	case reflect.Slice:
		if kind != "array" {
			return fail("expected %s, got %s", typeName(t), describeJSON(data))
		}
		var items []json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil {
			return fail("expected %s: %v", typeName(t), err)
		}
		s := reflect.MakeSlice(t, len(items), len(items))
		var errs []*FieldError
		for i, item := range items {
			errs = append(errs, decodeValue(path+"["+strconv.Itoa(i)+"]", item, s.Index(i), nil)...)
		}
		v.Set(s)
		return errs
	case reflect.Map:
		if t.Key().Kind() != reflect.String || kind != "object" {
			return fail("expected %s, got %s", typeName(t), describeJSON(data))
		}
		var items map[string]json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil {
			return fail("expected object: %v", err)
		}
		m := reflect.MakeMapWithSize(t, len(items))
		var errs []*FieldError
		for k, item := range items {
			ev := reflect.New(t.Elem()).Elem()
			errs = append(errs, decodeValue(joinPath(path, k), item, ev, nil)...)
			m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), ev)
		}
		v.Set(m)
		return errs
	default:
		if err := json.Unmarshal(data, v.Addr().Interface()); err != nil {
			return fail("%v", err)
		}
	}
	return nil
}

// setNumber accepts what JSON Schema calls an integer (any number without a
// fractional part, 2.0 included) for integer fields, and checks ranges.
func setNumber(path, text string, v reflect.Value, f *fieldPlan) []*FieldError {
	fail := func(format string, args ...any) []*FieldError {
		return []*FieldError{{Field: path, Message: fmt.Sprintf(format, args...)}}
	}
	x, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return fail("expected %s, got %q", typeName(v.Type()), text)
	}
	if err != nil || math.IsInf(x, 0) {
		return fail("number %s is out of range", text)
	}
	if f != nil && f.min != nil && x < *f.min {
		return fail("must be at least %v; got %s", *f.min, text)
	}
	if f != nil && f.max != nil && x > *f.max {
		return fail("must be at most %v; got %s", *f.max, text)
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if v.OverflowFloat(x) {
			return fail("number %s is out of range", text)
		}
		v.SetFloat(x)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, perr := strconv.ParseInt(text, 10, 64)
		if perr != nil {
			if x != math.Trunc(x) {
				return fail("expected integer, got %s", text)
			}
			if x < math.MinInt64 || x >= math.MaxInt64 {
				return fail("integer %s is out of range", text)
			}
			n = int64(x)
		}
		if v.OverflowInt(n) {
			return fail("integer %s is out of range", text)
		}
		v.SetInt(n)
	default: // unsigned
		n, perr := strconv.ParseUint(text, 10, 64)
		if perr != nil {
			if x != math.Trunc(x) {
				return fail("expected non-negative integer, got %s", text)
			}
			if x < 0 || x >= math.MaxUint64 {
				return fail("integer %s is out of range for a non-negative integer", text)
			}
			n = uint64(x)
		}
		if v.OverflowUint(n) {
			return fail("integer %s is out of range", text)
		}
		v.SetUint(n)
	}
	return nil
}

// jsonKind names the kind of a JSON value from its first byte; the value
// itself was already checked for syntax by the enclosing decode.
func jsonKind(data []byte) string {
	if len(data) == 0 {
		return "nothing"
	}
	switch c := data[0]; {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "number"
	}
	return "invalid JSON"
}

// describeJSON says what a model sent, briefly: `number 42`, `string "x"`.
func describeJSON(data []byte) string {
	k := jsonKind(data)
	switch k {
	case "number", "string", "boolean":
		s := string(data)
		if r := []rune(s); len(r) > 40 {
			s = string(r[:37]) + "…"
		}
		return k + " " + s
	}
	return k
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// trimJSONSpace drops the whitespace JSON allows around a value, and no
// other (bytes.TrimSpace would also drop \v and U+0085, which JSON refuses).
func trimJSONSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// check applies to params built in Go what decoding applies to JSON: zero
// optional fields take their defaults, then enums and bounds are checked.
// Params that came from decodeObject pass unchanged.
func (p *structPlan) check(v reflect.Value) []*FieldError {
	var errs []*FieldError
	for _, f := range p.fields {
		fv := v.FieldByIndex(f.index)
		if fv.IsZero() && f.def.IsValid() {
			fv.Set(f.def)
		}
		for fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				break
			}
			fv = fv.Elem()
		}
		switch fv.Kind() {
		case reflect.String:
			if f.enum != nil && !slices.Contains(f.enum, fv.String()) {
				errs = append(errs, &FieldError{Field: f.name, Message: fmt.Sprintf("must be one of %s; got %q", quoteAll(f.enum), fv.String())})
			}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			errs = append(errs, bounds(f, float64(fv.Int()))...)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			errs = append(errs, bounds(f, float64(fv.Uint()))...)
		case reflect.Float32, reflect.Float64:
			errs = append(errs, bounds(f, fv.Float())...)
		}
	}
	return errs
}

func bounds(f *fieldPlan, x float64) []*FieldError {
	switch {
	case f.min != nil && x < *f.min:
		return []*FieldError{{Field: f.name, Message: fmt.Sprintf("must be at least %v; got %v", *f.min, x)}}
	case f.max != nil && x > *f.max:
		return []*FieldError{{Field: f.name, Message: fmt.Sprintf("must be at most %v; got %v", *f.max, x)}}
	}
	return nil
}
