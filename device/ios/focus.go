package ios

import (
	"bytes"
	"context"
	"math"
	"strconv"

	"github.com/apexagent/apex/wda"
)

// markFocus adds focused="true" to the element that has the keyboard's
// focus. WebDriverAgent's XML source does not say which element that is;
// its JSON source does (isFocused), so while a keyboard is on screen the
// JSON tree is asked for too and the element found in the XML by type
// and frame. Without a keyboard nothing is asked and src is returned as
// is.
func (d *Driver) markFocus(ctx context.Context, src []byte) []byte {
	if !bytes.Contains(src, []byte("XCUIElementTypeKeyboard")) {
		return src
	}
	tree, err := d.c.Tree(ctx)
	if err != nil {
		d.log.Debug("ios: no JSON source to find the focused element", "wda", d.id, "err", err)
		return src
	}
	f := tree.Find(func(n *wda.Node) bool { return bool(n.Focused) && n.Type != "Application" && n.Type != "Window" })
	if f == nil {
		return src
	}
	return MarkFocused(src, "XCUIElementType"+f.Type, f.Rect)
}

// MarkFocused adds focused="true" to the first start tag of type typ whose
// frame (x, y, width, height in points) is r.
func MarkFocused(src []byte, typ string, r wda.Rect) []byte {
	open := []byte("<" + typ)
	for i := 0; ; {
		j := bytes.Index(src[i:], open)
		if j < 0 {
			return src
		}
		at := i + j
		i = at + len(open)
		if i < len(src) && !isSpace(src[i]) && src[i] != '>' && src[i] != '/' {
			continue // a longer tag name
		}
		var geo [4]float64
		var have int
		_, n, err := scanTag(nil, src[at:], func(out, name, val []byte) []byte {
			if k := geometryIndex[string(name)]; k > 0 {
				if f, err := strconv.ParseFloat(string(val), 64); err == nil {
					geo[k-1] = f
					have++
				}
			}
			return out
		})
		if err != nil || have != 4 || !sameFrame(geo, r) {
			continue
		}
		end := at + n - 1 // the '>'
		if src[end-1] == '/' {
			end--
		}
		out := make([]byte, 0, len(src)+16)
		out = append(out, src[:end]...)
		out = append(out, ` focused="true"`...)
		return append(out, src[end:]...)
	}
}

// geometryIndex numbers the frame attributes from 1.
var geometryIndex = map[string]int{"x": 1, "y": 2, "width": 3, "height": 4}

func sameFrame(g [4]float64, r wda.Rect) bool {
	return math.Abs(g[0]-r.X) < 0.5 && math.Abs(g[1]-r.Y) < 0.5 && math.Abs(g[2]-r.Width) < 0.5 && math.Abs(g[3]-r.Height) < 0.5
}
