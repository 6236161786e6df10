package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Call is one action with its params, decoded: the typed form in which
// scripts, plans, the playground and MCP hand an action to the step
// engine. Params is a *P of the action's params type, as Decode returns it
// or as Go code builds it (&TapParams{…}).
type Call struct {
	Action *Action
	Params any
}

// NewCall pairs a with params built in Go; nil means no params (their
// defaults). Params must be a *P of a's params type.
func (a *Action) NewCall(params any) (Call, error) {
	if params == nil {
		p, err := a.Decode(nil)
		if err != nil {
			return Call{}, err
		}
		return Call{Action: a, Params: p}, nil
	}
	pv := reflect.ValueOf(params)
	if pv.Type() != reflect.PointerTo(a.params) || pv.IsNil() {
		return Call{}, fmt.Errorf("%s: params are %T; want *%s", a.name, params, a.params)
	}
	return Call{Action: a, Params: params}, nil
}

// MustCall is NewCall for params the code itself builds: a mismatch is a
// programming error.
func (a *Action) MustCall(params any) Call {
	c, err := a.NewCall(params)
	if err != nil {
		panic(err)
	}
	return c
}

// DecodeCall finds the named action and decodes its JSON params strictly.
func (s *Space) DecodeCall(name string, raw json.RawMessage) (Call, error) {
	a, err := s.Find(name)
	if err != nil {
		return Call{}, err
	}
	p, err := a.Decode(raw)
	if err != nil {
		return Call{}, err
	}
	return Call{Action: a, Params: p}, nil
}

// IsZero reports whether the call names no action.
func (c Call) IsZero() bool { return c.Action == nil }

// Name is the action's name, "" for the zero Call.
func (c Call) Name() string {
	if c.Action == nil {
		return ""
	}
	return c.Action.name
}

// Run resolves the call's locators and drives the device (Action.RunDecoded).
func (c Call) Run(ctx context.Context, env *Env) error {
	if c.Action == nil {
		return fmt.Errorf("action: run: the call names no action")
	}
	return c.Action.RunDecoded(ctx, env, c.Params)
}

// ParamsJSON encodes the params as the action's schema describes them.
func (c Call) ParamsJSON() json.RawMessage {
	if c.Params == nil {
		return json.RawMessage("{}")
	}
	raw, err := json.Marshal(c.Params)
	if err != nil {
		return json.RawMessage(fmt.Sprintf(`{"error":%q}`, err.Error()))
	}
	return raw
}

// Equal reports whether c and o call the same action (by name) with the
// same params, as JSON encodes them; go-cmp compares Calls with it.
func (c Call) Equal(o Call) bool {
	return c.Name() == o.Name() && (c.IsZero() || bytes.Equal(c.ParamsJSON(), o.ParamsJSON()))
}

// callJSON is a Call on the wire.
type callJSON struct {
	Action string          `json:"action"`
	Params json.RawMessage `json:"params,omitempty"`
}

// MarshalJSON writes {"action": name, "params": {…}}.
func (c Call) MarshalJSON() ([]byte, error) {
	return json.Marshal(callJSON{Action: c.Name(), Params: c.ParamsJSON()})
}

// String renders the call as a model or a log reads it:
// `Tap(locate: "Search")`. Params left at their zero value or their
// default are left out, so a call reads the same before and after its
// defaults are filled in.
func (c Call) String() string {
	if c.Action == nil {
		return "(no action)"
	}
	var parts []string
	pv := reflect.ValueOf(c.Params)
	if pv.Kind() == reflect.Pointer && !pv.IsNil() {
		v := pv.Elem()
		for _, f := range c.Action.plan.fields {
			fv := v.FieldByIndex(f.index)
			if fv.IsZero() || f.def.IsValid() && reflect.DeepEqual(fv.Interface(), f.def.Interface()) {
				continue
			}
			raw, err := marshalText(fv.Interface()) // a person reads it: "<" stays "<"
			if err != nil {
				continue
			}
			parts = append(parts, f.name+": "+string(raw))
		}
	}
	return c.Action.name + "(" + strings.Join(parts, ", ") + ")"
}

// LocatorRef is one locator param of a Call.
type LocatorRef struct {
	LocatorField
	// Locator points into the call's params; nil when an optional locator
	// was left out. After Run it carries its Target.
	Locator *Locator
}

// Locators lists the call's locator params in declaration order, found by
// reflection on the action's declaration.
func (c Call) Locators() []LocatorRef {
	if c.Action == nil {
		return nil
	}
	pv := reflect.ValueOf(c.Params)
	if pv.Kind() != reflect.Pointer || pv.IsNil() {
		return nil
	}
	var refs []LocatorRef
	for _, f := range c.Action.plan.fields {
		if !f.locator {
			continue
		}
		refs = append(refs, LocatorRef{
			LocatorField: f.locatorField(),
			Locator:      f.locatorIn(pv.Elem()),
		})
	}
	return refs
}

// Target is where the call's first resolved locator was found: the
// element an action touched, for the record. ok is false before Run, or
// for actions without locators.
func (c Call) Target() (t Target, ok bool) {
	for _, r := range c.Locators() {
		if r.Locator.Resolved() {
			return r.Locator.Target(), true
		}
	}
	return Target{}, false
}

// SetLocator sets the locator param named field (its JSON name), creating
// an optional one that was left out. Callers that fill a target they found
// (a planner, a resolver by model) use it instead of naming fields.
func (c Call) SetLocator(field string, l Locator) error {
	if c.Action == nil {
		return fmt.Errorf("action: set locator %s: the call names no action", field)
	}
	f := c.Action.plan.byName[field]
	if f == nil || !f.locator {
		return fmt.Errorf("%s has no locator param %q: its locators are %v", c.Action.name, field, c.Action.LocatorFields())
	}
	pv := reflect.ValueOf(c.Params)
	if pv.Kind() != reflect.Pointer || pv.IsNil() {
		return fmt.Errorf("%s: set locator %s: the call has no params", c.Action.name, field)
	}
	fv := pv.Elem().FieldByIndex(f.index)
	if fv.Kind() == reflect.Pointer {
		nl := l
		fv.Set(reflect.ValueOf(&nl))
		return nil
	}
	fv.Set(reflect.ValueOf(l))
	return nil
}

// Clone returns a call with a deep copy of the params, so a retry starts
// from the params as planned, without the targets an earlier attempt
// resolved.
func (c Call) Clone() Call {
	if c.Action == nil || c.Params == nil {
		return c
	}
	p, err := c.Action.Decode(c.ParamsJSON())
	if err != nil {
		// Params that decoded once encode and decode again; keep the
		// original rather than fail a retry on a bug.
		return c
	}
	return Call{Action: c.Action, Params: p}
}
