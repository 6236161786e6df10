package ocr

import "image"

// What the external tests (package ocr_test, which may import packages
// that import ocr) use of this package's test helpers.

var (
	TestEngine   = testEngine
	CanvasScreen = canvasScreen
)

// Found reports whether res has a word reading want's text at its box.
func Found(res *Result, want Drawn) bool { return found(res, want) }

// Drawn is a word drawn on the canvas screen.
type Drawn = drawn

// Text and Box are what a drawn word says and where.
func (d drawn) Text() string         { return d.text }
func (d drawn) Box() image.Rectangle { return d.box }
