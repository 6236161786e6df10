package action

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/scene"
)

// TextClearer is an optional Driver extension: a driver that can empty the
// focused field in one step (select-all + delete, or a platform call)
// implements it, and Input and ClearInput use it instead of pressing delete
// once per character.
type TextClearer interface {
	ClearText(ctx context.Context) error
}

// DoubleTapper is an optional Driver extension for drivers that can tap
// twice within the platform's double-tap timeout; without it, DoubleTap
// sends two Taps back to back.
type DoubleTapper interface {
	DoubleTap(ctx context.Context, p device.Point) error
}

// Dragger is an optional Driver extension for drivers with a real drag
// gesture (hold, then move: Android's "input draganddrop"). Without it,
// DragAndDrop sends a slow Swipe, which lists and launchers may take for a
// scroll.
type Dragger interface {
	Drag(ctx context.Context, from, to device.Point, d time.Duration) error
}

// defaultClearPresses is how many deletes empty a field whose text is
// unknown (located by a point only, or the focused field).
const defaultClearPresses = 40

// Params of the common actions. Their field tags are the whole contract: the
// schema, validation and model text are derived from them.
type (
	TapParams struct {
		Locate Locator `json:"locate" jsonschema:"the element to tap"`
	}
	LongPressParams struct {
		Locate   Locator `json:"locate" jsonschema:"the element to press"`
		Duration int     `json:"duration,omitempty" jsonschema:"how long to hold, in milliseconds" default:"1000" minimum:"100" maximum:"10000"`
	}
	InputParams struct {
		Value  string   `json:"value" jsonschema:"the text to type"`
		Locate *Locator `json:"locate,omitempty" jsonschema:"the field to type into; the focused field when left out" locator:"focused"`
		Mode   string   `json:"mode,omitempty" jsonschema:"replace the field's text, append to it, or clear it (value is then ignored)" enum:"replace,append,clear" default:"replace"`
	}
	ClearInputParams struct {
		Locate *Locator `json:"locate,omitempty" jsonschema:"the field to clear; the focused field when left out" locator:"focused"`
	}
	KeyboardPressParams struct {
		KeyName string   `json:"keyName" jsonschema:"the key: enter, delete (backspace), tab, escape, space, up, down, left, right, home, back, volume_up, volume_down, search, …"`
		Locate  *Locator `json:"locate,omitempty" jsonschema:"an element to tap first, to focus it"`
	}
	AppParams struct {
		App string `json:"app" jsonschema:"the app's package name (Android) or bundle id (iOS), e.g. com.apex.shop"`
	}
	SleepParams struct {
		Ms int `json:"ms" jsonschema:"how long to wait, in milliseconds" minimum:"0" maximum:"600000"`
	}
)

// Validate checks the key name, so a bad one is a params error.
func (p *KeyboardPressParams) Validate() error {
	if _, err := device.ParseKey(p.KeyName); err != nil {
		return Invalid("keyName", "%v", err)
	}
	return nil
}

// Validate refuses an empty app id.
func (p *AppParams) Validate() error {
	if p.App == "" {
		return Invalid("app", "is empty: give a package name or bundle id, e.g. com.apex.shop")
	}
	return nil
}

// The common actions, shared by every platform.
var (
	Tap = Define("Tap", "Tap an element once.",
		func(ctx context.Context, env *Env, p *TapParams) error {
			return env.Driver.Tap(ctx, p.Locate.Target().Point)
		}).WithEffect(Cumulative)

	DoubleTap = Define("DoubleTap", "Tap an element twice quickly (zoom, like, select a word).",
		func(ctx context.Context, env *Env, p *TapParams) error {
			pt := p.Locate.Target().Point
			if d, ok := extension[DoubleTapper](env.Driver); ok {
				return d.DoubleTap(ctx, pt)
			}
			if err := env.Driver.Tap(ctx, pt); err != nil {
				return err
			}
			return env.Driver.Tap(ctx, pt)
		}).WithEffect(Cumulative)

	LongPress = Define("LongPress", "Press and hold an element (context menus, selection, drag handles).",
		func(ctx context.Context, env *Env, p *LongPressParams) error {
			return env.Driver.LongPress(ctx, p.Locate.Target().Point, time.Duration(p.Duration)*time.Millisecond)
		}).WithAliases("AndroidLongPress").WithEffect(Cumulative)

	Input = WithEffectBy(Define("Input", "Type text into a text field. By default the field's text is replaced.",
		func(ctx context.Context, env *Env, p *InputParams) error {
			field, err := focus(ctx, env, p.Locate)
			if err != nil {
				return err
			}
			if p.Mode != "append" {
				if err := clearField(ctx, env, field); err != nil {
					return err
				}
			}
			if p.Mode == "clear" || p.Value == "" {
				return nil
			}
			return env.Driver.InputText(ctx, p.Value)
		}), func(p *InputParams) Effect {
		if p.Mode == "append" {
			return Cumulative
		}
		return Idempotent // the field ends up holding the value (or nothing)
	})

	ClearInput = Define("ClearInput", "Delete all text in a text field.",
		func(ctx context.Context, env *Env, p *ClearInputParams) error {
			field, err := focus(ctx, env, p.Locate)
			if err != nil {
				return err
			}
			return clearField(ctx, env, field)
		}).WithEffect(Idempotent)

	KeyboardPress = Define("KeyboardPress", "Press a key, e.g. Enter to submit a search.",
		func(ctx context.Context, env *Env, p *KeyboardPressParams) error {
			k, err := device.ParseKey(p.KeyName)
			if err != nil {
				return err
			}
			if _, err := focus(ctx, env, p.Locate); err != nil {
				return err
			}
			return env.Driver.PressKey(ctx, k)
		}).WithEffect(Cumulative)

	// app may also be a component, an app's name on the home screen or a
	// URL (launch.go); the description stays short for the planner.
	Launch = Define("Launch", "Start an app, or bring it to the front.",
		func(ctx context.Context, env *Env, p *AppParams) error {
			return launch(ctx, env, p.App)
		}).WithEffect(Idempotent)

	Terminate = Define("Terminate", "Force-stop an app.",
		func(ctx context.Context, env *Env, p *AppParams) error {
			return env.Driver.TerminateApp(ctx, p.App)
		}).WithEffect(Idempotent)

	Sleep = Define("Sleep", "Wait, e.g. for an animation or a slow load, before the next step.",
		func(ctx context.Context, env *Env, p *SleepParams) error {
			t := time.NewTimer(time.Duration(p.Ms) * time.Millisecond)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return fmt.Errorf("sleep of %d ms interrupted: %w", p.Ms, ctx.Err())
			}
		}).WithEffect(Idempotent)
)

