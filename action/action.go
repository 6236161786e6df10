package action

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"

	"github.com/apexagent/apex/device"
	"github.com/google/jsonschema-go/jsonschema"
)

// Env is what an action runs against.
type Env struct {
	// Driver is the device; actions call nothing else to act.
	Driver device.Driver
	// Resolver finds locator params on screen. Actions without locators
	// run without one.
	Resolver Resolver
	// Log receives one debug record per action; nil discards.
	Log *slog.Logger
	// Answer is what the action answered, set by its call: a setting's
	// value read back from the device (a device.Setting). Nil for actions
	// that only act.
	Answer any
}

var discard = slog.New(slog.DiscardHandler)

func (e *Env) log() *slog.Logger {
	if e.Log == nil {
		return discard
	}
	return e.Log
}

// Validator is implemented by params types with rules beyond their field
// types (say, "give from or start, not both"). Decode calls Validate after
// every field decoded cleanly; errors made with Invalid name their field.
type Validator interface {
	Validate() error
}

// Action is one declared action. It is immutable and safe for concurrent use.
type Action struct {
	name, description string
	aliases           []string
	params            reflect.Type
	plan              *structPlan
	// schema is built on first use: the JSON Schemas of every declared
	// action cost a program's start-up ~1.5 MB and tens of milliseconds,
	// and most commands never show one to a model.
	schema  func() actionSchema
	call    func(ctx context.Context, env *Env, p any) error
	effect  func(p any) Effect // nil: undeclared (see WithEffect)
	setting bool               // a device setting (AsSetting)
}

// LocatorField describes one params field of type Locator or *Locator.
type LocatorField struct {
	Name     string // JSON name
	Optional bool   // *Locator with omitempty: may be left out
	// Deferred locators (tag `locator:"deferred"`) are resolved by the
	// action's call itself, e.g. Scroll's untilVisible after each swipe.
	Deferred bool
	// Focused locators (tag `locator:"focused"` on a *Locator) name a text
	// field that, left out, is the focused one: a caller that sees the
	// screen may fill it with that field.
	Focused bool
}

// Define declares an action. P is its params struct; its exported fields are
// the params, named by their json tags. Fields without omitempty are
// required. Tags add rules: `jsonschema:"…"` or `description:"…"` describe
// the param to a model, `enum:"a,b"` limits a string, `minimum:"0"` and
// `maximum:"9"` bound a number, `default:"…"` fills an absent optional field,
// `locator:"deferred"` leaves a Locator for the call to resolve, and
// `locator:"focused"` marks a *Locator whose absence means the focused field. If *P
// implements Validator, Decode calls it. The declaration is complete with
// its Effect (WithEffect, WithEffectBy): whether running it again is safe.
//
// Define panics when P cannot be a params type (not a struct, a bad tag, a
// Locator nested below the top level): declarations are code, and a broken
// one should stop the program at start-up, as regexp.MustCompile does.
func Define[P any](name, description string, call func(ctx context.Context, env *Env, p *P) error) *Action {
	if !validName(name) {
		panic(fmt.Sprintf("action.Define(%q): a name is 1-64 letters, digits, _ or -, starting with a letter (model tool APIs demand it)", name))
	}
	t := reflect.TypeFor[P]()
	plan, err := planFor(t)
	if err != nil {
		panic(fmt.Sprintf("action.Define(%q): %v", name, err))
	}
	return &Action{
		name:        name,
		description: description,
		params:      t,
		plan:        plan,
		schema: sync.OnceValue(func() actionSchema {
			s, err := buildSchema(t, plan)
			if err != nil {
				panic(fmt.Sprintf("action.Define(%q): schema: %v", name, err))
			}
			raw, err := marshalSchema(s)
			if err != nil {
				panic(fmt.Sprintf("action.Define(%q): schema: %v", name, err))
			}
			return actionSchema{s, raw}
		}),
		call: func(ctx context.Context, env *Env, p any) error { return call(ctx, env, p.(*P)) },
	}
}

// actionSchema is an action's params schema and its JSON.
type actionSchema struct {
	schema *jsonschema.Schema
	json   json.RawMessage
}

func validName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i, c := range name {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '_' || c == '-')) {
			return false
		}
	}
	return true
}

// Name is the action's name, e.g. "Tap".
func (a *Action) Name() string { return a.name }

// Aliases are other names Space.Lookup accepts, e.g. Midscene's
// "AndroidBackButton" for Back.
func (a *Action) Aliases() []string { return append([]string(nil), a.aliases...) }

// WithAliases returns a copy of the action that Space.Lookup also finds by
// the given names.
func (a *Action) WithAliases(names ...string) *Action {
	c := *a
	c.aliases = append(append([]string(nil), a.aliases...), names...)
	return &c
}

// Description tells a model what the action does.
func (a *Action) Description() string { return a.description }

// ParamsType is the Go type of the action's params struct.
func (a *Action) ParamsType() reflect.Type { return a.params }

// Schema returns a copy of the JSON Schema of the params.
func (a *Action) Schema() *jsonschema.Schema { return a.schema().schema.CloneSchemas() }

// SchemaJSON returns the JSON Schema of the params as JSON. Callers must not
// modify the returned bytes.
func (a *Action) SchemaJSON() json.RawMessage { return a.schema().json }

// LocatorFields names the params that must be found on screen, in
// declaration order.
func (a *Action) LocatorFields() []string {
	names := []string{}
	for _, f := range a.plan.fields {
		if f.locator {
			names = append(names, f.name)
		}
	}
	return names
}

