package runner

import (
	"context"

	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/scene"
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

// checkOn decides c on s. A text or number check of an element whose text
// the tree does not give (a canvas, an image of a label) reads the
// element's pixels first, unless OCR is off.
func (r *run) checkOn(ctx context.Context, s *screen, c check.Check) check.Result {
	var pixels check.TextReader
	if r.opts.OCRMode != OCROff {
		pixels = check.TextReaderFunc(func(ctx context.Context, el scene.Element) (string, error) {
			return r.perceiver().RegionText(ctx, s, el)
		})
	}
	read, err := check.ReadText(ctx, c, s.Scene, pixels)
	if err != nil {
		return check.Result{Evidence: err.Error()}
	}
	return c.Eval(nil, read)
}

// readAll reads the whole screen once, the last resort of a locator that
// found nothing in the tree.
func (r *run) readAll(ctx context.Context, s *screen) bool { return r.perceiver().ReadAll(ctx, s) }
