package runner

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg" // screenshots may come as JPEG
	_ "image/png"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/ocr"
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

// perception is the run's OCR state: the engine, started on first need,
// and what it knows about the tree's trustworthiness.
type perception struct {
	engine  ocr.Engine
	own     *ocr.Tesseract // started by the run, stopped when it ends
	failed  error          // starting Tesseract failed: do not try again
	acted   *screen        // the screen the last action was performed on
	staleFP string         // a tree fingerprint known to be stale
}

// ocrEngine returns the engine, starting a cached Tesseract the first time
// one is needed when Options.OCR is nil.
func (r *run) ocrEngine(ctx context.Context) (ocr.Engine, error) {
	p := &r.percept
	if p.engine != nil || p.failed != nil {
		return p.engine, p.failed
	}
	if r.opts.OCR != nil {
		p.engine = r.opts.OCR
		return p.engine, nil
	}
	t, err := ocr.NewTesseract(ctx, &ocr.TesseractOptions{Log: r.log})
	if err != nil {
		p.failed = err
		r.log.Warn("OCR unavailable: the UI tree is used alone", "err", err)
		return nil, err
	}
	p.own, p.engine = t, ocr.NewCache(t, 16)
	return p.engine, nil
}

// closeOCR stops the Tesseract processes the run started.
func (r *run) closeOCR() {
	if r.percept.own != nil {
		r.percept.own.Close()
	}
}

// actedOn remembers the screen an action was performed on, to tell a
// stale tree from a screen that did not change.
func (r *run) actedOn(s *screen) { r.percept.acted = s }

// perceive decides whether s's tree can be trusted and, when not, fuses
// OCR of the screenshot into s.scene (s.tree keeps the tree's Scene). The
// tree is checked first; pixels are looked at only when it leaves doubt,
// and OCR runs only when the tree is distrusted. OCR failures are logged:
// the tree alone is still a Scene.
func (r *run) perceive(ctx context.Context, s *screen) error {
	if s.perceived || r.opts.OCRMode == OCROff {
		return nil
	}
	s.perceived = true
	if s.tree == nil {
		s.tree = s.scene
	}
	p := &r.percept
	prev := p.acted
	if prev == s || prev != nil && prev.png == nil {
		prev = nil
	}
	always := r.opts.OCRMode == OCRAlways
	doubt := always || s.tree.Empty || s.fp == p.staleFP || prev != nil && prev.fp == s.fp ||
		len(scene.Screen{Scene: s.tree, Tree: s.ui}.Suspects()) > 0
	if !doubt {
		return nil
	}
	if err := r.shoot(ctx, s); err != nil {
		return err
	}
	cur := scene.Screen{Scene: s.tree, Tree: s.ui, Image: decode(s.png)}
	var before *scene.Screen
	if prev != nil && prev.fp == s.fp {
		before = &scene.Screen{Scene: prev.tree, Image: decode(prev.png)}
		if before.Scene == nil {
			before.Scene = prev.scene
		}
	}
	d := scene.Assess(before, cur)
	if s.fp == p.staleFP && !d.Stale() {
		d.Reasons = append(d.Reasons, scene.ReasonStale) // the tree has not caught up yet
	}
	if d.Stale() {
		p.staleFP = s.fp
	}
	if always && !d.Any() {
		d.Reasons = append(d.Reasons, "asked")
	}
	if !d.Any() {
		return nil
	}
	r.log.Debug("tree distrusted: fusing OCR", "why", d.String(), "regions", d.Regions)
	if err := r.fuse(ctx, s, d); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.log.Warn("OCR failed: the UI tree is used alone", "why", d.String(), "err", err)
	}
	return nil
}

