// Package wdatest is a small in-process WebDriverAgent for tests of WDA
// clients: sessions that vanish on Restart, a fixed screen of a few
// elements, recorded input, and error answers in either the W3C or the
// older JSON Wire shape. The full simulated iPhone is sim/wda; this fake
// exists to stage what that one does not: restarts, legacy builds, kills.
package wdatest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Options shape the fake; the zero value is a current W3C build on a
// 390x844-point screen at scale 3.
type Options struct {
	Width, Height float64 // points (default 390x844)
	Scale         float64 // default 3
	// Legacy answers in the JSON Wire shape (numeric status) of builds
	// before WebDriverAgent's W3C switch, and lacks /wda/tap (only
	// /wda/tap/0).
	Legacy bool
	// Apps are the installed bundle ids besides the home screen.
	Apps []string
	// NoNavigationBar leaves the navigation bar (and its Back button) out
	// of the screen.
	NoNavigationBar bool
}

// Server is a fake WebDriverAgent.
type Server struct {
	*httptest.Server
	opts Options
	shot string // base64 PNG

	mu       sync.Mutex
	sessions map[string]bool
	next     int
	fg       string
	running  map[string]bool
	locked   bool
	typed    string
	alert    string
	calls    []string
	bodies   []string
}

// New starts a fake on a loopback port; it stops with t's cleanup via Close.
func New(opts Options) *Server {
	if opts.Width == 0 {
		opts.Width, opts.Height = 390, 844
	}
	if opts.Scale == 0 {
		opts.Scale = 3
	}
	s := &Server{opts: opts, sessions: map[string]bool{}, fg: "com.apple.springboard", running: map[string]bool{}}
	s.shot = blankPNG(int(opts.Width*opts.Scale), int(opts.Height*opts.Scale))
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Restart forgets every session, as a restarted WebDriverAgent does.
func (s *Server) Restart() {
	s.mu.Lock()
	s.sessions = map[string]bool{}
	s.mu.Unlock()
}

// Kill drops every connection and stops listening: WebDriverAgent died.
func (s *Server) Kill() {
	s.Listener.Close()
	s.CloseClientConnections()
}

// ShowAlert puts an alert with text on screen.
func (s *Server) ShowAlert(text string) {
	s.mu.Lock()
	s.alert = text
	s.mu.Unlock()
}

// Calls returns "METHOD /path" of every request so far, session ids
// replaced by "{sid}".
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string{}, s.calls...)
}

// LastBody returns the JSON body of the last request whose call matches.
func (s *Server) LastBody(call string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.calls) - 1; i >= 0; i-- {
		if s.calls[i] == call {
			return s.bodies[i]
		}
	}
	return ""
}

// Typed is everything typed through /wda/keys.
func (s *Server) Typed() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.typed
}

// Sessions counts the sessions created since the start.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

