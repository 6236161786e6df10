package action

import (
	"fmt"
	"reflect"
)

// Effect is what running an action a second time does to the device: the
// part of its declaration that tells a retry whether repeating it is safe.
// Every action of a space declares it (a test over the spaces fails when
// one does not); callers treat an undeclared action as Cumulative.
type Effect uint8

const (
	// Undeclared: the declaration does not say.
	Undeclared Effect = iota
	// Idempotent actions leave the state one run left however often they
	// run: Launch, Input that replaces a field's text, Scroll until an
	// element shows. Repeating one is safe.
	Idempotent
	// Cumulative actions add their effect on every run: a tap counts (a
	// hidden tap counter, a quantity), a key types or goes back once more,
	// appended text grows. Repeating one needs evidence that the first run
	// did nothing.
	Cumulative
)

func (e Effect) String() string {
	switch e {
	case Idempotent:
		return "idempotent"
	case Cumulative:
		return "cumulative"
	}
	return "undeclared"
}

// WithEffect returns a copy of the action declared to have effect e
// whatever its params.
func (a *Action) WithEffect(e Effect) *Action {
	c := *a
	c.effect = func(any) Effect { return e }
	return &c
}

// WithEffectBy returns a copy of a whose effect depends on its params (Input
// appends or replaces). P must be a's params type: a mismatch is a broken
// declaration and panics, as Define does.
func WithEffectBy[P any](a *Action, f func(p *P) Effect) *Action {
	if t := reflect.TypeFor[P](); t != a.params {
		panic(fmt.Sprintf("action.WithEffectBy(%s): params type %s; want %s", a.name, t, a.params))
	}
	c := *a
	c.effect = func(p any) Effect {
		pp, ok := p.(*P)
		if !ok || pp == nil {
			var zero P
			pp = &zero
		}
		return f(pp)
	}
	return &c
}

// Effect is what running the action again with params (a *P, or nil for
// its defaults) does; Undeclared when its declaration does not say.
func (a *Action) Effect(params any) Effect {
	if a.effect == nil {
		return Undeclared
	}
	return a.effect(params)
}

// Effect is what running the call again does (Action.Effect of its
// params); Undeclared for the zero Call.
func (c Call) Effect() Effect {
	if c.Action == nil {
		return Undeclared
	}
	return c.Action.Effect(c.Params)
}
