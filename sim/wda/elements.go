package wda

import (
	"fmt"
	"slices"
	"sync"

	"github.com/apexagent/apex/sim"
)

// w3cElementKey is the W3C web element identifier key.
const w3cElementKey = "element-6066-11e4-a52e-4f735466cecf"

// elementRef remembers where an element was found. Like WebDriverAgent's
// element cache it is resolved again on every use: the element must still
// be at the same place in the tree with the same type and name, or it is
// stale.
type elementRef struct {
	path []int
	typ  string
	name string
}

type elementCache struct {
	mu   sync.Mutex
	next int
	refs map[string]elementRef
}

// maxCachedElements bounds a session's cache (WebDriverAgent's holds
// 1024); the oldest half goes when it fills.
const maxCachedElements = 4096

func newElementCache() *elementCache { return &elementCache{refs: map[string]elementRef{}} }

func (c *elementCache) add(ref elementRef) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.refs) >= maxCachedElements {
		ids := make([]string, 0, len(c.refs))
		for id := range c.refs {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids[:len(ids)/2] {
			delete(c.refs, id)
		}
	}
	c.next++
	id := fmt.Sprintf("%08X-0000-0000-0000-%012X", c.next, len(ref.path))
	c.refs[id] = ref
	return id
}

func (c *elementCache) get(id string) (elementRef, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.refs[id]
	return r, ok
}

// element resolves an element id of the request's session against the
// screen now.
func (s *Server) element(q *request, id string) (*sim.XCUIElement, error) {
	if q.session == nil {
		return nil, errNoSuchElement("no session: element %q is unknown (create a session with POST /session)", id)
	}
	ref, ok := q.session.elems.get(id)
	if !ok {
		return nil, errNoSuchElement("The element identified by %q is either not present or it has expired from the internal cache. Try to find it again", id)
	}
	e := s.phone.XCUITree()
	for _, i := range ref.path {
		if i >= len(e.Children) {
			e = nil
			break
		}
		e = e.Children[i]
	}
	if e == nil || e.Type != ref.typ || e.Name() != ref.name {
		return nil, errStale("The previously found element %s %q is not present in the current view anymore. Make sure the application UI has the expected state", ref.typ, ref.name)
	}
	return e, nil
}

// found is an element and its path from the application.
type found struct {
	e    *sim.XCUIElement
	path []int
}

// descendants lists the descendants of e (not e) in document order.
func descendants(e *sim.XCUIElement, path []int, out []found) []found {
	for i, c := range e.Children {
		p := append(slices.Clip(path), i)
		out = append(out, found{c, p})
		out = descendants(c, p, out)
	}
	return out
}

// search finds the elements matching a locator under the request's scope:
// the application, or the element :uuid.
func (s *Server) search(q *request) ([]found, string, string, error) {
	using, err := q.str("using")
	if err != nil {
		return nil, "", "", err
	}
	value, err := q.str("value")
	if err != nil {
		return nil, "", "", err
	}
	root := found{e: s.phone.XCUITree()}
	if id := q.params["uuid"]; id != "" {
		e, err := s.element(q, id)
		if err != nil {
			return nil, using, value, err
		}
		ref, _ := q.session.elems.get(id)
		root = found{e: e, path: ref.path}
	}
	// Appium's names, which clients that know Appium send to WDA as is.
	switch using {
	case "-ios predicate string":
		using = "predicate string"
	case "-ios class chain":
		using = "class chain"
	}
	var out []found
	// Class name and predicate searches match the scope itself too, as
	// WebDriverAgent's fb_descendantsMatching… do: the application is found
	// as XCUIElementTypeApplication.
	withSelf := append([]found{root}, descendants(root.e, root.path, nil)...)
	switch using {
	case "accessibility id", "id", "name":
		for _, f := range descendants(root.e, root.path, nil) {
			if f.e.Name() == value {
				out = append(out, f)
			}
		}
	case "class name":
		for _, f := range withSelf {
			if f.e.Type == value {
				out = append(out, f)
			}
		}
	case "predicate string":
		pred, err := ParsePredicate(value)
		if err != nil {
			return nil, using, value, errInvalidSelector("%v", err)
		}
		for _, f := range withSelf {
			if pred.Match(f.e) {
				out = append(out, f)
			}
		}
	case "class chain":
		chain, err := ParseClassChain(value)
		if err != nil {
			return nil, using, value, errInvalidSelector("%v", err)
		}
		out = chain.find(root)
	case "xpath":
		x, err := ParseXPath(value)
		if err != nil {
			return nil, using, value, errInvalidSelector("%v", err)
		}
		out = x.find(root)
	default:
		return nil, using, value, errInvalidArgument("locator strategy %q is not supported: use accessibility id, predicate string, class chain, class name, name or xpath", using)
	}
	return out, using, value, nil
}