func (s *Server) reply(w http.ResponseWriter, sid string, value any) {
	env := map[string]any{"value": value, "sessionId": nil}
	if sid != "" {
		env["sessionId"] = sid
	}
	if s.opts.Legacy {
		env["status"] = 0
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	json.NewEncoder(w).Encode(env)
}

// fail answers an error: W3C code and HTTP status, or the JSON Wire
// status number of legacy builds (always HTTP 200 there).
func (s *Server) fail(w http.ResponseWriter, sid string, httpStatus int, code string, legacy int, msg string) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	if s.opts.Legacy {
		json.NewEncoder(w).Encode(map[string]any{"value": msg, "sessionId": sid, "status": legacy})
		return
	}
	w.WriteHeader(httpStatus)
	json.NewEncoder(w).Encode(map[string]any{"value": map[string]any{"error": code, "message": msg, "traceback": ""}, "sessionId": sid})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	raw := new(bytes.Buffer)
	raw.ReadFrom(r.Body)
	if raw.Len() > 0 {
		if err := json.Unmarshal(raw.Bytes(), &body); err != nil {
			s.fail(w, "", 400, "invalid argument", 61, "Cannot parse the request body: "+err.Error())
			return
		}
	}
	path := r.URL.Path
	sid := ""
	if rest, ok := strings.CutPrefix(path, "/session/"); ok {
		sid, path, _ = strings.Cut(rest, "/")
		path = "/" + path
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	logged := r.Method + " " + path
	if sid != "" {
		logged = r.Method + " /session/{sid}" + strings.TrimSuffix(path, "/")
	}
	s.calls = append(s.calls, logged)
	s.bodies = append(s.bodies, raw.String())
	if sid != "" && !s.sessions[sid] {
		s.fail(w, sid, 404, "invalid session id", 6, "Session does not exist")
		return
	}
	s.route(w, r, sid, path, body)
}

func str(body map[string]any, k string) string {
	v, _ := body[k].(string)
	return v
}

func (s *Server) installed(app string) bool {
	if app == "com.apple.springboard" {
		return true
	}
	for _, a := range s.opts.Apps {
		if a == app {
			return true
		}
	}
	return false
}

// route serves one request with s.mu held.
func (s *Server) route(w http.ResponseWriter, r *http.Request, sid, path string, body map[string]any) {
	key := r.Method + " " + path
	switch {
	case key == "GET /status":
		s.reply(w, "", map[string]any{"ready": true, "message": "WebDriverAgent is ready to accept commands", "state": "success",
			"os": map[string]any{"name": "iOS", "version": "17.2", "sdkVersion": "17.2"}, "device": "iphone",
			"ios": map[string]any{"ip": "127.0.0.1"}, "build": map[string]any{"productBundleIdentifier": "com.facebook.WebDriverAgentRunner"}})
	case key == "POST /session" && sid == "":
		s.next++
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", s.next)
		s.sessions[id] = true
		s.reply(w, id, map[string]any{"sessionId": id, "capabilities": map[string]any{"device": "iphone", "sdkVersion": "17.2"}})
	case r.Method == "DELETE" && path == "/":
		delete(s.sessions, sid)
		s.reply(w, "", nil)
	case key == "GET /screenshot":
		s.reply(w, sid, s.shot)
	case key == "GET /source":
		if r.URL.Query().Get("format") == "json" {
			s.reply(w, sid, map[string]any{"type": "Application", "label": "Fake", "rect": map[string]float64{"x": 0, "y": 0, "width": s.opts.Width, "height": s.opts.Height}})
			return
		}
		s.reply(w, sid, s.source())
	case key == "GET /window/size":
		s.reply(w, sid, map[string]float64{"width": s.opts.Width, "height": s.opts.Height})
	case key == "GET /wda/screen":
		s.reply(w, sid, map[string]any{"scale": s.opts.Scale, "statusBarSize": map[string]float64{"width": s.opts.Width, "height": 47}})
	case key == "POST /wda/tap" && s.opts.Legacy:
		s.fail(w, sid, 404, "unknown command", 9, "Unhandled endpoint: /session/"+sid+"/wda/tap")
	case key == "POST /wda/tap", key == "POST /wda/tap/0", key == "POST /actions":
		if s.locked {
			s.reply(w, sid, nil) // a locked screen swallows touches
			return
		}
		s.reply(w, sid, nil)
	case key == "POST /wda/keys":
		vals, _ := body["value"].([]any)
		for _, v := range vals {
			t, _ := v.(string)
			s.typed += t
		}
		s.reply(w, sid, nil)
	case key == "POST /wda/pressButton":
		switch str(body, "name") {
		case "home":
			s.fg = "com.apple.springboard"
		case "volumeUp", "volumeDown":
		default:
			s.fail(w, sid, 400, "invalid argument", 61, fmt.Sprintf("The value of 'name' must be one of [home, volumeUp, volumeDown]. '%s' is given instead", str(body, "name")))
			return
		}
		s.reply(w, sid, nil)
	case key == "POST /wda/homescreen":
		s.fg = "com.apple.springboard"
		s.reply(w, sid, nil)
	case key == "POST /wda/apps/launch", key == "POST /wda/apps/activate":
		app := str(body, "bundleId")
		if !s.installed(app) {
			s.fail(w, sid, 500, "unknown error", 13, "Failed to launch "+app+" application")
			return
		}
		s.fg, s.running[app] = app, true
		s.reply(w, sid, nil)
	case key == "POST /wda/apps/terminate":
		app := str(body, "bundleId")
		was := s.running[app]
		delete(s.running, app)
		if s.fg == app {
			s.fg = "com.apple.springboard"
		}
		s.reply(w, sid, was)
	case key == "POST /wda/apps/state":
		app := str(body, "bundleId")
		st := 0
		switch {
		case s.fg == app:
			st = 4
		case s.running[app]:
			st = 3
		case s.installed(app):
			st = 1
		}
		s.reply(w, sid, st)
	case key == "GET /wda/activeAppInfo":
		s.reply(w, sid, map[string]any{"bundleId": s.fg, "name": "", "pid": 42, "processArguments": map[string]any{"env": map[string]any{}, "args": []any{}}})
	case key == "POST /wda/lock":
		s.locked = true
		s.reply(w, sid, nil)
	case key == "POST /wda/unlock":
		s.locked = false
		s.reply(w, sid, nil)
	case key == "GET /wda/locked":
		s.reply(w, sid, s.locked)
	case key == "GET /alert/text":
		if s.alert == "" {
			s.fail(w, sid, 404, "no such alert", 27, "An attempt was made to operate on a modal dialog when one was not open")
			return
		}
		s.reply(w, sid, s.alert)
	case key == "POST /alert/accept", key == "POST /alert/dismiss":
		if s.alert == "" {
			s.fail(w, sid, 404, "no such alert", 27, "An attempt was made to operate on a modal dialog when one was not open")
			return
		}
		s.alert = ""
		s.reply(w, sid, nil)
	case key == "POST /elements", key == "POST /element":
		using, value := str(body, "using"), str(body, "value")
		var found []any
		if using == "accessibility id" && value == "counter" || using == "class chain" && strings.Contains(value, "NavigationBar") && !s.opts.NoNavigationBar {
			id := "2F000000-0000-0000-5B07-000000000000"
			found = append(found, map[string]string{"ELEMENT": id, "element-6066-11e4-a52e-4f735466cecf": id})
		}
		if path == "/elements" {
			s.reply(w, sid, found)
			return
		}
		if len(found) == 0 {
			s.fail(w, sid, 404, "no such element", 7, fmt.Sprintf("unable to find an element using '%s', value '%s'", using, value))
			return
		}
		s.reply(w, sid, found[0])
	case strings.HasPrefix(path, "/element/") && strings.HasSuffix(path, "/rect"):
		s.reply(w, sid, map[string]float64{"x": 8, "y": 47, "width": 60, "height": 44})
	case strings.HasPrefix(path, "/element/") && strings.HasSuffix(path, "/click"):
		s.reply(w, sid, nil)
	default:
		s.fail(w, sid, 404, "unknown command", 9, "Unhandled endpoint: "+r.URL.Path)
	}
}

var (
	shotMu sync.Mutex
	shots  = map[image.Point]string{}
)

// blankPNG is a white w×h PNG in base64, encoded once per size since
// encoding a phone-sized image is slow under the race detector.
func blankPNG(w, h int) string {
	shotMu.Lock()
	defer shotMu.Unlock()
	if s, ok := shots[image.Pt(w, h)]; ok {
		return s
	}
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.White, color.RGBA{0, 122, 255, 255}})
	img.SetColorIndex(0, 0, 1)
	var b bytes.Buffer
	png.Encode(&b, img)
	s := base64.StdEncoding.EncodeToString(b.Bytes())
	shots[image.Pt(w, h)] = s
	return s
}

