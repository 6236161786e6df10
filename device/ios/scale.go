package ios

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// ScaleSource multiplies the geometry attributes (x, y, width, height) of
// every element of an XCUITest XML source by scale and rounds them to
// whole pixels. Everything else is copied byte for byte. It scans the
// markup instead of decoding it, since sources run to megabytes and this
// sits on every observation.
func ScaleSource(src []byte, scale float64) ([]byte, error) {
	if scale <= 0 || math.IsNaN(scale) || math.IsInf(scale, 0) {
		return nil, fmt.Errorf("scale %v: want a positive number", scale)
	}
	out := make([]byte, 0, len(src)+len(src)/16)
	i := 0
	for i < len(src) {
		lt := bytes.IndexByte(src[i:], '<')
		if lt < 0 {
			out = append(out, src[i:]...)
			break
		}
		out = append(out, src[i:i+lt]...)
		i += lt
		rest := src[i:]
		var skip []byte // the end of a construct copied as is
		switch {
		case bytes.HasPrefix(rest, []byte("<!--")):
			skip = []byte("-->")
		case bytes.HasPrefix(rest, []byte("<![CDATA[")):
			skip = []byte("]]>")
		case bytes.HasPrefix(rest, []byte("<?")):
			skip = []byte("?>")
		case bytes.HasPrefix(rest, []byte("<!")), bytes.HasPrefix(rest, []byte("</")):
			skip = []byte(">")
		}
		if skip != nil {
			end := bytes.Index(rest[2:], skip)
			if end < 0 {
				return nil, errors.New("source: unterminated markup")
			}
			n := 2 + end + len(skip)
			out = append(out, rest[:n]...)
			i += n
			continue
		}
		var n int
		var err error
		out, n, err = scanTag(out, rest, func(out, name, val []byte) []byte { return scaleAttr(out, name, val, scale) })
		if err != nil {
			return nil, fmt.Errorf("source at byte %d: %w", i, err)
		}
		i += n
	}
	return out, nil
}

// scanTag copies one start tag (tag begins with '<') to out, each
// attribute value through edit (which appends it, changed or not), and
// returns how many bytes it read.
func scanTag(out, tag []byte, edit func(out, name, val []byte) []byte) ([]byte, int, error) {
	i := 1
	for i < len(tag) && !isSpace(tag[i]) && tag[i] != '>' && tag[i] != '/' {
		i++
	}
	out = append(out, tag[:i]...)
	for i < len(tag) {
		c := tag[i]
		switch {
		case c == '>':
			return append(out, '>'), i + 1, nil
		case isSpace(c) || c == '/':
			out = append(out, c)
			i++
			continue
		}
		// name = "value"
		start := i
		for i < len(tag) && tag[i] != '=' && tag[i] != '>' && !isSpace(tag[i]) {
			i++
		}
		name := tag[start:i]
		for i < len(tag) && isSpace(tag[i]) {
			i++
		}
		if i >= len(tag) || tag[i] != '=' {
			return nil, 0, fmt.Errorf("attribute %q without a value", name)
		}
		i++
		for i < len(tag) && isSpace(tag[i]) {
			i++
		}
		if i >= len(tag) || (tag[i] != '"' && tag[i] != '\'') {
			return nil, 0, fmt.Errorf("attribute %q: value not quoted", name)
		}
		q := tag[i]
		end := bytes.IndexByte(tag[i+1:], q)
		if end < 0 {
			return nil, 0, fmt.Errorf("attribute %q: unterminated value", name)
		}
		val := tag[i+1 : i+1+end]
		out = append(out, tag[start:i+1]...) // name=" (with any spaces)
		out = edit(out, name, val)
		out = append(out, q)
		i += end + 2
	}
	return nil, 0, errors.New("unterminated tag")
}

// scaleAttr appends val, multiplied by scale and rounded when name is a
// geometry attribute holding a number.
func scaleAttr(out, name, val []byte, scale float64) []byte {
	if geometry(name) {
		if f, err := strconv.ParseFloat(string(val), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return strconv.AppendInt(out, int64(math.Round(f*scale)), 10)
		}
	}
	return append(out, val...)
}

func geometry(name []byte) bool {
	switch string(name) {
	case "x", "y", "width", "height":
		return true
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