// fuse reads the whole screenshot, or only the distrusted regions when
// the rest of the tree is sound, and fuses what it read into s.scene.
func (r *run) fuse(ctx context.Context, s *screen, d scene.Distrust) error {
	e, err := r.ocrEngine(ctx)
	if err != nil {
		return err
	}
	opts := &scene.FuseOptions{DropUnconfirmed: d.Stale()}
	if d.WholeScreen() || len(d.Regions) == 0 {
		res, err := e.Recognize(ctx, s.png, nil)
		if err != nil {
			return err
		}
		if d.Stale() && scene.Agreement(s.tree, res) >= scene.AgreesAt {
			// The tree the run took for stale shows this screen after all
			// (the app came back to it): trust it again.
			r.percept.staleFP = ""
		}
		s.scene, s.whole = scene.Fuse(s.tree, res, opts), true
		return nil
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(s.png))
	if err != nil {
		return fmt.Errorf("read the screenshot's size: %w", err)
	}
	fused := s.tree
	for _, reg := range d.Regions {
		res, err := e.Recognize(ctx, s.png, &ocr.Options{Region: s.tree.ToPixels(reg, cfg.Width, cfg.Height)})
		if err != nil {
			return err
		}
		fused = scene.Fuse(fused, res, opts)
	}
	s.scene = fused
	return nil
}

func decode(data []byte) image.Image {
	if data == nil {
		return nil
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	return img
}

// regionChecked evaluates a text or number assertion on an element whose
// text the tree does not give (a canvas, an image of a label): it reads
// the element's region of the screenshot and checks what OCR read. Other
// checks, and elements with text, go to check as they are.
func (r *run) regionChecked(ctx context.Context, s *screen, a *script.Assert, loc action.Locator) (any, error) {
	if r.opts.OCRMode == OCROff || !(strings.HasPrefix(a.Op, "text") || strings.HasPrefix(a.Op, "number")) {
		return check(s.scene, a, loc)
	}
	el, err := locate.Find(s.scene, loc)
	if err != nil || label(el) != "" {
		return check(s.scene, a, loc)
	}
	text, err := r.regionText(ctx, s, el)
	if err != nil {
		return nil, fmt.Errorf("%s has no text in the UI tree, and reading its pixels failed: %w", loc, err)
	}
	read := *s.scene
	read.Elements = append([]scene.Element(nil), s.scene.Elements...)
	for i := range read.Elements {
		if read.Elements[i].ID == el.ID {
			read.Elements[i].Text, read.Elements[i].Source = text, scene.SourceBoth
		}
	}
	return check(&read, a, loc)
}

// regionText OCRs one element's bounds.
func (r *run) regionText(ctx context.Context, s *screen, el scene.Element) (string, error) {
	e, err := r.ocrEngine(ctx)
	if err != nil {
		return "", err
	}
	if err := r.shoot(ctx, s); err != nil {
		return "", err
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(s.png))
	if err != nil {
		return "", fmt.Errorf("read the screenshot's size: %w", err)
	}
	res, err := e.Recognize(ctx, s.png, &ocr.Options{Region: s.scene.ToPixels(el.Bounds, cfg.Width, cfg.Height)})
	if err != nil {
		return "", err
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(res.Text(), "\n", " ")), " "), nil
}

// readAll is the last resort of a locator that found nothing: text drawn
// where the tree has a node without it (a label inside an image, a
// custom view) that the trust checks had no reason to read. It reads the
// whole screenshot once per screen and reports whether it did.
func (r *run) readAll(ctx context.Context, s *screen) bool {
	if r.opts.OCRMode == OCROff || s.whole {
		return false
	}
	if s.tree == nil {
		s.tree = s.scene
	}
	if err := r.shoot(ctx, s); err != nil {
		return false
	}
	e, err := r.ocrEngine(ctx)
	if err != nil {
		return false
	}
	res, err := e.Recognize(ctx, s.png, nil)
	if err != nil {
		r.log.Warn("OCR of the whole screen failed", "err", err)
		return false
	}
	r.log.Debug("locator found nothing in the tree: read the whole screen")
	s.scene, s.whole = scene.Fuse(s.tree, res, &scene.FuseOptions{DropUnconfirmed: s.fp == r.percept.staleFP}), true
	return true
}