func (s *Server) ref(q *request, f found) map[string]string {
	if q.session == nil {
		s.mu.Lock()
		if s.session == nil {
			// A sessionless lookup opens the session WebDriverAgent would
			// have made for it.
			s.nextID++
			s.session = &session{id: fmt.Sprintf("%08X-5EED-4A0E-9A11-000000000000", s.nextID), caps: map[string]any{}, elems: newElementCache()}
		}
		q.session = s.session
		s.mu.Unlock()
	}
	id := q.session.elems.add(elementRef{path: f.path, typ: f.e.Type, name: f.e.Name()})
	return map[string]string{"ELEMENT": id, w3cElementKey: id}
}

func (s *Server) findElement(q *request) (any, error) {
	out, using, value, err := s.search(q)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errNoSuchElement("unable to find an element using '%s', value '%s'", using, value)
	}
	return s.ref(q, out[0]), nil
}

func (s *Server) findElements(q *request) (any, error) {
	out, _, _, err := s.search(q)
	if err != nil {
		return nil, err
	}
	refs := make([]map[string]string, 0, len(out))
	for _, f := range out {
		refs = append(refs, s.ref(q, f))
	}
	return refs, nil
}

// activeElement is the focused text input.
func (s *Server) activeElement(q *request) (any, error) {
	for _, f := range descendants(s.phone.XCUITree(), nil, nil) {
		if f.e.Focused {
			return s.ref(q, f), nil
		}
	}
	return nil, errNoSuchElement("No element has the keyboard focus")
}

func (s *Server) elementRect(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	return rectJSON(e), nil
}

// elementText is the value, or else the label (FBFirstNonEmptyValue).
func (s *Server) elementText(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	if e.HasValue && e.Value != "" {
		return e.Value, nil
	}
	return e.Label, nil
}

func (s *Server) elementType(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	return e.Type, nil
}

func (s *Server) elementEnabled(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	return e.Enabled, nil
}

func (s *Server) elementDisplayed(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	return e.Visible, nil
}

func (s *Server) elementSelected(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	return e.Selected || e.Type == "XCUIElementTypeSwitch" && e.Value == "1", nil
}

func (s *Server) elementAttribute(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	v, ok := attribute(e, q.params["name"])
	if !ok {
		return nil, nil
	}
	return v, nil
}

// attribute is an element's attribute by WebDriverAgent's names (with or
// without the "wd" prefix and "is" of booleans).
func attribute(e *sim.XCUIElement, name string) (any, bool) {
	switch name {
	case "name", "wdName":
		return orNull(e.Name()), true
	case "label", "wdLabel":
		return orNull(e.Label), true
	case "value", "wdValue":
		if !e.HasValue {
			return nil, true
		}
		return e.Value, true
	case "hasKeyboardFocus", "wdHasKeyboardFocus":
		return e.Focused, true
	case "type", "wdType", "elementType":
		return e.Type, true
	case "identifier", "rawIdentifier":
		return orNull(e.Identifier), true
	case "placeholderValue", "wdPlaceholderValue":
		return orNull(e.Placeholder), true
	case "enabled", "isEnabled", "wdEnabled":
		return e.Enabled, true
	case "visible", "isVisible", "wdVisible", "displayed":
		return e.Visible, true
	case "accessible", "isAccessible", "wdAccessible":
		return e.Accessible, true
	case "selected", "isSelected", "wdSelected":
		return e.Selected, true
	case "focused", "hasFocus", "isFocused", "wdFocused":
		return e.Focused, true
	case "hittable", "isHittable", "wdHittable":
		return e.Visible && e.Enabled, true
	case "rect", "wdRect", "frame":
		return rectJSON(e), true
	}
	return nil, false
}

func (s *Server) elementClick(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	return nil, s.tapAt(center(e))
}

func isTextInput(e *sim.XCUIElement) bool {
	switch e.Type {
	case "XCUIElementTypeTextField", "XCUIElementTypeSecureTextField", "XCUIElementTypeSearchField", "XCUIElementTypeTextView":
		return true
	}
	return false
}

// focus taps a text input unless it has the focus already.
func (s *Server) focus(q *request, e *sim.XCUIElement) error {
	if !isTextInput(e) {
		return errInvalidState("%s %q is not a text input: it cannot take keys", e.Type, e.Name())
	}
	if !e.Focused {
		if err := s.tapAt(center(e)); err != nil {
			return err
		}
	}
	return nil
}

// elementValue types into an element: {"value": ["a", "b"]} or
// {"text": "ab"}.
func (s *Server) elementValue(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	text, err := q.optStr("text")
	if err != nil {
		return nil, err
	}
	if text == "" {
		if _, ok := q.body["value"]; !ok {
			return nil, errInvalidArgument("'value' (an array of strings) or 'text' is required")
		}
		raw := q.body["value"]
		var parts []string
		if err := jsonStrings(raw, &parts); err != nil {
			return nil, errInvalidArgument("'value' must be an array of strings, got %s", short(raw))
		}
		for _, p := range parts {
			text += p
		}
	}
	if err := s.focus(q, e); err != nil {
		return nil, err
	}
	return nil, s.typeText(text)
}

func (s *Server) elementClear(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	if err := s.focus(q, e); err != nil {
		return nil, err
	}
	if !s.phone.ClearText() {
		return nil, errInvalidState("%s %q did not take the focus", e.Type, e.Name())
	}
	return nil, nil
}
