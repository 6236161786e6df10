package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/scene"
)

// ErrNotFound is what a Resolver wraps when nothing on screen matches a
// Locator. It is device.ErrNotFound, so either name matches with errors.Is.
var ErrNotFound = device.ErrNotFound

// Locator says how to find one element on screen. In JSON it is either a
// plain string, which becomes Prompt, or an object with any of the fields:
//
//	"the blue Login button"
//	{"text": "Login", "type": "button", "index": 1}
//
// Which fields a Resolver honours, and how, is the Resolver's business; the
// action layer only carries them.
type Locator struct {
	// Prompt describes the element in natural language.
	Prompt string `json:"prompt,omitempty"`
	// Text is the element's visible text.
	Text string `json:"text,omitempty"`
	// ID is the element's short scene id ("e7") or its resource id
	// ("com.apex.shop:id/search").
	ID string `json:"id,omitempty"`
	// Desc is the element's content description / accessibility label.
	Desc string `json:"desc,omitempty"`
	// Type is the element's scene type: button, text, input, image, …
	Type string `json:"type,omitempty"`
	// Index picks among several matches, counting from 0 in reading order.
	// HasIndex tells an explicit 0 from none.
	Index int `json:"index,omitempty"`
	// Point, when set, is where to act, in device pixels ({"x": 120,
	// "y": 340} in JSON): a click on a screen's picture, or a vision
	// model's answer. The element there, if any, is looked up for the
	// record; the point is used as given.
	Point *device.Point `json:"-"`

	// indexSet records that JSON gave "index", even 0.
	indexSet bool
	// field is set on the locator of a param declared `locator:"focused"`:
	// it names a text field to type into (see NamesField).
	field bool
	// target is filled by Action.Run once the locator is resolved.
	target *Target
}

// HasIndex reports whether an index was given: Index > 0, or "index": 0
// in JSON. A Resolver picks by index when it is given, and may report
// ambiguity when several elements match and it is not.
func (l Locator) HasIndex() bool { return l.indexSet || l.Index > 0 }

// WithIndex returns l picking match i; unlike setting Index, it marks an
// index of 0 as given (for locators built in Go, e.g. from a script).
func (l Locator) WithIndex(i int) Locator {
	l.Index, l.indexSet = i, true
	return l
}

// Target is where a Locator was found.
type Target struct {
	// Point is where a tap on the element lands, in device pixels.
	Point device.Point `json:"point"`
	// Element is the scene element found, when the Resolver had one (a
	// vision model may return only a point).
	Element *scene.Element `json:"element,omitempty"`
}

// Resolver finds Locators on the current screen. Resolve returns an error
// wrapping ErrNotFound when nothing matches, so callers can scroll and retry;
// any other error means the screen could not be examined. Implementations
// must be safe for concurrent use.
type Resolver interface {
	Resolve(ctx context.Context, l Locator) (Target, error)
}

// ResolverFunc adapts a function to the Resolver interface.
type ResolverFunc func(ctx context.Context, l Locator) (Target, error)

// Resolve calls f.
func (f ResolverFunc) Resolve(ctx context.Context, l Locator) (Target, error) { return f(ctx, l) }

// Target returns where the locator was found; the zero Target until
// Action.Run (or the action's own call, for deferred locators) resolved it.
func (l *Locator) Target() Target {
	if l == nil || l.target == nil {
		return Target{}
	}
	return *l.target
}

// NamesField reports whether the locator names a text field to type into
// (the param is declared `locator:"focused"`, as Input's is): a Resolver
// prefers editable elements for it, and elements that are not editable
// for every other locator (a tap on "Compact Toaster" means the product,
// not the search field that holds the words just typed).
func (l Locator) NamesField() bool { return l.field }

// Resolved reports whether the locator has been found on screen.
func (l *Locator) Resolved() bool { return l != nil && l.target != nil }

func (l *Locator) setTarget(t Target) { l.target = &t }

// IsZero reports whether the locator says nothing at all.
func (l Locator) IsZero() bool {
	return l.Prompt == "" && l.Text == "" && l.ID == "" && l.Desc == "" && l.Type == "" && l.Index == 0 && l.Point == nil
}

