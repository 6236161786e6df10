package adbd

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
)

// ParseAPK reads the package an APK declares: the zip's AndroidManifest.xml,
// in the compiled binary XML form real APKs carry or as plain XML text.
// It reads the manifest's package and android:versionName, the
// application's android:label (a literal string; a resource reference
// gives the package name instead) and android:debuggable, and the first
// activity with a MAIN/LAUNCHER intent filter. Code, resources and
// signatures are not read or checked.
func ParseAPK(data []byte) (Package, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return Package{}, fmt.Errorf("not an APK (zip): %w", err)
	}
	for _, f := range zr.File {
		if f.Name != "AndroidManifest.xml" {
			continue
		}
		if f.UncompressedSize64 > 8<<20 {
			return Package{}, errors.New("AndroidManifest.xml larger than 8 MiB")
		}
		rc, err := f.Open()
		if err != nil {
			return Package{}, fmt.Errorf("open AndroidManifest.xml: %w", err)
		}
		m, err := io.ReadAll(io.LimitReader(rc, 8<<20))
		rc.Close()
		if err != nil {
			return Package{}, fmt.Errorf("read AndroidManifest.xml: %w", err)
		}
		var elems []manifestElem
		if len(m) >= 2 && binary.LittleEndian.Uint16(m) == axmlFileType {
			elems, err = parseAXML(m)
		} else {
			elems, err = parseTextManifest(m)
		}
		if err != nil {
			return Package{}, fmt.Errorf("AndroidManifest.xml: %w", err)
		}
		return packageFrom(elems)
	}
	return Package{}, errors.New("no AndroidManifest.xml in the APK")
}

// manifestElem is one start tag of the manifest with its attributes by
// local name (namespace dropped).
type manifestElem struct {
	Name  string
	Depth int
	Attrs map[string]string
}

func packageFrom(elems []manifestElem) (Package, error) {
	var p Package
	inActivity := -1
	var act string
	var isMain, isLauncher bool
	for _, e := range elems {
		if inActivity >= 0 && e.Depth <= inActivity {
			if isMain && isLauncher && p.LauncherActivity == "" {
				p.LauncherActivity = act
			}
			inActivity = -1
		}
		switch e.Name {
		case "manifest":
			p.Name = e.Attrs["package"]
			p.Version = e.Attrs["versionName"]
		case "application":
			if l := e.Attrs["label"]; l != "" && !strings.HasPrefix(l, "@") {
				p.Label = l
			}
			p.Debuggable = e.Attrs["debuggable"] == "true"
		case "activity", "activity-alias":
			inActivity, act, isMain, isLauncher = e.Depth, e.Attrs["name"], false, false
		case "action":
			isMain = isMain || (inActivity >= 0 && e.Attrs["name"] == "android.intent.action.MAIN")
		case "category":
			isLauncher = isLauncher || (inActivity >= 0 && e.Attrs["name"] == "android.intent.category.LAUNCHER")
		}
	}
	if inActivity >= 0 && isMain && isLauncher && p.LauncherActivity == "" {
		p.LauncherActivity = act
	}
	if p.Name == "" {
		return Package{}, errors.New("the manifest has no package attribute")
	}
	if p.Label == "" {
		p.Label = p.Name
	}
	return p, nil
}

func parseTextManifest(m []byte) ([]manifestElem, error) {
	d := xml.NewDecoder(bytes.NewReader(m))
	var out []manifestElem
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			e := manifestElem{Name: t.Name.Local, Depth: depth, Attrs: map[string]string{}}
			for _, a := range t.Attr {
				e.Attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
			depth++
		case xml.EndElement:
			depth--
		}
	}
}

// Android binary XML chunk types.
const (
	axmlFileType     = 0x0003
	axmlStringPool   = 0x0001
	axmlStartElement = 0x0102
	axmlEndElement   = 0x0103
	axmlTypeString   = 0x03
	axmlTypeBool     = 0x12
	axmlUTF8Flag     = 1 << 8
)

