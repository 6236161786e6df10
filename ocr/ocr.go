// Package ocr reads text out of screenshots: words and lines with boxes in
// image pixels and a confidence, for a whole screen or one region of it.
package ocr

import (
	"context"
	"errors"
	"image"
	"strings"
	"unicode"
)

// Engine recognises text in an encoded image (PNG or JPEG, as a device's
// Screenshot returns it). Implementations are safe for concurrent use.
// Cancelling ctx stops the recognition and returns ctx's error.
type Engine interface {
	Recognize(ctx context.Context, img []byte, opts *Options) (*Result, error)
}

// Options select what to read. A nil *Options means the engine's defaults.
type Options struct {
	// Languages are Tesseract-style codes ("eng", "chi_sim"); empty means
	// the engine's default set.
	Languages []string
	// Region limits recognition to this rectangle of the image; boxes in the
	// result are still in full-image coordinates. The zero rectangle means
	// the whole image. A region partly outside the image is clipped.
	Region image.Rectangle
	// Scale enlarges the region before recognition; small text reads better
	// larger. 0 picks a scale from the region's size; 1 disables scaling.
	Scale float64
	// PSM is Tesseract's page segmentation mode; 0 picks one (sparse text
	// for whole screens, a single block for regions).
	PSM int
}

// ErrBadImage wraps failures to decode the input image.
var ErrBadImage = errors.New("ocr: image cannot be decoded (want PNG or JPEG)")

// Result is what an engine read.
type Result struct {
	// Width and Height are the full image's size in pixels.
	Width  int `json:"width"`
	Height int `json:"height"`
	// Region is the part of the image that was read (the whole image when
	// no region was asked for).
	Region image.Rectangle `json:"region"`
	Words  []Word          `json:"words"`
	Lines  []Line          `json:"lines"`
	// Languages are the languages actually used.
	Languages []string `json:"languages,omitempty"`
}

// Word is one recognised word (for Chinese, often one character or a short run).
type Word struct {
	Text       string          `json:"text"`
	Box        image.Rectangle `json:"box"`
	Confidence float64         `json:"confidence"` // 0..1
}

// Line is a run of words the engine read as one line of text.
type Line struct {
	Text       string          `json:"text"`
	Box        image.Rectangle `json:"box"`
	Confidence float64         `json:"confidence"` // mean of its words
	Words      []Word          `json:"words"`
}

// Text returns every line's text, one line each.
func (r *Result) Text() string {
	var b strings.Builder
	for i, l := range r.Lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.Text)
	}
	return b.String()
}

// NewLine builds a line from its words: the text joins the words with a
// space except between two CJK characters, the box is their union and the
// confidence their mean.
func NewLine(words []Word) Line {
	l := Line{Words: words}
	var b strings.Builder
	var sum float64
	for i, w := range words {
		if i > 0 && !(endsCJK(words[i-1].Text) && startsCJK(w.Text)) {
			b.WriteByte(' ')
		}
		b.WriteString(w.Text)
		l.Box = l.Box.Union(w.Box)
		sum += w.Confidence
	}
	l.Text = b.String()
	if len(words) > 0 {
		l.Confidence = sum / float64(len(words))
	}
	return l
}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) ||
		(r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef)
}

func startsCJK(s string) bool {
	for _, r := range s {
		return isCJK(r)
	}
	return false
}

func endsCJK(s string) bool {
	rs := []rune(s)
	return len(rs) > 0 && isCJK(rs[len(rs)-1])
}
