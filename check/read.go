package check

import (
	"context"
	"fmt"
	"slices"

	"github.com/apexagent/apex/scene"
)

// TextReader reads the text an element shows in the screen's pixels (OCR
// of its bounds). Implementations say whether they are safe for concurrent
// use; ReadText calls one at a time.
type TextReader interface {
	RegionText(ctx context.Context, el scene.Element) (string, error)
}

// TextReaderFunc adapts a function to TextReader.
type TextReaderFunc func(ctx context.Context, el scene.Element) (string, error)

// RegionText calls f.
func (f TextReaderFunc) RegionText(ctx context.Context, el scene.Element) (string, error) {
	return f(ctx, el)
}

// ReadText returns the screen c is to be decided on. When c's target's
// text decides it (NeedsText) and the tree gives that element none (a
// canvas, a label drawn inside an image), it is a copy of s in which the
// element reads what r read from its pixels; otherwise s itself, unread.
// A nil r reads nothing. Cancelling ctx stops the reading.
func ReadText(ctx context.Context, c Check, s *scene.Scene, r TextReader) (*scene.Scene, error) {
	if r == nil || s == nil || !c.NeedsText() || c.Target.IsZero() {
		return s, nil
	}
	el, _, err := Find(s, c.Target)
	if err != nil || label(el) != "" {
		return s, nil
	}
	text, err := r.RegionText(ctx, el)
	if err != nil {
		return s, fmt.Errorf("%s has no text in the UI tree, and reading its pixels failed: %w", c.Target, err)
	}
	read := *s
	read.Elements = slices.Clone(s.Elements)
	for i := range read.Elements {
		if read.Elements[i].ID == el.ID {
			read.Elements[i].Text, read.Elements[i].Source = text, scene.SourceBoth
		}
	}
	return &read, nil
}
