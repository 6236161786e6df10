// Package perceive turns what a device shows into the Scene to act on: the
// UI tree's Scene while the tree can be trusted, and that Scene fused with
// OCR of the screenshot when it cannot (stale after an action, nothing but
// system windows, text in pixels where the tree has no nodes). A screen
// whose tree is sound costs no screenshot and no OCR.
package perceive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // screenshots may come as JPEG
	_ "image/png"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/ocr"
	"github.com/apexagent/apex/scene"
)

// Mode says when OCR runs.
type Mode string

const (
	// Auto reads the screenshot only when the tree cannot be trusted.
	Auto Mode = ""
	// Always fuses OCR into every perceived screen.
	Always Mode = "always"
	// Off never reads pixels.
	Off Mode = "off"
)

// ParseMode reads a mode name: auto (or ""), always or off.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "auto":
		return Auto, nil
	case "always", "off":
		return Mode(s), nil
	}
	return "", fmt.Errorf("OCR mode %q: use auto, always or off", s)
}

// Screen is one observation of a device.
type Screen struct {
	// Scene is what to act on: the tree's Scene, with OCR fused in when
	// the tree could not be trusted.
	Scene *scene.Scene
	// Tree is the tree's Scene alone; UI the parsed source, for the checks
	// that need its nodes.
	Tree *scene.Scene
	UI   *scene.Tree
	// FP is the tree's fingerprint.
	FP string
	// PNG is the screenshot, nil until one was needed.
	PNG []byte
	// Settled is set by callers that waited for the screen to stop
	// changing.
	Settled bool

	perceived bool
	whole     bool // the whole screenshot has been read
}

// Options configure a Perceiver. The zero value reads pixels when needed,
// with a Tesseract engine started on first need.
type Options struct {
	Mode Mode
	// Engine reads screenshots (an *ocr.Lazy shares one Tesseract between
	// perceivers); nil starts a cached Tesseract on first need, which
	// Close stops. When Tesseract is not installed, the tree is used alone.
	Engine ocr.Engine
	// Scene tunes the Scenes built from the UI source.
	Scene *scene.Options
	// Timing paces Settle and Poll.
	Timing Timing
	Log    *slog.Logger
}

// Perceiver observes one device and keeps what it learns about the tree's
// trustworthiness from one screen to the next. It is used by one run or
// task at a time: its methods are not safe for concurrent use.
type Perceiver struct {
	drv  device.Driver
	opts Options
	log  *slog.Logger

	engine  ocr.Engine
	own     *ocr.Tesseract // started here, stopped by Close
	failed  error          // starting Tesseract failed: do not try again
	acted   *Screen        // the screen the last action was performed on
	staleFP string         // a tree fingerprint known to be stale
	waited  atomic.Int64   // nanoseconds Settle and Poll waited between observations
}

// New returns a Perceiver of d's screens.
func New(d device.Driver, opts *Options) *Perceiver {
	p := &Perceiver{drv: d}
	if opts != nil {
		p.opts = *opts
	}
	p.log = p.opts.Log
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	return p
}

// Mode is the perceiver's OCR mode.
func (p *Perceiver) Mode() Mode { return p.opts.Mode }

// Close stops the Tesseract processes the Perceiver started.
func (p *Perceiver) Close() {
	if p.own != nil {
		p.own.Close()
	}
}

// Observe reads the UI source and builds its Scene; no pixels are read.
func (p *Perceiver) Observe(ctx context.Context) (*Screen, error) {
	src, err := p.drv.Source(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the UI source: %w", err)
	}
	t, err := scene.Parse(src.Data)
	if err != nil {
		return nil, fmt.Errorf("parse the UI source (%s, %d bytes): %w", src.Format, len(src.Data), err)
	}
	sc := scene.Build(t, p.opts.Scene)
	return &Screen{Scene: sc, Tree: sc, FP: sc.Fingerprint(), UI: t}, nil
}

// Shoot adds a screenshot to s unless it has one.
func (p *Perceiver) Shoot(ctx context.Context, s *Screen) error {
	if s.PNG != nil {
		return nil
	}
	png, err := p.drv.Screenshot(ctx)
	if err != nil {
		return fmt.Errorf("take a screenshot: %w", err)
	}
	s.PNG = png
	return nil
}

// ActedOn remembers the screen an action was performed on, to tell a
// stale tree from a screen the action did not change.
func (p *Perceiver) ActedOn(s *Screen) { p.acted = s }

// Stale reports whether s's tree is one known to lag behind the screen.
func (p *Perceiver) Stale(s *Screen) bool { return s.FP == p.staleFP }

// engineFor returns the OCR engine, starting a cached Tesseract the first
// time one is needed when Options.Engine is nil.
func (p *Perceiver) engineFor(ctx context.Context) (ocr.Engine, error) {
	if p.failed != nil {
		return nil, p.failed
	}
	if p.engine != nil {
		return p.engine, nil
	}
	if p.opts.Engine != nil {
		p.engine = p.opts.Engine
		return p.engine, nil
	}
	t, err := ocr.NewTesseract(ctx, &ocr.TesseractOptions{Log: p.log})
	if err != nil {
		p.failed = err
		p.log.Warn("OCR unavailable: the UI tree is used alone", "err", err)
		return nil, err
	}
	p.own, p.engine = t, ocr.NewCache(t, 16)
	return p.engine, nil
}