// parseAXML walks the chunks of a compiled manifest, bounds-checking every
// offset.
func parseAXML(m []byte) ([]manifestElem, error) {
	le := binary.LittleEndian
	if len(m) < 8 {
		return nil, errors.New("binary XML too short")
	}
	var pool []string
	var out []manifestElem
	depth := 0
	str := func(i uint32) string {
		if int64(i) < int64(len(pool)) {
			return pool[i]
		}
		return ""
	}
	for off := int(le.Uint16(m[2:])); off+8 <= len(m); {
		typ, hsize, size := le.Uint16(m[off:]), int(le.Uint16(m[off+2:])), int(le.Uint32(m[off+4:]))
		if size < 8 || hsize > size || off+size > len(m) {
			return nil, fmt.Errorf("binary XML chunk at %d has a bad size %d", off, size)
		}
		chunk := m[off : off+size]
		switch typ {
		case axmlStringPool:
			var err error
			if pool, err = parseStringPool(chunk, hsize); err != nil {
				return nil, err
			}
		case axmlStartElement:
			if len(chunk) < 36 {
				return nil, fmt.Errorf("binary XML element at %d too short", off)
			}
			ext := chunk[16:]
			e := manifestElem{Name: str(le.Uint32(ext[4:])), Depth: depth, Attrs: map[string]string{}}
			start, asize, count := int(le.Uint16(ext[8:])), int(le.Uint16(ext[10:])), int(le.Uint16(ext[12:]))
			if asize < 20 {
				return nil, fmt.Errorf("binary XML attribute size %d too small", asize)
			}
			for i := 0; i < count; i++ {
				a := 16 + start + i*asize
				if a+20 > len(chunk) {
					return nil, fmt.Errorf("binary XML attribute %d of <%s> out of bounds", i, e.Name)
				}
				name, raw := str(le.Uint32(chunk[a+4:])), le.Uint32(chunk[a+8:])
				dtype, data := chunk[a+15], le.Uint32(chunk[a+16:])
				switch {
				case raw != 0xffffffff:
					e.Attrs[name] = str(raw)
				case dtype == axmlTypeString:
					e.Attrs[name] = str(data)
				case dtype == axmlTypeBool:
					e.Attrs[name] = fmt.Sprint(data != 0)
				default:
					e.Attrs[name] = fmt.Sprintf("@0x%08x", data)
				}
			}
			out = append(out, e)
			depth++
		case axmlEndElement:
			depth--
		}
		off += size
	}
	return out, nil
}

func parseStringPool(c []byte, hsize int) ([]string, error) {
	le := binary.LittleEndian
	if len(c) < 28 || hsize < 28 {
		return nil, errors.New("string pool header too short")
	}
	count, flags, start := int(le.Uint32(c[8:])), le.Uint32(c[16:]), int(le.Uint32(c[20:]))
	if count > (len(c)-hsize)/4 || start > len(c) {
		return nil, errors.New("string pool counts out of bounds")
	}
	pool := make([]string, count)
	for i := range pool {
		o := start + int(le.Uint32(c[hsize+4*i:]))
		if o < 0 || o >= len(c) {
			return nil, fmt.Errorf("string %d out of bounds", i)
		}
		s, err := poolString(c[o:], flags&axmlUTF8Flag != 0)
		if err != nil {
			return nil, fmt.Errorf("string %d: %w", i, err)
		}
		pool[i] = s
	}
	return pool, nil
}

func poolString(b []byte, utf8 bool) (string, error) {
	le := binary.LittleEndian
	short := errors.New("truncated")
	if utf8 {
		// utf-16 length (skipped), then utf-8 byte length, 1 or 2 bytes each.
		n, k := 0, 0
		for j := 0; j < 2; j++ {
			if k >= len(b) {
				return "", short
			}
			n = int(b[k])
			k++
			if n&0x80 != 0 {
				if k >= len(b) {
					return "", short
				}
				n = (n&0x7f)<<8 | int(b[k])
				k++
			}
		}
		if k+n > len(b) {
			return "", short
		}
		return string(b[k : k+n]), nil
	}
	if len(b) < 2 {
		return "", short
	}
	n, k := int(le.Uint16(b)), 2
	if n&0x8000 != 0 {
		if len(b) < 4 {
			return "", short
		}
		n = (n&0x7fff)<<16 | int(le.Uint16(b[2:]))
		k = 4
	}
	if k+2*n > len(b) {
		return "", short
	}
	u := make([]uint16, n)
	for i := range u {
		u[i] = le.Uint16(b[k+2*i:])
	}
	return string(utf16.Decode(u)), nil
}
