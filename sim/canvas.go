package sim

import (
	"fmt"
	"image"
)

// canvasChildren lays a canvas's children out below its lines. They are
// drawn and tapped like any element but are absent from the UI tree:
// buttons that exist only in pixels, as in a game or a Flutter app without
// semantics. Give the canvas style: full (or room enough) for them to show.
func (c *layoutCtx) canvasChildren(v *view, e *Element, scope *evalScope, key string) {
	y := v.r.Min.Y + c.dp(float64(32*len(e.Lines)+40))
	x0, x1 := v.r.Min.X+c.dp(16), v.r.Max.X-c.dp(16)
	for i, ch := range e.Children {
		if !c.shown(ch, scope) {
			continue
		}
		h := c.height(ch, x1-x0, scope)
		if h < 0 {
			h = c.dp(60)
		}
		cv := c.element(ch, image.Rect(x0, y, x1, y+h), scope, fmt.Sprintf("%s/canvas%d", key, i))
		cv.walk(func(w *view) bool {
			w.noNode = true
			return true
		})
		v.children = append(v.children, cv)
		y += h
	}
}

// canvasHeight is its height: room for the lines and the children; a
// canvas of style full with children takes what the screen has left, like
// a list.
func (c *layoutCtx) canvasHeight(e *Element, width int, scope *evalScope) int {
	if e.Height > 0 {
		return c.dp(float64(e.Height))
	}
	if e.Style == "full" && len(e.Children) > 0 {
		return -1
	}
	h := c.dp(float64(32*len(e.Lines) + 40))
	for _, ch := range e.Children {
		if c.shown(ch, scope) {
			h += max(c.height(ch, width-c.dp(32), scope), 0)
		}
	}
	return h
}
