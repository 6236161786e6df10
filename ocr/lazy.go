package ocr

import (
	"context"
	"errors"
	"sync"
)

// ErrClosed is the error of a Lazy engine used after Close.
var ErrClosed = errors.New("ocr: engine closed")

// Lazy is a cached Tesseract engine started on first use, so a process
// that may never need OCR (a playground, an MCP server) starts nothing,
// and one that does shares one set of resident processes between all its
// tasks. When tesseract is not installed every call fails with
// ErrNotInstalled. It is safe for concurrent use; Close stops the
// processes.
type Lazy struct {
	opts *TesseractOptions

	mu     sync.Mutex
	t      *Tesseract
	e      Engine
	err    error
	closed bool
}

// lazyCache is how many recent results a Lazy engine keeps.
const lazyCache = 32

// NewLazy returns an engine that starts Tesseract with opts on first use.
func NewLazy(opts *TesseractOptions) *Lazy { return &Lazy{opts: opts} }

// Recognize starts Tesseract if it has not been, then reads img.
func (l *Lazy) Recognize(ctx context.Context, img []byte, opts *Options) (*Result, error) {
	e, err := l.engine(ctx)
	if err != nil {
		return nil, err
	}
	return e.Recognize(ctx, img, opts)
}

func (l *Lazy) engine(ctx context.Context) (Engine, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.e != nil || l.err != nil {
		return l.e, l.err
	}
	if l.closed {
		return nil, ErrClosed
	}
	t, err := NewTesseract(ctx, l.opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err // try again next time
		}
		l.err = err
		return nil, err
	}
	l.t, l.e = t, NewCache(t, lazyCache)
	return l.e, nil
}

// Close stops the Tesseract processes, if any were started; later calls
// fail with ErrClosed.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.t == nil {
		return nil
	}
	err := l.t.Close()
	l.t, l.e = nil, nil
	return err
}
