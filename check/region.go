package check

import (
	"fmt"
	"strings"

	"github.com/apexagent/apex/scene"
)

// RegionRect maps a region name to a part of the screen (top, bottom,
// left, right, center, header, footer, dialog); any other name
// is found as an element, whose bounds are the region.
func RegionRect(s *scene.Scene, name string) (scene.Rect, bool) {
	w, h := s.Width, s.Height
	switch strings.ToLower(name) {
	case "top":
		return scene.Rect{X1: w, Y1: h / 2}, true
	case "bottom":
		return scene.Rect{Y0: h / 2, X1: w, Y1: h}, true
	case "left":
		return scene.Rect{X1: w / 2, Y1: h}, true
	case "right":
		return scene.Rect{X0: w / 2, X1: w, Y1: h}, true
	case "center", "centre":
		return scene.Rect{X0: w / 4, Y0: h / 4, X1: w * 3 / 4, Y1: h * 3 / 4}, true
	case "header":
		return scene.Rect{X1: w, Y1: h * 15 / 100}, true
	case "footer":
		return scene.Rect{Y0: h * 85 / 100, X1: w, Y1: h}, true
	case "dialog":
		return scene.Rect{X0: w / 10, Y0: h / 5, X1: w * 9 / 10, Y1: h * 4 / 5}, true
	}
	if e, _, err := Find(s, ParseTarget(name)); err == nil {
		return e.Bounds, true
	}
	return scene.Rect{}, false
}

// regions decides region assertions; the result is as sure as its least
// sure part.
func regions(rs []RegionText, s *scene.Scene) Result {
	var why []string
	q := 1.0
	for _, r := range rs {
		rect, ok := RegionRect(s, r.Name)
		if !ok {
			return Result{Quality: absence(s), Evidence: fmt.Sprintf("region %q is not on screen", r.Name)}
		}
		var in []scene.Element
		for _, e := range s.Elements {
			if x, y := e.Bounds.Center(); !e.System && rect.Contains(x, y) {
				in = append(in, e)
			}
		}
		found, exact := false, false
		var hit scene.Element
		for _, e := range in {
			l := label(e)
			if r.Text != "" && strings.Contains(l, r.Text) || r.Text == "" && l == r.MustEqual {
				found, hit = true, e
				exact = r.MustEqual == "" || l == r.MustEqual
				if exact {
					break
				}
			}
		}
		mustExist := r.MustExist == nil || *r.MustExist
		switch {
		case mustExist && !found:
			return Result{Quality: absence(s), Actual: false,
				Evidence: fmt.Sprintf("region %s: %q not found among %d elements", r.Name, r.Text+r.MustEqual, len(in))}
		case !mustExist && found:
			return Result{Quality: 1, Actual: true, Element: &hit,
				Evidence: fmt.Sprintf("region %s: %q is there (%s) but must not be", r.Name, r.Text, brief(hit))}
		case found && !exact:
			if norm(label(hit)) != norm(r.MustEqual) {
				return Result{Quality: 1, Actual: label(hit), Element: &hit,
					Evidence: fmt.Sprintf("region %s: %s reads %q, want %q", r.Name, hit.ID, label(hit), r.MustEqual)}
			}
			q = min(q, looseText)
		}
		why = append(why, r.Name+" ok")
	}
	return Result{Pass: true, Quality: q, Actual: true, Evidence: "regions: " + strings.Join(why, ", ")}
}
