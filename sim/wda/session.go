package wda

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apexagent/apex/sim"
)

// session is WebDriverAgent's session: an id, its capabilities and the
// cache of elements found in it.
type session struct {
	id    string
	caps  map[string]any
	elems *elementCache
}

// newSession answers POST /session. Like WebDriverAgent it keeps a single
// session: a new one replaces the old. A bundleId capability launches
// that app.
func (s *Server) newSession(q *request) (any, error) {
	var caps struct {
		Capabilities *struct {
			AlwaysMatch map[string]any   `json:"alwaysMatch"`
			FirstMatch  []map[string]any `json:"firstMatch"`
		} `json:"capabilities"`
		Desired map[string]any `json:"desiredCapabilities"`
	}
	for _, k := range []string{"capabilities", "desiredCapabilities"} {
		if raw, ok := q.body[k]; ok {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, errInvalidArgument("'%s' must be an object", k)
			}
			if _, ok := v.(map[string]any); !ok && v != nil {
				return nil, errInvalidArgument("'%s' must be an object, got %s", k, short(raw))
			}
		}
	}
	raw, _ := json.Marshal(q.body)
	if err := json.Unmarshal(raw, &caps); err != nil {
		return nil, errInvalidArgument("capabilities: %v", err)
	}
	want := map[string]any{}
	for k, v := range caps.Desired {
		want[k] = v
	}
	if caps.Capabilities != nil {
		for k, v := range caps.Capabilities.AlwaysMatch {
			want[k] = v
		}
		if len(caps.Capabilities.FirstMatch) > 0 {
			for k, v := range caps.Capabilities.FirstMatch[0] {
				want[k] = v
			}
		}
	}
	bundle := ""
	for _, k := range []string{"bundleId", "appium:bundleId"} {
		if v, ok := want[k]; ok {
			b, ok := v.(string)
			if !ok {
				return nil, errInvalidArgument("capability '%s' must be a string", k)
			}
			bundle = b
		}
	}
	if bundle != "" {
		if err := s.coldLaunch(bundle); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	s.nextID++
	id := fmt.Sprintf("%08X-5EED-4A0E-9A11-%012X", s.nextID, s.started.UnixNano()&0xFFFFFFFFFFFF)
	cur := s.bundleOnScreen()
	caps2 := map[string]any{"device": "iphone", "browserName": s.labelOf(cur), "sdkVersion": s.os, "CFBundleIdentifier": cur}
	s.session = &session{id: id, caps: caps2, elems: newElementCache()}
	s.mu.Unlock()
	return map[string]any{"sessionId": id, "capabilities": caps2}, nil
}

func (s *Server) deleteSession(id string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == nil || s.session.id != id {
		return nil, errInvalidSession(id)
	}
	s.session = nil
	return nil, nil
}

func (s *Server) status(q *request) (any, error) {
	v := map[string]any{
		"message": "WebDriverAgent is ready to accept commands",
		"state":   "success",
		"ready":   true,
		"os":      map[string]any{"name": "iOS", "version": s.os, "sdkVersion": s.os, "testmanagerdVersion": 28},
		"ios":     map[string]any{"ip": "127.0.0.1"},
		"device":  "iphone",
		"build": map[string]any{"productBundleIdentifier": "com.facebook.WebDriverAgentRunner",
			"time": s.started.UTC().Format("Jan 2 2006 15:04:05"), "upgradedAt": "", "version": "9.5.0"},
	}
	if q.session != nil {
		v["sessionId"] = q.session.id
	}
	return v, nil
}

// source answers GET /source: XML by default, ?format=json for
// WebDriverAgent's JSON tree, ?format=description for its text dump.
func (s *Server) source(q *request) (any, error) {
	switch f := q.r.URL.Query().Get("format"); f {
	case "", "xml":
		return string(s.phone.SourceXCUI()), nil
	case "json":
		return jsonTree(s.phone.XCUITree()), nil
	case "description":
		var b bytes.Buffer
		describe(&b, s.phone.XCUITree(), 0)
		return b.String(), nil
	default:
		return nil, errInvalidArgument("unknown source format %q: use xml, json or description", f)
	}
}

