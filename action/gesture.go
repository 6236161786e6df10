package action

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/scene"
)

// Distance is how far a scroll or a pull travels: a number of pixels, or a
// share of the area it happens in. JSON: an integer of at least 1 (pixels),
// or "screen" or "half". The zero Distance means "the action's default".
type Distance struct {
	Pixels  int
	Screens float64 // 1 for "screen", 0.5 for "half"
}

// The named distances of the JSON form.
var (
	Screen = Distance{Screens: 1}
	Half   = Distance{Screens: 0.5}
)

// IsZero reports whether d is unset.
func (d Distance) IsZero() bool { return d.Pixels == 0 && d.Screens == 0 }

func (d Distance) String() string {
	switch {
	case d.Pixels > 0:
		return strconv.Itoa(d.Pixels) + "px"
	case d.Screens == 1:
		return "screen"
	case d.Screens == 0.5:
		return "half"
	case d.Screens > 0:
		return fmt.Sprintf("%g screens", d.Screens)
	}
	return "default"
}

// MarshalJSON writes pixels as a number and the named shares as strings.
func (d Distance) MarshalJSON() ([]byte, error) {
	switch {
	case d.Pixels > 0:
		return []byte(strconv.Itoa(d.Pixels)), nil
	case d.Screens == 1:
		return []byte(`"screen"`), nil
	case d.Screens == 0.5:
		return []byte(`"half"`), nil
	case d.IsZero():
		return []byte("null"), nil
	}
	return nil, fmt.Errorf("distance %g screens has no JSON form: use pixels, screen or half", d.Screens)
}

// UnmarshalJSON reads an integer of at least 1, "screen" or "half".
func (d *Distance) UnmarshalJSON(data []byte) error {
	data = trimJSONSpace(data)
	const want = `expected pixels (an integer ≥ 1), "screen" or "half"`
	switch jsonKind(data) {
	case "number":
		x, err := strconv.ParseFloat(string(data), 64)
		if err != nil || x != math.Trunc(x) || x < 1 || x > math.MaxInt32 {
			return &FieldError{Message: want + ", got number " + string(data)}
		}
		*d = Distance{Pixels: int(x)}
		return nil
	case "string":
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return &FieldError{Message: want + ": " + err.Error()}
		}
		switch s {
		case "screen":
			*d = Screen
			return nil
		case "half":
			*d = Half
			return nil
		}
		return &FieldError{Message: fmt.Sprintf("%s, got %q", want, s)}
	}
	return &FieldError{Message: want + ", got " + describeJSON(data)}
}

const (
	// strokeShare is the longest single swipe, as a share of its area: the
	// rest is margin, so a swipe starts and ends on the content and not on
	// the status bar, an edge gesture zone or the list's border.
	strokeShare = 0.8
	// maxStrokes bounds how many swipes one pixel distance may take.
	maxStrokes = 20
)

// stroke is one swipe.
type stroke struct{ from, to device.Point }

// gestureArea is where a gesture happens: the located element's bounds, or
// the whole screen; center is where it is aimed.
func gestureArea(ctx context.Context, env *Env, l *Locator) (area scene.Rect, center device.Point, err error) {
	if l.Resolved() {
		t := l.Target()
		if t.Element != nil && !t.Element.Bounds.Empty() {
			return t.Element.Bounds, t.Point, nil
		}
	}
	info, err := env.Driver.Info(ctx)
	if err != nil {
		return scene.Rect{}, device.Point{}, fmt.Errorf("read screen size: %w", err)
	}
	if info.Width <= 0 || info.Height <= 0 {
		return scene.Rect{}, device.Point{}, fmt.Errorf("device reports a %dx%d screen; cannot aim a gesture", info.Width, info.Height)
	}
	area = scene.Rect{X1: info.Width, Y1: info.Height}
	center = device.Point{X: info.Width / 2, Y: info.Height / 2}
	if l.Resolved() {
		center = l.Target().Point
	}
	return area, center, nil
}

// scrollStrokes plans the swipes that scroll content in area by d towards
// dir. "down" reveals what is below, so the finger moves up.
func scrollStrokes(dir string, d Distance, area scene.Rect, center device.Point) ([]stroke, error) {
	vertical := dir == "up" || dir == "down"
	lo, hi, c := area.X0, area.X1, center.X
	if vertical {
		lo, hi, c = area.Y0, area.Y1, center.Y
	}
	extent := hi - lo
	maxLen := int(float64(extent) * strokeShare)
	if maxLen < 2 {
		return nil, fmt.Errorf("the area to scroll is %d px across; too small to swipe in", extent)
	}
	var lengths []int
	switch {
	case d.Pixels > 0:
		n := (d.Pixels + maxLen - 1) / maxLen
		if n > maxStrokes {
			return nil, fmt.Errorf("distance %dpx needs %d swipes here; the limit is %d: scroll less at a time", d.Pixels, n, maxStrokes)
		}
		for i := range n {
			lengths = append(lengths, d.Pixels/n+btoi(i < d.Pixels%n))
		}
	default:
		lengths = []int{min(maxLen, int(float64(extent)*d.Screens))}
	}
	margin := (extent - maxLen) / 2
	var out []stroke
	for _, length := range lengths {
		// Keep the stroke inside the margins, centred on c when it fits.
		a := clamp(c-length/2, lo+margin, hi-margin-length)
		b := a + length
		if dir == "down" || dir == "right" {
			a, b = b, a // the finger moves against the direction of reading
		}
		if vertical {
			out = append(out, stroke{device.Point{X: center.X, Y: a}, device.Point{X: center.X, Y: b}})
		} else {
			out = append(out, stroke{device.Point{X: a, Y: center.Y}, device.Point{X: b, Y: center.Y}})
		}
	}
	return out, nil
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkOnScreen refuses points outside the screen, which drivers would
// clamp or reject in platform-specific ways.
func checkOnScreen(ctx context.Context, env *Env, name string, p device.Point) error {
	info, err := env.Driver.Info(ctx)
	if err != nil {
		return fmt.Errorf("read screen size: %w", err)
	}
	if p.X < 0 || p.Y < 0 || p.X >= info.Width || p.Y >= info.Height {
		return fmt.Errorf("%s (%d, %d) is outside the %dx%d screen", name, p.X, p.Y, info.Width, info.Height)
	}
	return nil
}
