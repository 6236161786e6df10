package wda

import (
	"encoding/json"
	"math"
	"time"

	"github.com/apexagent/apex/sim"
)

// WebDriverAgent's element gestures (XCUIElement's swipeUp, scroll,
// pinchWithScale) and Appium's legacy touch actions, on the simulated
// phone's fingers.

// gestureVelocity is the speed of a swipe when none is given, in points
// per second (XCUIGestureVelocityDefault is about this).
const gestureVelocity = 1000

// elementSwipe answers POST /wda/element/:uuid/swipe {direction, velocity}:
// a finger crosses the element the way direction says ("up" moves it up,
// revealing what is below), as XCUIElement's swipeUp… do.
func (s *Server) elementSwipe(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	dir, err := q.str("direction")
	if err != nil {
		return nil, err
	}
	v, err := q.optNum("velocity", gestureVelocity)
	if err != nil || v <= 0 {
		return nil, errInvalidArgument("'velocity' must be a positive number of points per second")
	}
	from, to, err := across(e, dir, 0.6)
	if err != nil {
		return nil, err
	}
	return nil, s.swipe(from, to, time.Duration(dist(from, to)/v*float64(time.Second)))
}

// across is a finger's path through e's middle towards dir, covering
// share of the element's extent.
func across(e *sim.XCUIElement, dir string, share float64) (from, to point, err error) {
	c := center(e)
	half := point{float64(e.Rect.Dx()) * share / 2, float64(e.Rect.Dy()) * share / 2}
	switch dir {
	case "up":
		return point{c.x, c.y + half.y}, point{c.x, c.y - half.y}, nil
	case "down":
		return point{c.x, c.y - half.y}, point{c.x, c.y + half.y}, nil
	case "left":
		return point{c.x + half.x, c.y}, point{c.x - half.x, c.y}, nil
	case "right":
		return point{c.x - half.x, c.y}, point{c.x + half.x, c.y}, nil
	}
	return point{}, point{}, errInvalidArgument("'direction' must be up, down, left or right, got %q", dir)
}

// scrollSearches bounds how many swipes a scroll to a named element makes
// in each direction.
const scrollSearches = 10

// elementScroll answers POST /wda/element/:uuid/scroll: by direction
// ("down" reveals what is below) and distance (a share of the element,
// 1 by default), or until the element named by name or predicateString
// shows (toVisible: the element itself, which the tree lists only when it
// is on screen).
func (s *Server) elementScroll(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	name, _ := q.optStr("name")
	pred, _ := q.optStr("predicateString")
	dir, _ := q.optStr("direction")
	if _, ok := q.body["toVisible"]; ok && name == "" && pred == "" && dir == "" {
		return nil, nil
	}
	swipeTowards := func(dir string, share float64) error {
		// Scrolling down moves the finger up.
		finger := map[string]string{"down": "up", "up": "down", "left": "right", "right": "left"}[dir]
		from, to, err := across(e, finger, min(share, 0.8))
		if err != nil {
			return errInvalidArgument("'direction' must be up, down, left or right, got %q", dir)
		}
		return s.swipe(from, to, 500*time.Millisecond)
	}
	if name == "" && pred == "" {
		if dir == "" {
			return nil, errInvalidArgument("give one of direction, name, predicateString or toVisible")
		}
		d, err := q.optNum("distance", 1)
		if err != nil || d <= 0 || math.IsNaN(d) {
			return nil, errInvalidArgument("'distance' must be a positive share of the element")
		}
		for d > 0 {
			if err := swipeTowards(dir, d); err != nil {
				return nil, err
			}
			d -= 0.8
		}
		return nil, nil
	}
	match := func(x *sim.XCUIElement) bool { return x.Name() == name }
	if pred != "" {
		p, err := ParsePredicate(pred)
		if err != nil {
			return nil, errInvalidSelector("%v", err)
		}
		match = p.Match
	}
	shows := func() bool {
		for _, f := range descendants(s.phone.XCUITree(), nil, nil) {
			if match(f.e) && f.e.Visible {
				return true
			}
		}
		return false
	}
	for _, dir := range []string{"down", "up"} {
		for range scrollSearches {
			if shows() {
				return nil, nil
			}
			if err := swipeTowards(dir, 0.5); err != nil {
				return nil, err
			}
		}
	}
	if shows() {
		return nil, nil
	}
	return nil, errNoSuchElement("Failed to perform scroll with visible cell due to max scroll count reached: no element %s in %s", firstOf(name, pred), e.Name())
}

func firstOf(a, b string) string {
	if a != "" {
		return "named " + a
	}
	return "matching " + b
}

