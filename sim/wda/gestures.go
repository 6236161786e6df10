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
// or drag from the down point to the up point over the time between; two
// pointers that both move between down and up are a pinch. Key sources
// type their keyDown values. Pauses count towards the held time; the
// gesture is applied at once, without waiting them out.
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
	return nil, s.perform(q, sources)
}

// perform runs input sources: their fingers' touches (a pinch when the
// first two both move), typed keys and pauses, source by source.
func (s *Server) perform(q *request, sources []actionSource) error {
	fingers := map[int][]touch{} // by source index
	var order []int              // the pointer sources, in order
	for i, src := range sources {
		if src.Type != "pointer" {
			continue
		}
		if pt, _ := src.Parameters["pointerType"].(string); pt != "" && pt != "touch" && pt != "mouse" && pt != "pen" {
			return errInvalidArgument("actions[%d]: pointerType %q: use touch, mouse or pen", i, pt)
		}
		ts, err := s.pointer(q, i, src.Actions)
		if err != nil {
			return err
		}
		fingers[i], order = ts, append(order, i)
	}
	if len(order) >= 2 {
		a, b := fingers[order[0]], fingers[order[1]]
		if len(a) == 1 && len(b) == 1 && a[0].moved && b[0].moved {
			if err := s.pinch(a[0], b[0]); err != nil {
				return err
			}
			delete(fingers, order[0])
			delete(fingers, order[1])
		}
	}
	for i, src := range sources {
		var err error
		switch src.Type {
		case "pointer":
			for _, t := range fingers[i] {
				if err = s.release(t); err != nil {
					break
				}
			}
		case "key":
			err = s.keyActions(i, src.Actions)
		case "none":
			err = checkPauses(i, src.Actions)
		default:
			return errInvalidArgument("actions[%d]: source type %q: use pointer, key or none", i, src.Type)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func dist(a, b point) float64 { return math.Hypot(a.x-b.x, a.y-b.y) }

// pinch delivers two fingers that moved at once: centred between where
// they went down, from the span between them then to the span at the end.
func (s *Server) pinch(a, b touch) error {
	return s.pinchAt(point{(a.from.x + b.from.x) / 2, (a.from.y + b.from.y) / 2}, dist(a.from, b.from), dist(a.to, b.to), max(a.held, b.held))
}

// pinchAt zooms with two fingers centred on c, from fromDist points apart
// to toDist apart, over d.
func (s *Server) pinchAt(c point, fromDist, toDist float64, d time.Duration) error {
	if err := s.checkPoint(c); err != nil {
		return err
	}
	if s.px(fromDist) <= 0 || s.px(toDist) <= 0 {
		return nil // the fingers met: no span to scale
	}
	s.phone.Pinch(s.px(c.x), s.px(c.y), s.px(fromDist), s.px(toDist), d)
	return nil
}

// touch is one finger's down–up: where it went down and came up, how long
// it was held, and for how long it rested before lifting.
type touch struct {
	from, to    point
	held, still time.Duration
	moved       bool
}

// release delivers a lifted finger's touch to the phone.
func (s *Server) release(t touch) error {
	if !t.moved {
		if t.held >= sim.LongPressTimeout {
			return s.press(t.to, t.held)
		}
		return s.tapAt(t.to)
	}
	if s.appSwitcherGesture(t.from, t.to, t.still) {
		if err := s.checkPoint(t.to); err != nil {
			return err
		}
		s.phone.KeyEvent(sim.KeycodeAppSwitch)
		return nil
	}
	return s.swipe(t.from, t.to, t.held)
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

// pointer reads one pointer source's actions into the touches it makes.
func (s *Server) pointer(q *request, i int, raws []json.RawMessage) ([]touch, error) {
	items, err := decodeItems(i, raws)
	if err != nil {
		return nil, err
	}
	var out []touch
	var pos point
	var cur touch // held and still: since down; since the last move
	down := false
	for j, it := range items {
		switch it.Type {
		case "pointerMove":
			if it.X == nil || it.Y == nil {
				return nil, errInvalidArgument("actions[%d].actions[%d]: pointerMove needs x and y", i, j)
			}
			to, err := s.origin(q, pos, it)
			if err == nil {
				err = s.checkPoint(to)
			}
			if err != nil {
				return nil, at(i, j, err)
			}
			if down {
				cur.held += ms(it.Duration)
				cur.still += ms(it.Duration)
				if to != pos {
					cur.moved, cur.still = true, 0
				}
			}
			pos = to
		case "pointerDown":
			if !down {
				down, cur = true, touch{from: pos}
			}
		case "pointerUp":
			if down {
				down, cur.to = false, pos
				out = append(out, cur)
			}
		case "pause":
			if down {
				cur.held += ms(it.Duration)
				cur.still += ms(it.Duration)
			}
		case "pointerCancel":
			down = false
		default:
			return nil, errInvalidArgument("actions[%d].actions[%d]: pointer action %q: use pointerMove, pointerDown, pointerUp or pause", i, j, it.Type)
		}
	}
	if down {
		cur.to = pos
		out = append(out, cur)
	}
	return out, nil
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