// Equal reports whether two locators say the same: the same fields, index
// and point. Where one was found is not compared. (go-cmp uses Equal, so
// values holding Locators compare without options.)
func (l Locator) Equal(o Locator) bool {
	samePoint := l.Point == o.Point || l.Point != nil && o.Point != nil && *l.Point == *o.Point
	return l.Prompt == o.Prompt && l.Text == o.Text && l.ID == o.ID && l.Desc == o.Desc && l.Type == o.Type &&
		l.Index == o.Index && l.HasIndex() == o.HasIndex() && samePoint
}

// String renders the locator for logs and error messages.
func (l Locator) String() string {
	if l.Text == "" && l.ID == "" && l.Desc == "" && l.Type == "" && !l.HasIndex() && l.Point == nil {
		return strconv.Quote(l.Prompt)
	}
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+strconv.Quote(v))
		}
	}
	add("prompt", l.Prompt)
	add("text", l.Text)
	add("id", l.ID)
	add("desc", l.Desc)
	add("type", l.Type)
	if l.HasIndex() {
		parts = append(parts, "index="+strconv.Itoa(l.Index))
	}
	if l.Point != nil {
		parts = append(parts, fmt.Sprintf("x=%d y=%d", l.Point.X, l.Point.Y))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// MarshalJSON writes a prompt-only locator as a string and any other as an
// object, so a decoded locator encodes back to the same form.
func (l Locator) MarshalJSON() ([]byte, error) {
	if l.Prompt != "" && l.Text == "" && l.ID == "" && l.Desc == "" && l.Type == "" && !l.HasIndex() && l.Point == nil {
		return marshalText(l.Prompt)
	}
	o := locatorObject{Prompt: l.Prompt, Text: l.Text, ID: l.ID, Desc: l.Desc, Type: l.Type}
	if l.HasIndex() {
		o.Index = &l.Index
	}
	if l.Point != nil {
		o.X, o.Y = &l.Point.X, &l.Point.Y
	}
	return marshalText(o)
}

// marshalText encodes v without escaping <, > and &: an encoder that
// escapes HTML (json.Marshal) escapes a Marshaler's output itself, and one
// that does not (a person's view, Call.String) keeps the text as written.
func marshalText(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// locatorObject is the object form of a Locator: the same fields, without
// Locator's own JSON methods, so the strict decoder can check it.
type locatorObject struct {
	Prompt string `json:"prompt,omitempty"`
	Text   string `json:"text,omitempty"`
	ID     string `json:"id,omitempty"`
	Desc   string `json:"desc,omitempty"`
	Type   string `json:"type,omitempty"`
	Index  *int   `json:"index,omitempty" minimum:"0"`
	X      *int   `json:"x,omitempty" minimum:"0"`
	Y      *int   `json:"y,omitempty" minimum:"0"`
}

// UnmarshalJSON reads a string or an object strictly: unknown fields, wrong
// types, a negative index and an empty locator are all errors.
func (l *Locator) UnmarshalJSON(data []byte) error {
	data = trimJSONSpace(data)
	switch jsonKind(data) {
	case "string":
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return &FieldError{Message: "expected a string or an object: " + err.Error()}
		}
		if strings.TrimSpace(s) == "" {
			return &FieldError{Message: "is empty: describe the element, e.g. \"Login button\""}
		}
		*l = Locator{Prompt: s}
		return nil
	case "object":
		var o locatorObject
		if errs := locatorPlan.decodeObject("", data, reflect.ValueOf(&o).Elem(), "field"); len(errs) > 0 {
			return errs[0]
		}
		nl := Locator{Prompt: o.Prompt, Text: o.Text, ID: o.ID, Desc: o.Desc, Type: o.Type}
		if o.Index != nil {
			nl.Index, nl.indexSet = *o.Index, true
		}
		switch {
		case o.X != nil && o.Y != nil:
			nl.Point = &device.Point{X: *o.X, Y: *o.Y}
		case o.X != nil || o.Y != nil:
			return &FieldError{Message: "a point needs both x and y (device pixels)"}
		}
		if nl.Prompt == "" && nl.Text == "" && nl.ID == "" && nl.Desc == "" && nl.Type == "" && nl.Point == nil {
			return &FieldError{Message: "says nothing to find: give prompt, text, id, desc, type, or x and y"}
		}
		*l = nl
		return nil
	default:
		return &FieldError{Message: fmt.Sprintf("expected a string or an object {prompt,text,id,desc,type,index,x,y}, got %s", describeJSON(data))}
	}
}

var locatorPlan = mustPlan(reflect.TypeFor[locatorObject]())
