// Package wda serves a simulated iPhone (a sim.Phone on the iOS platform)
// as WebDriverAgent does: its HTTP API with W3C WebDriver JSON, XCUITest
// sources, element lookup by accessibility id, predicate and class chain,
// taps, W3C actions, typing, buttons, apps, lock and alerts. Coordinates
// are points; the phone's pixels are points times its scale.
package wda

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/apexagent/apex/internal/httpguard"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/sim"
)

// Options configure a Server. The zero value logs nothing.
type Options struct {
	// Log receives request errors (nil = discard).
	Log *slog.Logger
	// OSVersion is the iOS version /status reports ("17.2" by default).
	OSVersion string
	// MJPEGPort is the port ServeMJPEG listens on, which /appium/settings
	// reports as mjpegServerPort (0: none).
	MJPEGPort int
}

// Server serves one phone. It is an http.Handler; Serve runs it on a
// listener. Methods are safe for concurrent use.
type Server struct {
	phone   *sim.Phone
	log     *slog.Logger
	os      string
	started time.Time

	mu      sync.Mutex
	session *session // the one live session, as WebDriverAgent keeps one
	nextID  int
	// appium holds the settings set with POST /appium/settings; pasteboard
	// the text of /wda/setPasteboard.
	appium     map[string]any
	pasteboard string
	http       *http.Server
	mjpeg      *http.Server // the MJPEG stream's own server (ServeMJPEG)
	mjpegPort  int
}

// NewServer returns a server for phone. opts may be nil.
func NewServer(phone *sim.Phone, opts *Options) *Server {
	s := &Server{phone: phone, os: "17.2", started: time.Now(), appium: map[string]any{}}
	if opts != nil {
		s.log = opts.Log
		if opts.OSVersion != "" {
			s.os = opts.OSVersion
		}
		s.mjpegPort = opts.MJPEGPort
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// Phone returns the phone the server serves.
func (s *Server) Phone() *sim.Phone { return s.phone }

// Serve answers HTTP on ln until Close. It returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.http == nil {
		s.http = httpguard.NewServer(s, nil)
	}
	hs := s.http
	s.mu.Unlock()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("wda: serve: %w", err)
	}
	return nil
}

// Close stops serving and drops every connection: WebDriverAgent is gone.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.http == nil {
		s.http = &http.Server{Handler: s}
	}
	if s.mjpeg == nil {
		s.mjpeg = &http.Server{}
	}
	hs, ms := s.http, s.mjpeg
	s.mu.Unlock()
	ms.Close()
	return hs.Close()
}

// maxBody bounds a request body; WebDriverAgent's requests are small.
const maxBody = 4 << 20

// request is one decoded call.
type request struct {
	r       *http.Request
	path    string            // without the /session/:id prefix
	params  map[string]string // :uuid, :name
	body    map[string]json.RawMessage
	session *session // nil for sessionless calls
}

type handler func(s *Server, q *request) (any, error)

// ServeHTTP answers one WebDriverAgent call.
//
// Like the playground it refuses a host name other than loopback's (an
// address is fine: the phone may serve other machines) and a request that
// changes state from another origin's page, so a web page cannot drive
// the phone through the user's browser.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var v any
	var sid string
	err := httpguard.CheckRequest(r, httpguard.AddressHost(r.Host), "the simulated WebDriverAgent", "use its address")
	if err != nil {
		err = &Error{Status: http.StatusForbidden, Code: "unknown error", Message: err.Error()}
	} else {
		httpguard.Admit(r)
		v, sid, err = s.dispatch(r)
	}
	resp := map[string]any{"value": v, "sessionId": nil}
	if sid != "" {
		resp["sessionId"] = sid
	}
	status := http.StatusOK
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = errUnknown("%v", err)
		}
		status = e.Status
		resp["value"] = map[string]any{"error": e.Code, "message": e.Message, "traceback": ""}
		s.log.Debug("wda: request failed", "method", r.Method, "path", r.URL.Path, "err", e.Error())
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(resp); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		fmt.Fprintf(&buf, `{"value":{"error":"unknown error","message":%q,"traceback":""},"sessionId":null}`, err.Error())
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (s *Server) dispatch(r *http.Request) (any, string, error) {
	path := strings.TrimRight(r.URL.Path, "/")
	if path == "" {
		path = "/"
	}
	q := &request{r: r, path: path}
	s.mu.Lock()
	cur := s.session
	s.mu.Unlock()
	sid := ""
	if cur != nil {
		sid = cur.id
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(segs) >= 2 && segs[0] == "session" {
		id := segs[1]
		if len(segs) == 2 {
			switch r.Method {
			case http.MethodDelete:
				v, err := s.deleteSession(id)
				return v, "", err
			case http.MethodGet:
				if cur == nil || cur.id != id {
					return nil, "", errInvalidSession(id)
				}
				return cur.caps, id, nil
			}
			return nil, sid, errUnknownCommand(r.Method, path)
		}
		if cur == nil || cur.id != id {
			return nil, "", errInvalidSession(id)
		}
		q.session = cur
		q.path = "/" + strings.Join(segs[2:], "/")
	}
	h, params := route(r.Method, q.path)
	if h == nil {
		return nil, sid, errUnknownCommand(r.Method, r.URL.Path)
	}
	q.params = params
	if r.Method == http.MethodPost {
		body, err := readBody(r)
		if err != nil {
			return nil, sid, err
		}
		q.body = body
	}
	if q.session == nil {
		q.session = cur
	}
	v, err := h(s, q)
	s.mu.Lock()
	if s.session != nil {
		sid = s.session.id
	} else {
		sid = ""
	}
	s.mu.Unlock()
	return v, sid, err
}

// readBody decodes a JSON object body; an empty body is an empty object.
func readBody(r *http.Request) (map[string]json.RawMessage, error) {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, errInvalidArgument("cannot read the request body: %v", err)
	}
	if len(data) > maxBody {
		return nil, errInvalidArgument("request body over %d bytes", maxBody)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(data, &body); err != nil || body == nil {
		return nil, errInvalidArgument("the request body must be a JSON object: %s", jsonErr(err))
	}
	return body, nil
}

func jsonErr(err error) string {
	if err == nil {
		return "got null"
	}
	return err.Error()
}

// str reads a required string argument.
func (q *request) str(name string) (string, error) {
	raw, ok := q.body[name]
	if !ok {
		return "", errInvalidArgument("'%s' is required", name)
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", errInvalidArgument("'%s' must be a string, got %s", name, short(raw))
	}
	return v, nil
}

// optStr reads an optional string argument.
func (q *request) optStr(name string) (string, error) {
	if _, ok := q.body[name]; !ok || string(q.body[name]) == "null" {
		return "", nil
	}
	return q.str(name)
}

// num reads a required number argument.
func (q *request) num(name string) (float64, error) {
	raw, ok := q.body[name]
	if !ok {
		return 0, errInvalidArgument("'%s' is required", name)
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, errInvalidArgument("'%s' must be a number, got %s", name, short(raw))
	}
	return v, nil
}

// optNum reads an optional number argument.
func (q *request) optNum(name string, def float64) (float64, error) {
	if raw, ok := q.body[name]; !ok || string(raw) == "null" {
		return def, nil
	}
	return q.num(name)
}

func short(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}
