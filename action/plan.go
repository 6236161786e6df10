package action

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// A plan is what reflection learns about a params struct once, at Define
// time: its JSON fields and their rules. Decoding, the schema, the locator
// scan and the model text all read the same plan, so they cannot disagree.
type structPlan struct {
	typ    reflect.Type
	fields []*fieldPlan
	byName map[string]*fieldPlan
}

type fieldPlan struct {
	name     string // JSON name
	index    []int
	typ      reflect.Type
	required bool
	desc     string   // from the jsonschema or description tag
	enum     []string // from the enum tag, for string fields
	min, max *float64 // from the minimum and maximum tags, for numbers
	// def is the value an absent optional field takes (default tag).
	def     reflect.Value
	defJSON json.RawMessage
	// locator is set for fields of type Locator or *Locator; deferred ones
	// (tag locator:"deferred") are resolved by the call, not by Run;
	// focused ones (tag locator:"focused", optional only) mean the focused
	// field when left out.
	locator  bool
	deferred bool
	focused  bool
}

// locatorField describes a locator field to callers outside the plan.
func (f *fieldPlan) locatorField() LocatorField {
	return LocatorField{Name: f.name, Optional: !f.required, Deferred: f.deferred, Focused: f.focused}
}

var (
	locatorType  = reflect.TypeFor[Locator]()
	distanceType = reflect.TypeFor[Distance]()
	plans        sync.Map // reflect.Type -> *structPlan
)

// planFor returns the plan of a struct type, building it (and the plans of
// the struct types it contains) on first use.
func planFor(t reflect.Type) (*structPlan, error) {
	if p, ok := plans.Load(t); ok {
		return p.(*structPlan), nil
	}
	p, err := buildPlan(t, map[reflect.Type]bool{})
	if err != nil {
		return nil, err
	}
	actual, _ := plans.LoadOrStore(t, p)
	return actual.(*structPlan), nil
}

func mustPlan(t reflect.Type) *structPlan {
	p, err := planFor(t)
	if err != nil {
		panic(err)
	}
	return p
}

func buildPlan(t reflect.Type, building map[reflect.Type]bool) (*structPlan, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("params type %s is a %s; want a struct", t, t.Kind())
	}
	if building[t] {
		return nil, fmt.Errorf("params type %s refers to itself", t)
	}
	building[t] = true
	defer delete(building, t)

	p := &structPlan{typ: t, byName: map[string]*fieldPlan{}}
	for _, sf := range reflect.VisibleFields(t) {
		if sf.Anonymous {
			if sf.Type.Kind() == reflect.Pointer {
				return nil, fmt.Errorf("%s.%s: embedded pointers are not supported in params", t, sf.Name)
			}
			continue // its fields are visible on their own
		}
		if !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f := &fieldPlan{
			name:     name,
			index:    sf.Index,
			typ:      sf.Type,
			required: !strings.Contains(","+opts+",", ",omitempty,") && !strings.Contains(","+opts+",", ",omitzero,"),
			desc:     sf.Tag.Get("jsonschema"),
		}
		if d := sf.Tag.Get("description"); d != "" {
			f.desc = d
		}
		if err := f.readTags(sf); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", t, sf.Name, err)
		}
		if err := checkNested(f.typ, f.locator, building); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", t, sf.Name, err)
		}
		if _, dup := p.byName[name]; dup {
			return nil, fmt.Errorf("%s: two fields are named %q in JSON", t, name)
		}
		p.fields = append(p.fields, f)
		p.byName[name] = f
	}
	return p, nil
}

func (f *fieldPlan) readTags(sf reflect.StructField) error {
	base := f.typ
	if base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	f.locator = base == locatorType
	switch tag := sf.Tag.Get("locator"); {
	case tag == "deferred" && f.locator:
		f.deferred = true
	case tag == "focused" && f.locator && f.typ.Kind() == reflect.Pointer:
		f.focused = true
	case tag != "":
		return fmt.Errorf("locator tag %q: only \"deferred\" on a Locator field, or \"focused\" on a *Locator field, is known", tag)
	}
	if e := sf.Tag.Get("enum"); e != "" {
		if base.Kind() != reflect.String {
			return fmt.Errorf("enum tag on a %s field; enums are for strings", base)
		}
		f.enum = strings.Split(e, ",")
	}
	for tag, dst := range map[string]**float64{"minimum": &f.min, "maximum": &f.max} {
		s := sf.Tag.Get(tag)
		if s == "" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%s tag %q is not a number", tag, s)
		}
		*dst = &v
	}
	if d, ok := sf.Tag.Lookup("default"); ok {
		if f.required {
			return fmt.Errorf("default tag on a required field; mark it omitempty")
		}
		if err := f.setDefault(d); err != nil {
			return err
		}
	}
	return nil
}

// setDefault reads a default tag as JSON of the field's type, or, when that
// fails, as a JSON string (so `default:"replace"` needs no inner quotes).
func (f *fieldPlan) setDefault(tag string) error {
	for _, raw := range []string{tag, strconv.Quote(tag)} {
		v := reflect.New(f.typ).Elem()
		if errs := decodeValue("", json.RawMessage(raw), v, f); len(errs) == 0 {
			f.def = v
			b, err := json.Marshal(v.Interface())
			if err != nil {
				return fmt.Errorf("default %q: %w", tag, err)
			}
			f.defJSON = b
			return nil
		}
	}
	return fmt.Errorf("default %q is not a valid %s", tag, typeName(f.typ))
}

// checkNested builds plans for the struct types a field holds, and refuses
// Locators anywhere but at the top of the params: Run resolves only those,
// so a nested one would silently go unresolved.
func checkNested(t reflect.Type, top bool, building map[reflect.Type]bool) error {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		if t.Kind() != reflect.Pointer {
			top = false
		}
		t = t.Elem()
	}
	switch {
	case t == locatorType && !top:
		return fmt.Errorf("a Locator must be a top-level params field (Locator or *Locator) to be resolved")
	case t == locatorType || t == distanceType || t.Kind() != reflect.Struct:
		return nil
	case reflect.PointerTo(t).Implements(unmarshalerType):
		return nil
	}
	p, err := buildPlan(t, building)
	if err != nil {
		return err
	}
	for _, f := range p.fields {
		if f.locator {
			return fmt.Errorf("field %s: a Locator must be a top-level params field to be resolved", f.name)
		}
	}
	plans.LoadOrStore(t, p)
	return nil
}

// typeName is how errors and model text name a Go type in JSON terms.
func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case locatorType:
		return "locator"
	case distanceType:
		return `distance (pixels, or "screen" or "half")`
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array of " + typeName(t.Elem())
	case reflect.Struct, reflect.Map:
		return "object"
	}
	return "value"
}
