// Package report renders a run from the store as a self-contained HTML page,
// <Run.Dir>/report.html, that references the run's screenshots by relative
// path so it stays small and fast however long the run was.
package report

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sync"

	"github.com/apexagent/apex/store"
)

// FileName is the report's name inside the run directory.
const FileName = "report.html"

// Options tune a report. The zero value (or nil) means defaults.
type Options struct {
	// InlineSceneBytes bounds the Scene JSON a report shows inline, summed
	// over the run. Past it, each step's Scene is opened from its file on
	// demand, which keeps a long run's HTML small. Default 384 KiB; a
	// negative value never inlines.
	InlineSceneBytes int
	// Inline embeds every screenshot in the page as a compact JPEG at the
	// size the page shows it, so the one HTML file stands alone (mailed,
	// attached to a CI run); each links to its full PNG, which opens when
	// the run's files are beside the report. Off: the page refers to the
	// PNG files, which keeps a long run's report small.
	Inline bool
}

const defaultInlineSceneBytes = 384 << 10

//go:embed report.html.tmpl
var pageSource string

// pageTemplate is parsed on first use, not at every command's start.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"dur": formatDuration,
	}).Parse(pageSource))
})

// Write renders the report of run runID into <Run.Dir>/report.html and
// returns that path. It may be called while the run is still going: the
// report then shows what has been recorded so far.
func Write(ctx context.Context, s *store.Store, runID string) (string, error) {
	return WriteWith(ctx, s, runID, nil)
}

// WriteWith is Write with options.
func WriteWith(ctx context.Context, s *store.Store, runID string, opts *Options) (string, error) {
	run, page, err := Render(ctx, s, runID, opts)
	if err != nil {
		return "", err
	}
	path := filepath.Join(run.Dir, FileName)
	if err := writeFileAtomic(path, page); err != nil {
		return "", fmt.Errorf("report: write %s: %w", path, err)
	}
	return path, nil
}

// Render is the report page of run runID, and the run, without writing
// it anywhere (the playground answers it whole, inline).
func Render(ctx context.Context, s *store.Store, runID string, opts *Options) (store.Run, []byte, error) {
	if opts == nil {
		opts = &Options{}
	}
	run, err := s.Run(ctx, runID)
	if err != nil {
		return run, nil, fmt.Errorf("report: %w", err)
	}
	steps, err := s.Steps(ctx, runID)
	if err != nil {
		return run, nil, fmt.Errorf("report: %w", err)
	}
	budget := opts.InlineSceneBytes
	if budget == 0 {
		budget = defaultInlineSceneBytes
	}
	p := buildPage(run, steps, budget, opts.Inline)
	events, err := s.RunEvents(ctx, runID)
	if err != nil {
		return run, nil, fmt.Errorf("report: %w", err)
	}
	p.Model = sumModelUse(events)
	p.Goals = buildGoals(run.Started, events, p.Steps)
	var buf bytes.Buffer
	if err := pageTemplate().Execute(&buf, p); err != nil {
		return run, nil, fmt.Errorf("report: render run %s: %w", runID, err)
	}
	return run, buf.Bytes(), nil
}

// writeFileAtomic writes through a temporary file and a rename, so a browser
// reading the report never sees half of it.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Chmod(0o644), f.Close()); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
