package sim

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"
)

// appRun is one installed app on one phone: its persistent state and, while
// it runs, its back stack and transient UI state.
type appRun struct {
	spec    *AppSpec
	state   map[string]any // survives force-stop
	session map[string]any // reset on cold start
	running bool
	pid     int
	stack   []*screenRun
	dialog  *dialogRun
	fields  map[string]string // text of fields without a bind, by key
	focus   string            // key of the focused field
	// imeHidden: the focused field keeps its focus with the keyboard
	// hidden (Android's BACK or ESCAPE), until it is tapped again.
	imeHidden bool
	scroll    map[string]int  // list or body key -> offset in px
	popups    map[string]bool // popups already shown this session
	rnd       *rand.Rand
}

type screenRun struct {
	spec    *Screen
	entered time.Time
	// popupAt is when a seeded popup will show; zero when none is due.
	popupAt time.Time
	popup   string
}

type dialogRun struct {
	spec  *Dialog
	scope *evalScope // the item the dialog was opened from, if any
}

func newAppRun(spec *AppSpec, seed int64) *appRun {
	h := fnv.New64a()
	h.Write([]byte(spec.Package))
	a := &appRun{
		spec:  spec,
		state: deepCopy(spec.State).(map[string]any),
		rnd:   rand.New(rand.NewPCG(uint64(seed), h.Sum64())),
	}
	a.reset()
	return a
}

// reset drops everything a process kill loses.
func (a *appRun) reset() {
	a.running = false
	a.session = deepCopy(a.spec.Session).(map[string]any)
	a.stack = nil
	a.dialog = nil
	a.fields = map[string]string{}
	a.focus = ""
	a.scroll = map[string]int{}
	a.popups = map[string]bool{}
}

func (a *appRun) top() *screenRun {
	if len(a.stack) == 0 {
		return nil
	}
	return a.stack[len(a.stack)-1]
}

func (a *appRun) screen(id string) *Screen {
	for _, s := range a.spec.Screens {
		if s.ID == id {
			return s
		}
	}
	return nil
}

func (a *appRun) dialogSpec(id string) *Dialog {
	for _, d := range a.spec.Dialogs {
		if d.ID == id {
			return d
		}
	}
	return nil
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = deepCopy(x)
		}
		return s
	case nil:
		return map[string]any{}
	}
	return v
}

// evalScope resolves names: item and index of a list row, then session,
// state and data variables of the app.
type evalScope struct {
	app     *appRun
	item    any
	index   int
	hasItem bool
}

func (s *evalScope) lookup(name string) (any, bool) {
	if s.hasItem {
		switch name {
		case "item":
			return s.item, true
		case "index":
			return float64(s.index), true
		}
	}
	if s.app == nil {
		return nil, false
	}
	for _, m := range []map[string]any{s.app.session, s.app.state, s.app.spec.Data} {
		if v, ok := m[name]; ok {
			return v, true
		}
	}
	if name == "screen" {
		if t := s.app.top(); t != nil {
			return t.spec.ID, true
		}
	}
	return nil, false
}

// vars returns the map that holds a variable: session if declared there,
// otherwise state (where undeclared variables are created).
func (a *appRun) vars(name string) map[string]any {
	if _, ok := a.session[name]; ok {
		return a.session
	}
	return a.state
}

func (a *appRun) get(name string) any { return a.vars(name)[name] }

func (a *appRun) put(name string, v any) { a.vars(name)[name] = v }

// assign sets a variable or a field of the current item (item.qty) or of a
// map variable (address.city).
func (a *appRun) assign(path string, v any, s *evalScope) error {
	head, fieldName, ok := strings.Cut(path, ".")
	if !ok {
		a.put(path, v)
		return nil
	}
	var target any
	if head == "item" && s.hasItem {
		target = s.item
	} else {
		target = a.get(head)
		if target == nil {
			target = map[string]any{}
			a.put(head, target)
		}
	}
	m, isMap := target.(map[string]any)
	if !isMap {
		return fmt.Errorf("set %s: %s is not an object", path, head)
	}
	m[fieldName] = v
	return nil
}

func (a *appRun) read(path string, s *evalScope) any {
	return evalExpr(path, s)
}

// removeItem removes the current item from a list variable, matching by
// identity (the same map) or by equal id field.
func (a *appRun) removeItem(list string, s *evalScope) error {
	items, ok := a.get(list).([]any)
	if !ok {
		return fmt.Errorf("remove from %s: not a list", list)
	}
	if !s.hasItem {
		return fmt.Errorf("remove from %s: no current item (use remove inside a list row or a dialog opened from one)", list)
	}
	for i, it := range items {
		if sameItem(it, s.item) {
			a.put(list, append(items[:i:i], items[i+1:]...))
			return nil
		}
	}
	return nil
}

func sameItem(a, b any) bool {
	ma, ok1 := a.(map[string]any)
	mb, ok2 := b.(map[string]any)
	if ok1 && ok2 {
		if reflect.ValueOf(ma).UnsafePointer() == reflect.ValueOf(mb).UnsafePointer() {
			return true
		}
		if id, ok := ma["id"]; ok {
			return equal(id, mb["id"])
		}
		return false
	}
	return equal(a, b)
}

// setFocus focuses the field with key, and shows the keyboard for it.
func (a *appRun) setFocus(key string) {
	a.focus, a.imeHidden = key, false
}