// focus taps a located field so that typing goes there, and returns where
// it was found. A nil locator means the focused field (nil target).
func focus(ctx context.Context, env *Env, l *Locator) (*Target, error) {
	if l == nil {
		return nil, nil
	}
	t := l.Target()
	if err := env.Driver.Tap(ctx, t.Point); err != nil {
		return nil, fmt.Errorf("focus %s: %w", l, err)
	}
	return &t, nil
}

// clearRereads bounds how often clearField reads a field back and deletes
// what is left.
const clearRereads = 3

// clearField empties the focused field: in one step when the driver can,
// otherwise by pressing delete once per character of the field's known
// text, or defaultClearPresses times when the text is unknown.
//
// The known text is the Scene's, which can lag behind the field (a
// keyboard still committing the last characters, runs of spaces the Scene
// collapses): a field found on screen is read back, and as long as it
// still shows the start of the text it held, or that text and more, what
// is left is deleted too. A field that shows something else is empty and
// shows its hint; one whose text stops changing cannot be emptied by
// delete (its caret is not at the end) and is left for the step's check
// to judge.
func clearField(ctx context.Context, env *Env, field *Target) error {
	if c, ok := extension[TextClearer](env.Driver); ok {
		return c.ClearText(ctx)
	}
	var el *scene.Element
	if field != nil {
		el = field.Element
	}
	if el == nil || el.Flags.Password {
		// A password's dots may not be one per character: delete plenty.
		return deletes(ctx, env, defaultClearPresses)
	}
	known := el.Text
	if err := deletes(ctx, env, utf8.RuneCountInString(known)); err != nil {
		return err
	}
	last := known
	for range clearRereads {
		left, ok := reread(ctx, env, field.Point)
		if !ok || left == "" || left == last || !strings.HasPrefix(known, left) && !strings.HasPrefix(left, known) {
			return nil
		}
		if err := deletes(ctx, env, utf8.RuneCountInString(left)); err != nil {
			return err
		}
		last = left
	}
	return nil
}

// reread is the text of the field at p on a fresh look at the screen; ok is
// false when there is no resolver or no editable element there.
func reread(ctx context.Context, env *Env, p device.Point) (string, bool) {
	if env.Resolver == nil {
		return "", false
	}
	t, err := env.Resolver.Resolve(ctx, Locator{Point: &p})
	if err != nil || t.Element == nil || !t.Element.Flags.Editable {
		return "", false
	}
	return t.Element.Text, true
}

func deletes(ctx context.Context, env *Env, n int) error {
	for i := 0; i < n; i++ {
		if err := env.Driver.PressKey(ctx, device.KeyDelete); err != nil {
			return fmt.Errorf("clear field (delete %d of %d): %w", i+1, n, err)
		}
	}
	return nil
}

// Wrapper is a Driver that adds to another one (counting device time,
// logging) without itself implementing the optional extensions of the
// driver it wraps; the actions look for extensions through it.
type Wrapper interface {
	Unwrap() device.Driver
}

// extension finds the optional extension T on d or on a driver d wraps.
func extension[T any](d device.Driver) (T, bool) {
	for d != nil {
		if t, ok := d.(T); ok {
			return t, true
		}
		w, ok := d.(Wrapper)
		if !ok {
			break
		}
		d = w.Unwrap()
	}
	var zero T
	return zero, false
}
