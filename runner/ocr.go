package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/script"
)

// OCR modes (Options.OCRMode).
const (
	// OCRAuto reads the screenshot only when the tree cannot be trusted:
	// stale after an action, nothing but system windows, or a large region
	// without text nodes whose pixels hold text. A screen whose tree is
	// sound costs no OCR.
	OCRAuto = ""
	// OCRAlways fuses OCR into every settled screen.
	OCRAlways = "always"
	// OCROff never reads pixels.
	OCROff = "off"
)

// perceiver is the run's view of the device: the tree's Scene, fused with
// OCR when the tree cannot be trusted (package perceive).
func (r *run) perceiver() *perceive.Perceiver {
	if r.percept == nil {
		r.percept = perceive.New(r.drv, &perceive.Options{Mode: perceive.Mode(r.opts.OCRMode), Engine: r.opts.OCR,
			Scene: r.opts.SceneOptions, Log: r.log})
	}
	return r.percept
}

// closeOCR stops the Tesseract processes the run started.
func (r *run) closeOCR() {
	if r.percept != nil {
		r.percept.Close()
	}
}

// actedOn remembers the screen an action was performed on, to tell a
// stale tree from a screen that did not change.
func (r *run) actedOn(s *screen) { r.perceiver().ActedOn(s) }

// perceive fuses OCR into s when its tree cannot be trusted.
func (r *run) perceive(ctx context.Context, s *screen) error { return r.perceiver().Perceive(ctx, s) }

// regionChecked evaluates a text or number assertion on an element whose
// text the tree does not give (a canvas, an image of a label): it reads
// the element's region of the screenshot and checks what OCR read. Other
// checks, and elements with text, go to check as they are.
func (r *run) regionChecked(ctx context.Context, s *screen, a *script.Assert, loc action.Locator) (any, error) {
	if r.opts.OCRMode == OCROff || !(strings.HasPrefix(a.Op, "text") || strings.HasPrefix(a.Op, "number")) {
		return check(s.Scene, a, loc)
	}
	el, err := locate.Find(s.Scene, loc)
	if err != nil || label(el) != "" {
		return check(s.Scene, a, loc)
	}
	text, err := r.regionText(ctx, s, el)
	if err != nil {
		return nil, fmt.Errorf("%s has no text in the UI tree, and reading its pixels failed: %w", loc, err)
	}
	read := *s.Scene
	read.Elements = append([]scene.Element(nil), s.Scene.Elements...)
	for i := range read.Elements {
		if read.Elements[i].ID == el.ID {
			read.Elements[i].Text, read.Elements[i].Source = text, scene.SourceBoth
		}
	}
	return check(&read, a, loc)
}

// regionText OCRs one element's bounds.
func (r *run) regionText(ctx context.Context, s *screen, el scene.Element) (string, error) {
	return r.perceiver().RegionText(ctx, s, el)
}

// readAll reads the whole screen once, the last resort of a locator that
// found nothing in the tree.
func (r *run) readAll(ctx context.Context, s *screen) bool { return r.perceiver().ReadAll(ctx, s) }