// jsonTree is WebDriverAgent's JSON source of e.
func jsonTree(e *sim.XCUIElement) map[string]any {
	r := e.Rect
	m := map[string]any{
		"type":          strings.TrimPrefix(e.Type, "XCUIElementType"),
		"rawIdentifier": orNull(e.Identifier),
		"name":          orNull(e.Name()),
		"label":         orNull(e.Label),
		"value":         nil,
		"rect":          rectJSON(e),
		"frame":         fmt.Sprintf("{{%d, %d}, {%d, %d}}", r.Min.X, r.Min.Y, r.Dx(), r.Dy()),
		"isEnabled":     bit(e.Enabled),
		"isVisible":     bit(e.Visible),
		"isAccessible":  bit(e.Accessible),
		"isFocused":     bit(e.Focused),
	}
	if e.HasValue {
		m["value"] = e.Value
	}
	if len(e.Children) > 0 {
		kids := make([]any, 0, len(e.Children))
		for _, c := range e.Children {
			kids = append(kids, jsonTree(c))
		}
		m["children"] = kids
	}
	return m
}

func describe(b *bytes.Buffer, e *sim.XCUIElement, depth int) {
	b.WriteString(strings.Repeat("  ", depth))
	r := e.Rect
	fmt.Fprintf(b, "%s, {{%d.0, %d.0}, {%d.0, %d.0}}", strings.TrimPrefix(e.Type, "XCUIElementType"), r.Min.X, r.Min.Y, r.Dx(), r.Dy())
	if e.Identifier != "" {
		fmt.Fprintf(b, ", identifier: '%s'", e.Identifier)
	}
	if e.Label != "" {
		fmt.Fprintf(b, ", label: '%s'", e.Label)
	}
	if e.HasValue {
		fmt.Fprintf(b, ", value: %s", e.Value)
	}
	b.WriteByte('\n')
	for _, c := range e.Children {
		describe(b, c, depth+1)
	}
}

func rectJSON(e *sim.XCUIElement) map[string]int {
	r := e.Rect
	return map[string]int{"x": r.Min.X, "y": r.Min.Y, "width": r.Dx(), "height": r.Dy()}
}

func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func bit(on bool) string {
	if on {
		return "1"
	}
	return "0"
}

func (s *Server) screenshot(*request) (any, error) {
	png, err := s.phone.Screenshot()
	if err != nil {
		return nil, errUnknown("screenshot: %v", err)
	}
	return base64.StdEncoding.EncodeToString(png), nil
}

// scale is the phone's pixels per point.
func (s *Server) scale() int {
	_, _, dpi := s.phone.Display()
	return max(1, dpi/160)
}

// sizePoints is the screen in points as laid out now (landscape swaps).
func (s *Server) sizePoints() (w, h int) {
	pw, ph, _ := s.phone.Display()
	if s.phone.Rotation()%2 == 1 {
		pw, ph = ph, pw
	}
	sc := s.scale()
	return pw / sc, ph / sc
}

func (s *Server) windowSize(*request) (any, error) {
	w, h := s.sizePoints()
	return map[string]int{"width": w, "height": h}, nil
}

func (s *Server) windowRect(*request) (any, error) {
	w, h := s.sizePoints()
	return map[string]int{"x": 0, "y": 0, "width": w, "height": h}, nil
}

// statusBarPoints is the iPhone's status bar height.
const statusBarPoints = 47

func (s *Server) screen(*request) (any, error) {
	w, h := s.sizePoints()
	return map[string]any{
		"statusBarSize": map[string]int{"width": w, "height": statusBarPoints},
		"scale":         s.scale(),
		"screenSize":    map[string]int{"width": w, "height": h},
	}, nil
}
