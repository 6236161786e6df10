package scene

import (
	"encoding/xml"
	"strconv"
	"strings"
	"unicode/utf8"
)

// parseFast reads the XML subset UI dumpers write — an optional
// <?xml version="1.0" encoding="UTF-8"?> prolog, elements with ASCII names
// and no prefixes, quoted attributes, the five named entities and numeric
// character references — about ten times faster than encoding/xml, which
// reads byte by byte through an interface.
//
// It gives up (ok=false) on anything else: comments, CDATA, DOCTYPE,
// processing instructions after the start, prefixed or non-ASCII names,
// unknown entities, carriage returns inside attribute values (XML rewrites
// them), characters XML forbids, and every error, including the
// parser's own (not a UI source, bad bounds). Parse then starts over
// with encoding/xml, which accepts or words the error exactly as it would
// have anyway.
func parseFast(data []byte) (*parser, bool) {
	f := fastScanner{src: string(data)}
	f.p = &parser{data: data}
	if !f.run() {
		return nil, false
	}
	return f.p, true
}

type fastScanner struct {
	src   string
	i     int
	p     *parser
	attrs []xml.Attr
	buf   []byte
}

func (f *fastScanner) run() bool {
	if strings.HasPrefix(f.src, "<?") && !f.prolog() {
		return false
	}
	for f.i < len(f.src) {
		lt := strings.IndexByte(f.src[f.i:], '<')
		if lt < 0 {
			return f.charData(f.src[f.i:]) && f.finish()
		}
		if !f.charData(f.src[f.i : f.i+lt]) {
			return false
		}
		f.i += lt
		off := f.i
		if f.i+1 >= len(f.src) {
			return false
		}
		switch c := f.src[f.i+1]; {
		case c == '/':
			f.i += 2
			name, ok := f.name()
			if !ok {
				return false
			}
			f.space()
			if f.i >= len(f.src) || f.src[f.i] != '>' {
				return false
			}
			f.i++
			if f.p.end(name, off) != nil {
				return false
			}
		case isNameStart(c):
			f.i++
			if !f.element(off) {
				return false
			}
		default: // comments, CDATA, DOCTYPE, PIs, stray '<'
			return false
		}
	}
	return f.finish()
}

func (f *fastScanner) finish() bool {
	return f.p.finish() == nil
}

// element reads a start tag after its '<'.
func (f *fastScanner) element(off int) bool {
	name, ok := f.name()
	if !ok {
		return false
	}
	f.attrs = f.attrs[:0]
	for {
		f.space()
		if f.i >= len(f.src) {
			return false
		}
		switch f.src[f.i] {
		case '>':
			f.i++
			return f.p.start(name, f.attrs, off) == nil
		case '/':
			if f.i+1 >= len(f.src) || f.src[f.i+1] != '>' {
				return false
			}
			f.i += 2
			return f.p.start(name, f.attrs, off) == nil && f.p.end(name, off) == nil
		}
		attr, ok := f.name()
		if !ok {
			return false
		}
		f.space()
		if f.i >= len(f.src) || f.src[f.i] != '=' {
			return false
		}
		f.i++
		f.space()
		val, ok := f.value()
		if !ok {
			return false
		}
		f.attrs = append(f.attrs, xml.Attr{Name: xml.Name{Local: attr}, Value: val})
	}
}

// name reads [A-Za-z_][A-Za-z0-9_.-]*; a prefix or non-ASCII gives up.
func (f *fastScanner) name() (string, bool) {
	start := f.i
	if f.i >= len(f.src) || !isNameStart(f.src[f.i]) {
		return "", false
	}
	f.i++
	for f.i < len(f.src) {
		c := f.src[f.i]
		if isNameStart(c) || c >= '0' && c <= '9' || c == '.' || c == '-' {
			f.i++
			continue
		}
		if c == ':' || c >= utf8.RuneSelf {
			return "", false
		}
		break
	}
	return f.src[start:f.i], true
}

func isNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func (f *fastScanner) space() {
	for f.i < len(f.src) {
		switch f.src[f.i] {
		case ' ', '\t', '\n', '\r':
			f.i++
		default:
			return
		}
	}
}

// value reads a quoted attribute value, decoding entities.
func (f *fastScanner) value() (string, bool) {
	if f.i >= len(f.src) || f.src[f.i] != '"' && f.src[f.i] != '\'' {
		return "", false
	}
	q := f.src[f.i]
	end := strings.IndexByte(f.src[f.i+1:], q)
	if end < 0 {
		return "", false
	}
	raw := f.src[f.i+1 : f.i+1+end]
	f.i += end + 2
	if strings.IndexByte(raw, '<') >= 0 || strings.IndexByte(raw, '\r') >= 0 {
		return "", false
	}
	return f.decode(raw)
}

// charData checks text between tags, which UI dumps only use for
// indentation.
func (f *fastScanner) charData(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			// Text content is legal XML but no dumper writes it: let
			// encoding/xml judge it.
			return false
		}
	}
	return true
}

// decode resolves entities and checks characters; ok=false means
// encoding/xml must judge the text.
func (f *fastScanner) decode(s string) (string, bool) {
	plain := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '&' || c >= utf8.RuneSelf || c < ' ' && c != '\t' && c != '\n' {
			plain = false
			break
		}
	}
	if plain {
		return s, true
	}
	f.buf = f.buf[:0]
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '&':
			semi := strings.IndexByte(s[i:], ';')
			if semi < 0 {
				return "", false
			}
			r, ok := entity(s[i+1 : i+semi])
			if !ok {
				return "", false
			}
			f.buf = utf8.AppendRune(f.buf, r)
			i += semi + 1
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || !inCharRange(r) {
				return "", false
			}
			f.buf = append(f.buf, s[i:i+size]...)
			i += size
		case c < ' ' && c != '\t' && c != '\n':
			return "", false
		default:
			f.buf = append(f.buf, c)
			i++
		}
	}
	return string(f.buf), true
}

// entity resolves the body of &…; as encoding/xml does, or reports false.
func entity(name string) (rune, bool) {
	switch name {
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "amp":
		return '&', true
	case "apos":
		return '\'', true
	case "quot":
		return '"', true
	}
	if len(name) < 2 || name[0] != '#' {
		return 0, false
	}
	digits, base := name[1:], 10
	if digits[0] == 'x' {
		digits, base = digits[1:], 16
	}
	if digits == "" || digits[0] == '+' || digits[0] == '-' {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, base, 32)
	if err != nil || n > utf8.MaxRune || !inCharRange(rune(n)) {
		return 0, false
	}
	return rune(n), true
}

// inCharRange is XML's Char production, as encoding/xml checks it.
func inCharRange(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// prolog accepts <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
// in its usual spellings.
func (f *fastScanner) prolog() bool {
	if !strings.HasPrefix(f.src, "<?xml") {
		return false
	}
	end := strings.Index(f.src, "?>")
	if end < 0 {
		return false
	}
	body := f.src[len("<?xml"):end]
	for body != "" {
		trimmed := strings.TrimLeft(body, " \t\r\n")
		if trimmed == "" {
			break
		}
		if len(trimmed) == len(body) {
			return false // pseudo-attributes need space before them
		}
		eq := strings.IndexByte(trimmed, '=')
		if eq < 0 || eq+1 >= len(trimmed) {
			return false
		}
		key := trimmed[:eq]
		q := trimmed[eq+1]
		if q != '"' && q != '\'' {
			return false
		}
		close := strings.IndexByte(trimmed[eq+2:], q)
		if close < 0 {
			return false
		}
		val := trimmed[eq+2 : eq+2+close]
		switch {
		case key == "version" && val == "1.0":
		case key == "encoding" && strings.EqualFold(val, "utf-8"):
		case key == "standalone" && (val == "yes" || val == "no"):
		default:
			return false
		}
		body = trimmed[eq+3+close:]
	}
	f.i = end + 2
	return true
}
