package adbd

import (
	"bytes"
	"encoding/xml"
	"io"
)

// activeWindow trims a hierarchy of several windows (app, status bar,
// navigation bar, keyboard) to the window of pkg, as `uiautomator dump`
// does without --windows: it dumps getRootInActiveWindow(), one root.
// Tools rely on that (mobile-mcp reads hierarchy.node as one object). The
// bytes of the kept window are copied as they are. A hierarchy with one
// root, or one it cannot read, is returned unchanged.
func activeWindow(dump []byte, pkg string) []byte {
	type span struct {
		start, end int64
		pkg        string
	}
	var roots []span
	d := xml.NewDecoder(bytes.NewReader(dump))
	depth := 0
	var cur span
	for {
		off := d.InputOffset()
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return dump
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 2 && t.Name.Local == "node" {
				cur = span{start: off}
				for _, a := range t.Attr {
					if a.Name.Local == "package" {
						cur.pkg = a.Value
					}
				}
			}
		case xml.EndElement:
			if depth == 2 && t.Name.Local == "node" {
				cur.end = d.InputOffset()
				roots = append(roots, cur)
			}
			depth--
		}
	}
	if len(roots) <= 1 {
		return dump
	}
	keep := roots[0]
	for _, r := range roots {
		if r.pkg == pkg {
			keep = r
			break
		}
	}
	out := make([]byte, 0, len(dump))
	out = append(out, dump[:roots[0].start]...)
	out = append(out, dump[keep.start:keep.end]...)
	return append(out, dump[roots[len(roots)-1].end:]...)
}
