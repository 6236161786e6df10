package scene

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrNotUISource is wrapped by Parse's error when the input is well-formed
// XML (or no XML at all) but not a UI source it knows.
var ErrNotUISource = errors.New("not a uiautomator or XCUITest source")

// maxDepth bounds element nesting; real dumps stay under ~100 levels.
const maxDepth = 1000

// Parse reads an Android uiautomator dump, an Appium UiAutomator2 page
// source (elements named after widget classes), or an iOS XCUITest /
// WebDriverAgent page source (also Appium Mac2 sources), detecting which
// from the root element. CRLF line endings, a missing XML declaration and
// several top-level windows are all accepted.
//
// Malformed XML yields an error naming the byte offset and what was
// expected; anything else yields an error wrapping ErrNotUISource. Parse
// never panics.
//
// Two readers share the tree-building code: a fast scanner for the plain
// XML subset dumpers write (see fastxml.go), and encoding/xml's token
// stream, which handles everything else and words every error. Whenever
// the fast scanner meets anything outside its subset, or an error, Parse
// starts over with encoding/xml, so both always agree (FuzzFastParse
// checks it).
func Parse(data []byte) (*Tree, error) {
	if p, ok := parseFast(data); ok {
		return p.tree(), nil
	}
	return parseDecoder(data)
}

// parseDecoder reads data with encoding/xml's token stream.
func parseDecoder(data []byte) (*Tree, error) {
	p := parser{data: data, d: xml.NewDecoder(bytes.NewReader(data))}
	p.d.CharsetReader = charsetReader
	if err := p.run(); err != nil {
		return nil, err
	}
	return p.tree(), nil
}

func (p *parser) tree() *Tree {
	t := &Tree{Format: p.format, Root: p.root, Nodes: p.nodes, Bytes: len(p.data)}
	t.Width, t.Height = screenSize(t)
	return t
}

type parser struct {
	data   []byte
	d      *xml.Decoder
	format string
	root   *Node
	tops   []*Node // top-level elements
	stack  []open
	nodes  int
}

type open struct {
	name string
	node *Node
	off  int
}

func (p *parser) run() error {
	for {
		off := int(p.d.InputOffset())
		tok, err := p.d.RawToken()
		if err == io.EOF {
			return p.finish()
		}
		if err != nil {
			return p.syntaxError(err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if err := p.start(qname(tok.Name), tok.Attr, off); err != nil {
				return err
			}
		case xml.EndElement:
			if err := p.end(qname(tok.Name), off); err != nil {
				return err
			}
		}
	}
}

func (p *parser) start(name string, attrs []xml.Attr, off int) error {
	if len(p.stack) == 0 {
		format, ok := detect(name, attrs)
		if !ok {
			return fmt.Errorf("scene: parse: root element <%s> at byte %d: %w (expected <hierarchy>, <AppiumAUT> or <XCUIElementType…>)", name, off, ErrNotUISource)
		}
		if p.format != "" && format != p.format {
			return fmt.Errorf("scene: parse: element <%s> at byte %d: a %s source cannot continue with a %s window", name, off, p.format, format)
		}
		p.format = format
	}
	if len(p.stack) >= maxDepth {
		return fmt.Errorf("scene: parse: element <%s> at byte %d: nesting deeper than %d elements", name, off, maxDepth)
	}
	n := &Node{Offset: off, Enabled: true, Visible: true}
	var err error
	if p.format == FormatXCUITest {
		err = fillXCUITest(n, name, attrs)
	} else {
		err = fillUIAutomator(n, name, attrs)
	}
	if err != nil {
		return fmt.Errorf("scene: parse: element <%s> at byte %d: %w", name, off, err)
	}
	p.nodes++
	if len(p.stack) == 0 {
		p.tops = append(p.tops, n)
	} else {
		parent := p.stack[len(p.stack)-1].node
		parent.Children = append(parent.Children, n)
	}
	p.stack = append(p.stack, open{name: name, node: n, off: off})
	return nil
}

func (p *parser) end(name string, off int) error {
	if len(p.stack) == 0 {
		return fmt.Errorf("scene: malformed XML at byte %d: unexpected </%s>: expected a start tag", off, name)
	}
	top := p.stack[len(p.stack)-1]
	if top.name != name {
		return fmt.Errorf("scene: malformed XML at byte %d: found </%s>, expected </%s> to close <%s> opened at byte %d", off, name, top.name, top.name, top.off)
	}
	p.stack = p.stack[:len(p.stack)-1]
	if n := top.node; len(p.stack) > 0 && (n.innerText || n.Text != "" || n.Desc != "") {
		p.stack[len(p.stack)-1].node.innerText = true
	}
	return nil
}

func (p *parser) finish() error {
	if len(p.stack) > 0 {
		top := p.stack[len(p.stack)-1]
		return fmt.Errorf("scene: malformed XML at byte %d: unexpected end of input, expected </%s> to close <%s> opened at byte %d", len(p.data), top.name, top.name, top.off)
	}
	if len(p.tops) == 0 {
		return fmt.Errorf("scene: parse: no XML element in %d bytes: %w", len(p.data), ErrNotUISource)
	}
	if len(p.tops) == 1 {
		p.root = p.tops[0]
		return nil
	}
	// Several top-level elements (dumps of each window concatenated):
	// hold them under one synthetic root.
	p.root = &Node{Class: "hierarchy", Enabled: true, Visible: true, Children: p.tops}
	return nil
}

// syntaxError turns a decoder error into one that says where and what was
// expected.
func (p *parser) syntaxError(err error) error {
	off := int(p.d.InputOffset())
	var se *xml.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Errorf("scene: malformed XML at byte %d: %w", off, err)
	}
	msg := se.Msg
	if strings.Contains(msg, "EOF") && len(p.stack) > 0 {
		top := p.stack[len(p.stack)-1]
		msg += fmt.Sprintf("; expected </%s> to close <%s> opened at byte %d", top.name, top.name, top.off)
	}
	return fmt.Errorf("scene: malformed XML at byte %d (line %d): %s", off, se.Line, msg)
}