// source is a small XCUITest page in points.
func (s *Server) source() string {
	nav := navigationBar
	if s.opts.NoNavigationBar {
		nav = ""
	}
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<XCUIElementTypeApplication type="XCUIElementTypeApplication" name="Fake" label="Fake" enabled="true" visible="true" accessible="false" x="0" y="0" width="%g" height="%g" index="0">
  <XCUIElementTypeWindow type="XCUIElementTypeWindow" enabled="true" visible="true" accessible="false" x="0" y="0" width="%g" height="%g" index="0">
%s    <XCUIElementTypeButton type="XCUIElementTypeButton" name="counter" label="Count: 0" enabled="true" visible="true" accessible="true" x="16.5" y="120" width="120" height="44" index="1"/>
    <XCUIElementTypeTextField type="XCUIElementTypeTextField" name="note" value="%s" label="" enabled="true" visible="true" accessible="true" x="16" y="180" width="358" height="36" index="2"/>
  </XCUIElementTypeWindow>
</XCUIElementTypeApplication>`, s.opts.Width, s.opts.Height, s.opts.Width, s.opts.Height, nav, xmlEscape(s.typed))
}

const navigationBar = `    <XCUIElementTypeNavigationBar type="XCUIElementTypeNavigationBar" name="Detail" enabled="true" visible="true" accessible="false" x="0" y="47" width="390" height="44" index="0">
      <XCUIElementTypeButton type="XCUIElementTypeButton" name="Back" label="Back" enabled="true" visible="true" accessible="true" x="8" y="47" width="60" height="44" index="0"/>
    </XCUIElementTypeNavigationBar>
`

func xmlEscape(v string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(v)
}