// Locators describes the locator params in declaration order.
func (a *Action) Locators() []LocatorField {
	var ls []LocatorField
	for _, f := range a.plan.fields {
		if f.locator {
			ls = append(ls, f.locatorField())
		}
	}
	return ls
}

// Signature renders the action and its params in one line, as a model reads
// it: `Tap(locate: locator)`.
func (a *Action) Signature() string { return signature(a.name, a.plan) }

// ModelText is the action's line in Space.Describe: its signature and
// description.
func (a *Action) ModelText() string { return a.Signature() + " — " + a.description }

// Decode reads JSON params strictly and returns a pointer to the params
// struct (*P). Empty input and null mean no params; a bare value is the
// action's first locator param, or its one required param ("Settings" is
// {"locate": "Settings"} for Tap, "com.apex.shop" {"app": …} for Launch). On bad input the error
// is a *ValidationError naming every wrong field and what was expected.
func (a *Action) Decode(raw json.RawMessage) (any, error) {
	raw = a.objectOfScalar(trimJSONSpace(raw))
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	p := reflect.New(a.params)
	var errs []*FieldError
	if !json.Valid(raw) {
		errs = []*FieldError{{Message: "params are not valid JSON: " + describeSyntaxError(raw)}}
	} else {
		errs = a.plan.decodeObject("", raw, p.Elem(), "param")
	}
	if len(errs) == 0 {
		if v, ok := p.Interface().(Validator); ok {
			errs = append(errs, validationErrors(v.Validate())...)
		}
	}
	if len(errs) > 0 {
		return nil, &ValidationError{Action: a.name, Fields: errs}
	}
	return p.Interface(), nil
}

// Run decodes the params, resolves each non-deferred locator through
// env.Resolver, and calls the action. Cancelling ctx stops waiting,
// resolving and driving; the error then wraps ctx.Err().
func (a *Action) Run(ctx context.Context, env *Env, raw json.RawMessage) error {
	p, err := a.Decode(raw)
	if err != nil {
		return err
	}
	return a.RunDecoded(ctx, env, p)
}

// RunDecoded resolves and calls with params already decoded by Decode, or
// built in Go as a *P of this action's params type: those are checked the
// way Decode checks JSON (enums, bounds, Validate), and their zero optional
// fields take their defaults.
func (a *Action) RunDecoded(ctx context.Context, env *Env, params any) error {
	pv := reflect.ValueOf(params)
	if params == nil || pv.Type() != reflect.PointerTo(a.params) || pv.IsNil() {
		return fmt.Errorf("%s: params are %T; want *%s", a.name, params, a.params)
	}
	if errs := a.plan.check(pv.Elem()); len(errs) > 0 {
		return &ValidationError{Action: a.name, Fields: errs}
	}
	if v, ok := params.(Validator); ok {
		if errs := validationErrors(v.Validate()); len(errs) > 0 {
			return &ValidationError{Action: a.name, Fields: errs}
		}
	}
	if env == nil || env.Driver == nil {
		return fmt.Errorf("%s: no device to act on (Env.Driver is nil)", a.name)
	}
	if err := a.resolve(ctx, env, pv.Elem()); err != nil {
		return err
	}
	env.log().DebugContext(ctx, "action", "name", a.name, "params", params)
	if err := a.call(ctx, env, params); err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	return nil
}

func (a *Action) resolve(ctx context.Context, env *Env, v reflect.Value) error {
	for _, f := range a.plan.fields {
		if !f.locator || f.deferred {
			continue
		}
		l := f.locatorIn(v)
		if l == nil {
			continue // an optional locator left out
		}
		if l.IsZero() {
			return fmt.Errorf("%s: %s is empty: say which element to find", a.name, f.name)
		}
		if l.Point != nil {
			l.setTarget(pointTarget(ctx, env, *l))
			continue
		}
		if env.Resolver == nil {
			return fmt.Errorf("%s: cannot find %s %s: no resolver to look at the screen (Env.Resolver is nil)", a.name, f.name, l)
		}
		t, err := env.Resolver.Resolve(ctx, *l)
		if err != nil {
			return fmt.Errorf("%s: cannot find %s %s on screen: %w", a.name, f.name, l, err)
		}
		l.setTarget(t)
	}
	return nil
}

// pointTarget is a point locator's target: the point as given, with the
// element the resolver finds there, if any (only for the record: a click
// on a picture of the screen lands where it was made).
func pointTarget(ctx context.Context, env *Env, l Locator) Target {
	t := Target{Point: *l.Point}
	if env.Resolver != nil {
		if found, err := env.Resolver.Resolve(ctx, l); err == nil {
			t.Element = found.Element
		}
	}
	return t
}

// locatorIn returns the Locator the params struct v holds in field f, nil
// for a nil *Locator, marked when it names a text field.
func (f *fieldPlan) locatorIn(v reflect.Value) *Locator {
	l := locatorAt(v.FieldByIndex(f.index))
	if l != nil && f.focused {
		l.field = true
	}
	return l
}

// locatorAt returns the Locator a field holds, or nil for a nil *Locator.
func locatorAt(fv reflect.Value) *Locator {
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return nil
		}
		return fv.Interface().(*Locator)
	}
	return fv.Addr().Interface().(*Locator)
}

// validationErrors flattens what a Validate method returned (one error, or
// several joined with errors.Join) into FieldErrors.
func validationErrors(err error) []*FieldError {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*FieldError
		for _, e := range j.Unwrap() {
			out = append(out, validationErrors(e)...)
		}
		return out
	}
	return []*FieldError{prefixed("", err)}
}

func describeSyntaxError(raw []byte) string {
	var v any
	err := json.Unmarshal(raw, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	}
	if err != nil {
		return err.Error()
	}
	return "unknown syntax error"
}
