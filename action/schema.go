package action

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// locatorSchema accepts what Locator.UnmarshalJSON accepts. It lists two
// types instead of using oneOf, because "properties" and "minProperties" only
// constrain objects and "minLength" only strings.
func locatorSchema() *jsonschema.Schema {
	// The properties go undescribed to keep tool definitions short; the
	// locator's own description and Space.Describe explain them.
	str := func() *jsonschema.Schema { return &jsonschema.Schema{Type: "string"} }
	return &jsonschema.Schema{
		Types:       []string{"string", "object"},
		Description: `An element on screen: a short description in words ("the Login button"), or an object with any of prompt, text, id (scene id like e7, or resource id), desc (content description), type (button, input, …), index (0-based, among several matches), or x and y (a point in device pixels).`,
		MinLength:   jsonschema.Ptr(1),
		Properties: map[string]*jsonschema.Schema{
			"prompt": str(),
			"text":   str(),
			"id":     str(),
			"desc":   str(),
			"type":   str(),
			"index":  {Type: "integer", Minimum: jsonschema.Ptr(0.0)},
			"x":      {Type: "integer", Minimum: jsonschema.Ptr(0.0)},
			"y":      {Type: "integer", Minimum: jsonschema.Ptr(0.0)},
		},
		PropertyOrder:        []string{"prompt", "text", "id", "desc", "type", "index", "x", "y"},
		DependentRequired:    map[string][]string{"x": {"y"}, "y": {"x"}},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		MinProperties:        jsonschema.Ptr(1),
	}
}

// distanceSchema accepts what Distance.UnmarshalJSON accepts: an integer of
// at least 1 (pixels), or "screen" or "half".
func distanceSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Types:       []string{"integer", "string"},
		Description: `How far: pixels (an integer), or "screen" or "half" of the scrolled area.`,
		Minimum:     jsonschema.Ptr(1.0),
		Pattern:     "^(screen|half)$",
	}
}

// buildSchema infers the JSON Schema of a params type and adds what the
// plan's tags say (descriptions, enums, defaults, bounds).
func buildSchema(t reflect.Type, p *structPlan) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		locatorType:  locatorSchema(),
		distanceType: distanceSchema(),
	}})
	if err != nil {
		return nil, err
	}
	if err := applyPlan(s, p); err != nil {
		return nil, err
	}
	if s.Properties == nil {
		// Tool APIs expect "properties" even when there are none.
		s.Properties = map[string]*jsonschema.Schema{}
	}
	return s, nil
}

func applyPlan(s *jsonschema.Schema, p *structPlan) error {
	for _, f := range p.fields {
		fs := s.Properties[f.name]
		if fs == nil {
			return fmt.Errorf("schema of %s has no property %q", p.typ, f.name)
		}
		switch {
		case f.desc != "" && f.locator:
			// A tool schema may be all a model sees: keep the locator's
			// own explanation after what this field is for.
			fs.Description = f.desc + ". " + locatorSchema().Description
		case f.desc != "":
			fs.Description = f.desc
		}
		if f.enum != nil {
			fs.Enum = make([]any, 0, len(f.enum)+1)
			for _, e := range f.enum {
				fs.Enum = append(fs.Enum, e)
			}
			if f.typ.Kind() == reflect.Pointer {
				fs.Enum = append(fs.Enum, nil)
			}
		}
		if f.min != nil {
			fs.Minimum = f.min
		}
		if f.max != nil {
			fs.Maximum = f.max
		}
		if f.defJSON != nil {
			fs.Default = f.defJSON
		}
		if sub, ok := nestedPlan(f.typ); ok {
			if err := applyPlan(fs, sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// nestedPlan returns the plan of a struct (or *struct) field that the strict
// decoder walks into, if the field is one.
func nestedPlan(t reflect.Type) (*structPlan, bool) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == locatorType || t == distanceType || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil, false
	}
	p, err := planFor(t)
	return p, err == nil
}

// signature renders the params as a model reads them:
// `Input(value: string, locate?: locator, mode?: "append"|"replace" = "replace")`.
func signature(name string, p *structPlan) string {
	parts := make([]string, len(p.fields))
	for i, f := range p.fields {
		parts[i] = paramText(f)
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}

func paramText(f *fieldPlan) string {
	var b strings.Builder
	b.WriteString(f.name)
	if !f.required {
		b.WriteString("?")
	}
	b.WriteString(": ")
	b.WriteString(paramType(f))
	if f.defJSON != nil {
		b.WriteString(" = ")
		b.Write(f.defJSON)
	}
	return b.String()
}

func paramType(f *fieldPlan) string {
	t := f.typ
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case f.enum != nil:
		return strings.ReplaceAll(quoteAll(f.enum), ", ", "|")
	case t == distanceType:
		return `integer px|"screen"|"half"`
	}
	if sub, ok := nestedPlan(t); ok {
		parts := make([]string, len(sub.fields))
		for i, sf := range sub.fields {
			parts[i] = paramText(sf)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	s := typeName(t)
	switch {
	case f.min != nil && f.max != nil:
		s += fmt.Sprintf(" %v..%v", *f.min, *f.max)
	case f.min != nil:
		s += fmt.Sprintf(" ≥%v", *f.min)
	case f.max != nil:
		s += fmt.Sprintf(" ≤%v", *f.max)
	}
	return s
}

func marshalSchema(s *jsonschema.Schema) (json.RawMessage, error) {
	return json.Marshal(s)
}
