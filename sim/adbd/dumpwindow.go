package adbd

import (
	"bytes"
	"encoding/xml"
	"io"
)

// activeWindow trims a hierarchy of several windows (app, dialog, toast,
// status bar, navigation bar, keyboard) to the active window of pkg, as
// `uiautomator dump` does without --windows: it dumps
// getRootInActiveWindow(), one root. The active window is the topmost one
// of pkg that takes focus: an open dialog rather than the activity under it,
// never a toast.
// Tools rely on that (mobile-mcp reads hierarchy.node as one object). The
// bytes of the kept window are copied as they are. A hierarchy with one
// root, or one it cannot read, is returned unchanged.
func activeWindow(dump []byte, pkg string) []byte {
	type span struct {
		start, end int64
		pkg        string
		toast      bool
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
					switch a.Name.Local {
					case "package":
						cur.pkg = a.Value
					case "class":
						cur.toast = a.Value == "android.widget.Toast"
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
		if r.pkg == pkg && !r.toast {
			keep = r // later roots lie above earlier ones
		}
	}
	out := make([]byte, 0, len(dump))
	out = append(out, dump[:roots[0].start]...)
	out = append(out, dump[keep.start:keep.end]...)
	return append(out, dump[roots[len(roots)-1].end:]...)
}