// elementPinch answers POST /wda/element/:uuid/pinch {scale, velocity}:
// two fingers on the element's middle, their span multiplied by scale
// (above 1 zooms in, below zooms out), as XCUIElement's pinchWithScale.
func (s *Server) elementPinch(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	scale, err := q.num("scale")
	if err != nil {
		return nil, err
	}
	if scale <= 0 || math.IsNaN(scale) || math.IsInf(scale, 0) {
		return nil, errInvalidArgument("'scale' must be above 0: above 1 zooms in, below 1 zooms out")
	}
	v, err := q.num("velocity")
	if err != nil {
		return nil, err
	}
	if (scale < 1 && v > 0) || (scale > 1 && v < 0) {
		// XCTest's rule: a pinch that zooms in spreads at a positive speed.
		return nil, errInvalidArgument("'velocity' must be negative for a scale below 1 and positive above 1, got %g for scale %g", v, scale)
	}
	c := center(e)
	if err := s.checkPoint(c); err != nil {
		return nil, err
	}
	// The span is nominal: what zooms is the ratio, which a span in whole
	// pixels would round.
	const span = 10000
	to := int(math.Round(span * scale))
	d := time.Second
	if v != 0 {
		d = time.Duration(math.Abs(float64(to-span)) / float64(s.scale()) / math.Abs(v) * float64(time.Second))
	}
	if to > 0 {
		s.phone.Pinch(s.px(c.x), s.px(c.y), span, to, d)
	}
	return nil, nil
}

// legacyTouch is one step of Appium's TouchAction: press, longPress, tap,
// wait, moveTo, release, cancel.
type legacyTouch struct {
	Action  string `json:"action"`
	Options struct {
		X        *float64 `json:"x"`
		Y        *float64 `json:"y"`
		Element  string   `json:"element"`
		MS       float64  `json:"ms"`
		Duration *float64 `json:"duration"`
		Count    int      `json:"count"`
	} `json:"options"`
}

// touchPerform answers POST /wda/touch/perform {actions: [...]}: one
// finger's Appium touch actions.
func (s *Server) touchPerform(q *request) (any, error) {
	var steps []legacyTouch
	if raw, ok := q.body["actions"]; !ok || json.Unmarshal(raw, &steps) != nil {
		return nil, errInvalidArgument("'actions' must be an array of {action, options}")
	}
	src, err := s.w3cOf(q, 0, steps)
	if err != nil {
		return nil, err
	}
	return nil, s.perform(q, []actionSource{src})
}

// multiTouchPerform answers POST /wda/touch/multi/perform {actions: [[...],
// [...]]}: several fingers' touch actions at once (two that move pinch).
func (s *Server) multiTouchPerform(q *request) (any, error) {
	var fingers [][]legacyTouch
	if raw, ok := q.body["actions"]; !ok || json.Unmarshal(raw, &fingers) != nil {
		return nil, errInvalidArgument("'actions' must be an array of arrays of {action, options}, one per finger")
	}
	sources := make([]actionSource, len(fingers))
	for i, steps := range fingers {
		src, err := s.w3cOf(q, i, steps)
		if err != nil {
			return nil, err
		}
		sources[i] = src
	}
	return nil, s.perform(q, sources)
}

// w3cOf translates one finger's touch actions to a W3C pointer source.
func (s *Server) w3cOf(q *request, finger int, steps []legacyTouch) (actionSource, error) {
	src := actionSource{Type: "pointer", Parameters: map[string]any{"pointerType": "touch"}}
	add := func(v map[string]any) {
		raw, _ := json.Marshal(v)
		src.Actions = append(src.Actions, raw)
	}
	for j, st := range steps {
		at := func() (map[string]any, error) {
			o := st.Options
			var p point
			switch {
			case o.Element != "":
				e, err := s.element(q, o.Element)
				if err != nil {
					return nil, err
				}
				p = center(e)
				if o.X != nil && o.Y != nil {
					p = point{float64(e.Rect.Min.X) + *o.X, float64(e.Rect.Min.Y) + *o.Y}
				}
			case o.X != nil && o.Y != nil:
				p = point{*o.X, *o.Y}
			default:
				return nil, errInvalidArgument("actions[%d][%d]: %s needs x and y, or an element", finger, j, st.Action)
			}
			return map[string]any{"type": "pointerMove", "duration": 0, "x": p.x, "y": p.y}, nil
		}
		switch st.Action {
		case "press", "longPress", "tap", "moveTo":
			m, err := at()
			if err != nil {
				return src, err
			}
			add(m)
			switch st.Action {
			case "press":
				add(map[string]any{"type": "pointerDown", "button": 0})
			case "longPress":
				d := 1000.0
				if st.Options.Duration != nil {
					d = *st.Options.Duration
				}
				add(map[string]any{"type": "pointerDown", "button": 0})
				add(map[string]any{"type": "pause", "duration": d})
			case "tap":
				for range max(st.Options.Count, 1) {
					add(map[string]any{"type": "pointerDown", "button": 0})
					add(map[string]any{"type": "pause", "duration": 50})
					add(map[string]any{"type": "pointerUp", "button": 0})
				}
			}
		case "wait":
			add(map[string]any{"type": "pause", "duration": st.Options.MS})
		case "release":
			add(map[string]any{"type": "pointerUp", "button": 0})
		case "cancel":
			add(map[string]any{"type": "pointerCancel"})
		default:
			return src, errInvalidArgument("actions[%d][%d]: unknown touch action %q: use press, longPress, tap, wait, moveTo, release or cancel", finger, j, st.Action)
		}
	}
	return src, nil
}
