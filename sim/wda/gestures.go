package wda

import (
	"encoding/json"
	"math"
	"time"

	"github.com/apexagent/apex/sim"
)

// point is a position in points.
type point struct{ x, y float64 }

// checkPoint refuses coordinates that are not numbers on the screen.
func (s *Server) checkPoint(p point) error {
	w, h := s.sizePoints()
	if math.IsNaN(p.x) || math.IsNaN(p.y) || p.x < 0 || p.y < 0 || p.x > float64(w) || p.y > float64(h) {
		return errInvalidArgument("point (%g, %g) is outside the screen (0, 0)–(%d, %d)", p.x, p.y, w, h)
	}
	return nil
}

func (q *request) point(xName, yName string) (point, error) {
	x, err := q.num(xName)
	if err != nil {
		return point{}, err
	}
	y, err := q.num(yName)
	if err != nil {
		return point{}, err
	}
	return point{x, y}, nil
}

func (s *Server) tapAt(p point) error {
	if err := s.checkPoint(p); err != nil {
		return err
	}
	s.phone.Tap(s.px(p.x), s.px(p.y))
	return nil
}

// press holds a still finger at p for d (a long press from
// sim.LongPressTimeout on).
func (s *Server) press(p point, d time.Duration) error {
	if err := s.checkPoint(p); err != nil {
		return err
	}
	x, y := s.px(p.x), s.px(p.y)
	s.phone.Swipe(x, y, x, y, d)
	return nil
}

func (s *Server) swipe(from, to point, d time.Duration) error {
	if err := s.checkPoint(from); err != nil {
		return err
	}
	if err := s.checkPoint(to); err != nil {
		return err
	}
	s.phone.Swipe(s.px(from.x), s.px(from.y), s.px(to.x), s.px(to.y), d)
	return nil
}

// tap answers POST /wda/tap {"x", "y"} (points).
func (s *Server) tap(q *request) (any, error) {
	p, err := q.point("x", "y")
	if err != nil {
		return nil, err
	}
	return nil, s.tapAt(p)
}

// tapLegacy answers POST /wda/tap/:uuid: uuid "0" taps x, y on the screen;
// an element's uuid taps x, y relative to it, or its centre without them.
func (s *Server) tapLegacy(q *request) (any, error) {
	id := q.params["uuid"]
	if id == "0" {
		return s.tap(q)
	}
	e, err := s.element(q, id)
	if err != nil {
		return nil, err
	}
	_, hasX := q.body["x"]
	_, hasY := q.body["y"]
	if !hasX && !hasY {
		return nil, s.tapAt(center(e))
	}
	p, err := q.point("x", "y")
	if err != nil {
		return nil, err
	}
	return nil, s.tapAt(point{float64(e.Rect.Min.X) + p.x, float64(e.Rect.Min.Y) + p.y})
}

func (s *Server) doubleTap(q *request) (any, error) {
	p, err := q.point("x", "y")
	if err != nil {
		return nil, err
	}
	if err := s.tapAt(p); err != nil {
		return nil, err
	}
	return nil, s.tapAt(p)
}

// seconds reads a duration in seconds, as WebDriverAgent's own gestures
// take it.
func (q *request) seconds(name string, def float64) (time.Duration, error) {
	v, err := q.optNum(name, def)
	if err != nil {
		return 0, err
	}
	if v < 0 || v > 600 || math.IsNaN(v) {
		return 0, errInvalidArgument("'%s' must be from 0 to 600 seconds, got %g", name, v)
	}
	return time.Duration(v * float64(time.Second)), nil
}

func (s *Server) touchAndHold(q *request) (any, error) {
	p, err := q.point("x", "y")
	if err != nil {
		return nil, err
	}
	d, err := q.seconds("duration", 1)
	if err != nil {
		return nil, err
	}
	return nil, s.press(p, d)
}

func (s *Server) elementTouchAndHold(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	d, err := q.seconds("duration", 1)
	if err != nil {
		return nil, err
	}
	return nil, s.press(center(e), d)
}