// Perceive decides whether s's tree can be trusted and, when not, fuses
// OCR of the screenshot into s.Scene (s.Tree keeps the tree's Scene). The
// tree is checked first; pixels are looked at only when it leaves doubt,
// and OCR runs only when the tree is distrusted. OCR failures are logged:
// the tree alone is still a Scene. Only a failed screenshot or the end of
// ctx is an error.
func (p *Perceiver) Perceive(ctx context.Context, s *Screen) error {
	if s.perceived || p.opts.Mode == Off {
		return nil
	}
	s.perceived = true
	prev := p.acted
	if prev == s || prev != nil && prev.PNG == nil {
		prev = nil
	}
	always := p.opts.Mode == Always
	doubt := always || s.Tree.Empty || s.FP == p.staleFP || prev != nil && prev.FP == s.FP ||
		len(scene.Screen{Scene: s.Tree, Tree: s.UI}.Suspects()) > 0
	if !doubt {
		return nil
	}
	if err := p.Shoot(ctx, s); err != nil {
		return err
	}
	cur := scene.Screen{Scene: s.Tree, Tree: s.UI, Image: decode(s.PNG)}
	var before *scene.Screen
	if prev != nil && prev.FP == s.FP {
		before = &scene.Screen{Scene: prev.Tree, Image: decode(prev.PNG)}
	}
	d := scene.Assess(before, cur)
	if s.FP == p.staleFP && !d.Stale() {
		d.Reasons = append(d.Reasons, scene.ReasonStale) // the tree has not caught up yet
	}
	if d.Stale() {
		p.staleFP = s.FP
	}
	if always && !d.Any() {
		d.Reasons = append(d.Reasons, "asked")
	}
	if !d.Any() {
		return nil
	}
	p.log.Debug("tree distrusted: fusing OCR", "why", d.String(), "regions", d.Regions)
	if err := p.fuse(ctx, s, d); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.ocrFailed("OCR failed: the UI tree is used alone", err, "why", d.String())
	}
	return nil
}

// ocrFailed logs an OCR failure; an engine that cannot run at all (no
// tesseract) is not asked again.
func (p *Perceiver) ocrFailed(msg string, err error, args ...any) {
	if errors.Is(err, ocr.ErrNotInstalled) || errors.Is(err, ocr.ErrClosed) {
		if p.failed == nil {
			p.log.Warn("OCR unavailable: the UI tree is used alone", "err", err)
		}
		p.failed = err
		return
	}
	p.log.Warn(msg, append(args, "err", err)...)
}

// fuse reads the whole screenshot, or only the distrusted regions when
// the rest of the tree is sound, and fuses what it read into s.Scene.
func (p *Perceiver) fuse(ctx context.Context, s *Screen, d scene.Distrust) error {
	e, err := p.engineFor(ctx)
	if err != nil {
		return err
	}
	opts := &scene.FuseOptions{DropUnconfirmed: d.Stale()}
	if d.WholeScreen() || len(d.Regions) == 0 {
		res, err := e.Recognize(ctx, s.PNG, nil)
		if err != nil {
			return err
		}
		if d.Stale() && scene.Agreement(s.Tree, res) >= scene.AgreesAt {
			// The tree taken for stale shows this screen after all (the
			// app came back to it): trust it again.
			p.staleFP = ""
		}
		s.Scene, s.whole = scene.Fuse(s.Tree, res, opts), true
		return nil
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(s.PNG))
	if err != nil {
		return fmt.Errorf("read the screenshot's size: %w", err)
	}
	fused := s.Tree
	for _, reg := range d.Regions {
		res, err := e.Recognize(ctx, s.PNG, &ocr.Options{Region: s.Tree.ToPixels(reg, cfg.Width, cfg.Height)})
		if err != nil {
			return err
		}
		fused = scene.Fuse(fused, res, opts)
	}
	s.Scene = fused
	return nil
}

// RegionText reads one element's bounds in the screenshot: the text of a
// canvas or of a label drawn inside an image, which the tree does not give.
func (p *Perceiver) RegionText(ctx context.Context, s *Screen, el scene.Element) (string, error) {
	e, err := p.engineFor(ctx)
	if err != nil {
		return "", err
	}
	if err := p.Shoot(ctx, s); err != nil {
		return "", err
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(s.PNG))
	if err != nil {
		return "", fmt.Errorf("read the screenshot's size: %w", err)
	}
	res, err := e.Recognize(ctx, s.PNG, &ocr.Options{Region: s.Scene.ToPixels(el.Bounds, cfg.Width, cfg.Height)})
	if err != nil {
		return "", err
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(res.Text(), "\n", " ")), " "), nil
}

// ReadAll is the last resort of a locator that found nothing: text drawn
// where the tree has a node without it (a label inside an image, a custom
// view) that the trust checks had no reason to read. It reads the whole
// screenshot once per screen and reports whether it did.
func (p *Perceiver) ReadAll(ctx context.Context, s *Screen) bool {
	if p.opts.Mode == Off || s.whole {
		return false
	}
	if err := p.Shoot(ctx, s); err != nil {
		return false
	}
	e, err := p.engineFor(ctx)
	if err != nil {
		return false
	}
	res, err := e.Recognize(ctx, s.PNG, nil)
	if err != nil {
		p.ocrFailed("OCR of the whole screen failed", err)
		return false
	}
	p.log.Debug("locator found nothing in the tree: read the whole screen")
	s.Scene, s.whole = scene.Fuse(s.Tree, res, &scene.FuseOptions{DropUnconfirmed: s.FP == p.staleFP}), true
	return true
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