func qname(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

// detect decides the format from the root element.
func detect(name string, attrs []xml.Attr) (string, bool) {
	switch {
	case name == "hierarchy" || name == "node" || name == "window":
		return FormatUIAutomator, true
	case name == "AppiumAUT" || strings.HasPrefix(name, "XCUIElementType"):
		return FormatXCUITest, true
	}
	// An Appium UiAutomator2 element without the <hierarchy> wrapper:
	// named after its class and carrying bounds.
	if strings.Contains(name, ".") {
		for _, a := range attrs {
			if a.Name.Space == "" && a.Name.Local == "bounds" {
				return FormatUIAutomator, true
			}
		}
	}
	return "", false
}

// charsetReader accepts the encodings UI sources are written in: every
// dumper writes UTF-8, some spell it differently.
func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return input, nil
	}
	return nil, fmt.Errorf("encoding %q is not supported: UI sources are UTF-8", charset)
}

// screenSize is the size the root declares, or else the extent of the
// windows. The larger of the two wins: Appium's <hierarchy width height>
// excludes the navigation bar that nodes may still cover.
func screenSize(t *Tree) (w, h int) {
	r := t.Root
	if r.hasBounds && r.Bounds.X0 == 0 && r.Bounds.Y0 == 0 {
		w, h = r.Bounds.X1, r.Bounds.Y1
	}
	if v, ok := atoiAttr(r.Attrs["width"]); ok && v > w {
		w = v
	}
	if v, ok := atoiAttr(r.Attrs["height"]); ok && v > h {
		h = v
	}
	var grow func(n *Node, depth int)
	grow = func(n *Node, depth int) {
		if n.hasBounds && !n.Bounds.Empty() {
			w, h = max(w, n.Bounds.X1), max(h, n.Bounds.Y1)
			return
		}
		// Look through grouping elements and zero-sized roots (Mac2
		// applications are 0x0) down to the first sized elements.
		if depth < 3 {
			for _, c := range n.Children {
				grow(c, depth+1)
			}
		}
	}
	if w == 0 || h == 0 || t.Format == FormatUIAutomator {
		for _, c := range r.Children {
			grow(c, 0)
		}
	}
	return w, h
}