func (s *Server) drag(q *request) (any, error) {
	from, err := q.point("fromX", "fromY")
	if err != nil {
		return nil, err
	}
	to, err := q.point("toX", "toY")
	if err != nil {
		return nil, err
	}
	d, err := q.seconds("duration", 0.5)
	if err != nil {
		return nil, err
	}
	return nil, s.swipe(from, to, d)
}

func center(e *sim.XCUIElement) point {
	r := e.Rect
	return point{float64(r.Min.X+r.Max.X) / 2, float64(r.Min.Y+r.Max.Y) / 2}
}

// W3C actions.

type actionSource struct {
	Type       string            `json:"type"`
	ID         string            `json:"id"`
	Parameters map[string]any    `json:"parameters"`
	Actions    []json.RawMessage `json:"actions"`
}

type actionItem struct {
	Type     string          `json:"type"`
	Duration *float64        `json:"duration"`
	X        *float64        `json:"x"`
	Y        *float64        `json:"y"`
	Origin   json.RawMessage `json:"origin"`
	Button   *float64        `json:"button"`
	Value    *string         `json:"value"`
}

// actions answers POST /actions: each pointer's down–moves–up becomes a
// tap, a long press (still for sim.LongPressTimeout or more) or a swipe
// or drag from the down point to the up point over the time between.
// Key sources type their keyDown values. Pauses count towards the held
// time; the gesture is applied at once, without waiting them out.
func (s *Server) actions(q *request) (any, error) {
	raw, ok := q.body["actions"]
	if !ok {
		return nil, errInvalidArgument("'actions' is required: an array of input sources")
	}
	var sources []actionSource
	if err := json.Unmarshal(raw, &sources); err != nil {
		return nil, errInvalidArgument("'actions' must be an array of input sources: %v", err)
	}
	if len(sources) == 0 {
		return nil, errInvalidArgument("'actions' must not be empty")
	}
	for i, src := range sources {
		var err error
		switch src.Type {
		case "pointer":
			if pt, _ := src.Parameters["pointerType"].(string); pt != "" && pt != "touch" && pt != "mouse" && pt != "pen" {
				return nil, errInvalidArgument("actions[%d]: pointerType %q: use touch, mouse or pen", i, pt)
			}
			err = s.pointer(q, i, src.Actions)
		case "key":
			err = s.keyActions(i, src.Actions)
		case "none":
			err = checkPauses(i, src.Actions)
		default:
			return nil, errInvalidArgument("actions[%d]: source type %q: use pointer, key or none", i, src.Type)
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, nil
}

func decodeItems(i int, raws []json.RawMessage) ([]actionItem, error) {
	items := make([]actionItem, len(raws))
	for j, raw := range raws {
		if err := json.Unmarshal(raw, &items[j]); err != nil {
			return nil, errInvalidArgument("actions[%d].actions[%d]: %v", i, j, err)
		}
		if d := items[j].Duration; d != nil && (*d < 0 || *d > 600000 || math.IsNaN(*d)) {
			return nil, errInvalidArgument("actions[%d].actions[%d]: duration %g ms out of range (0 to 600000)", i, j, *d)
		}
	}
	return items, nil
}

func checkPauses(i int, raws []json.RawMessage) error {
	items, err := decodeItems(i, raws)
	if err != nil {
		return err
	}
	for j, it := range items {
		if it.Type != "pause" {
			return errInvalidArgument("actions[%d].actions[%d]: a none source only pauses, got %q", i, j, it.Type)
		}
	}
	return nil
}

func ms(d *float64) time.Duration {
	if d == nil {
		return 0
	}
	return time.Duration(*d * float64(time.Millisecond))
}

func (s *Server) pointer(q *request, i int, raws []json.RawMessage) error {
	items, err := decodeItems(i, raws)
	if err != nil {
		return err
	}
	var pos, from point
	down, moved := false, false
	var held, still time.Duration // since down; since the last move
	release := func() error {
		down = false
		if !moved {
			if held >= sim.LongPressTimeout {
				return s.press(pos, held)
			}
			return s.tapAt(pos)
		}
		if s.appSwitcherGesture(from, pos, still) {
			if err := s.checkPoint(pos); err != nil {
				return err
			}
			s.phone.KeyEvent(sim.KeycodeAppSwitch)
			return nil
		}
		return s.swipe(from, pos, held)
	}
	for j, it := range items {
		switch it.Type {
		case "pointerMove":
			if it.X == nil || it.Y == nil {
				return errInvalidArgument("actions[%d].actions[%d]: pointerMove needs x and y", i, j)
			}
			to, err := s.origin(q, pos, it)
			if err == nil {
				err = s.checkPoint(to)
			}
			if err != nil {
				return at(i, j, err)
			}
			if down {
				held += ms(it.Duration)
				still += ms(it.Duration)
				if to != pos {
					moved, still = true, 0
				}
			}
			pos = to
		case "pointerDown":
			if down {
				continue
			}
			down, moved, held, still, from = true, false, 0, 0, pos
		case "pointerUp":
			if down {
				if err := release(); err != nil {
					return err
				}
			}
		case "pause":
			if down {
				held += ms(it.Duration)
				still += ms(it.Duration)
			}
		case "pointerCancel":
			down = false
		default:
			return errInvalidArgument("actions[%d].actions[%d]: pointer action %q: use pointerMove, pointerDown, pointerUp or pause", i, j, it.Type)
		}
	}
	if down {
		return release()
	}
	return nil
}

// appSwitcherHold is how long a finger that came up from the home
// indicator must rest before lifting to open the app switcher (a quick
// flick goes home instead, which the phone handles as a swipe).
const appSwitcherHold = 300 * time.Millisecond

// appSwitcherGesture reports whether a finger went up from the bottom edge
// by an eighth of the screen or more and rested there.
func (s *Server) appSwitcherGesture(from, to point, still time.Duration) bool {
	_, h := s.sizePoints()
	return s.phone.Platform() == sim.PlatformIOS && from.y >= float64(h-sim.HomeGesturePoints) &&
		from.y-to.y >= float64(h)/8 && still >= appSwitcherHold
}

// origin resolves a pointerMove's target: viewport (absolute), pointer
// (relative to the current position) or an element's centre.
func (s *Server) origin(q *request, cur point, it actionItem) (point, error) {
	off := point{*it.X, *it.Y}
	if len(it.Origin) == 0 || string(it.Origin) == "null" {
		return off, nil
	}
	var name string
	if json.Unmarshal(it.Origin, &name) == nil {
		switch name {
		case "viewport":
			return off, nil
		case "pointer":
			return point{cur.x + off.x, cur.y + off.y}, nil
		}
		return point{}, errInvalidArgument("origin %q: use viewport, pointer or an element", name)
	}
	var ref map[string]string
	if err := json.Unmarshal(it.Origin, &ref); err != nil {
		return point{}, errInvalidArgument("origin must be viewport, pointer or an element reference")
	}
	id := ref[w3cElementKey]
	if id == "" {
		id = ref["ELEMENT"]
	}
	e, err := s.element(q, id)
	if err != nil {
		return point{}, err
	}
	c := center(e)
	return point{c.x + off.x, c.y + off.y}, nil
}

func (s *Server) keyActions(i int, raws []json.RawMessage) error {
	items, err := decodeItems(i, raws)
	if err != nil {
		return err
	}
	for j, it := range items {
		switch it.Type {
		case "keyDown":
			if it.Value == nil {
				return errInvalidArgument("actions[%d].actions[%d]: keyDown needs a value", i, j)
			}
			if err := s.typeText(*it.Value); err != nil {
				return err
			}
		case "keyUp", "pause":
		default:
			return errInvalidArgument("actions[%d].actions[%d]: key action %q: use keyDown, keyUp or pause", i, j, it.Type)
		}
	}
	return nil
}

// at names the action an argument error is about.
func at(i, j int, err error) error {
	if e, ok := err.(*Error); ok && e.Code == "invalid argument" {
		return errInvalidArgument("actions[%d].actions[%d]: %s", i, j, e.Message)
	}
	return err
}
