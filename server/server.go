// Package server is the playground's HTTP API: one device session at a
// time, manual actions from the action space (recorded into scripts on
// request), goals run by the AI runtime in the background with streamed
// progress and a report, and a live preview of the screen. It binds
// nothing itself; the caller serves Handler on 127.0.0.1.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/store"
)

// MaxBody bounds every JSON request body.
const MaxBody = 50 << 20

// Options configure a Server. Open and NewAgent are required.
type Options struct {
	// Open opens the device id names ("" picks the only one) and returns
	// a func releasing everything it started. On error it has released
	// everything already.
	Open func(ctx context.Context, id string) (device.Driver, device.Target, func(), error)
	// Targets lists the devices a session can open; nil lists none.
	Targets func(ctx context.Context) ([]device.Target, error)
	// NoTargets is what the setup tells when Targets lists no device: where
	// devices come from and what to do (default: connect a phone to adb,
	// or start or boot a simulated one).
	NoTargets string
	// Blocked, when set, says why no session can be set up on this machine
	// (the platform's tooling is missing, say) and what to do: the session
	// is blocked until it returns nil.
	Blocked func(ctx context.Context) error
	// NewAgent builds the runtime that runs goals and ai* steps, with m on
	// top of the model settings of apex.yaml and the environment (m is
	// empty at start). It must pass onEvent as agent.Config.OnEvent, so
	// progress reaches the server, and fail on settings it cannot use.
	NewAgent func(m ModelSettings, onEvent func(event.Event)) (agent.AI, error)
	// TestModel asks each model endpoint m configures (on top of the
	// environment's) for a short answer (POST /config/test); nil: not
	// offered.
	TestModel func(ctx context.Context, m ModelSettings) ([]ModelCheck, error)
	// Store records each task as a run with its events, for reports (nil:
	// in memory only, and no /report).
	Store *store.Store
	Log   *slog.Logger
	// FrameInterval is how often the preview polls the screen of a
	// device that does not push its frames, while the screen changes
	// (default 33ms; it polls less often, down to once a second, while
	// the screen stays still). Resend is the silence after which the last
	// frame is sent again (default 1s), since browsers draw a frame of
	// multipart/x-mixed-replace only when the next one starts.
	FrameInterval, Resend time.Duration
	// Token, when set, is required of every request (see guard.go); the
	// playground must have one to answer on a non-loopback address.
	Token string
	// Perception is how manual actions and script steps observe the
	// screen: when OCR reads pixels (perceive.Auto: when the tree cannot
	// be trusted) and the OCR engine (an *ocr.Lazy shares one Tesseract;
	// nil starts one per session on first need). Goals use their
	// runtime's (NewAgent).
	Perception perceive.Options
	// AllowShell lets POST /execute run script steps that run commands on
	// the device (runAdbShell, runWdaRequest); off by default.
	AllowShell bool
	// AllowModelURL lets clients set a model base URL that is neither
	// https nor on loopback (POST /config); off by default.
	AllowModelURL bool
	// Limits bound what clients can make the server keep or run.
	Limits Limits
	// PreviewTransport "webrtc" (TransportWebRTC) locks the live preview
	// to WebRTC: /preview/h264 answers 409 naming it (webrtc.go).
	PreviewTransport string
	// Booter, when set, boots simulated phones on demand (POST
	// /devices/boot); Targets should list them.
	Booter Booter
}

// Server is the playground API. Its methods are safe for concurrent use.
type Server struct {
	opts   Options
	id     string
	log    *slog.Logger
	models models
	mux    *http.ServeMux

	sess session
	// input serialises the device's input: manual actions one at a time,
	// and a task starts only after the manual action in flight.
	input   sync.Mutex
	tasks   taskTable
	events  broker
	preview previewHub
	h264    h264Hub
	viewers viewers
	rec     recorder
	scratch scratch
	booted  booted
}

// New builds a Server; it opens no device until POST /session.
func New(opts Options) (*Server, error) {
	if opts.Open == nil || opts.NewAgent == nil {
		return nil, errors.New("server: Options.Open and Options.NewAgent are required")
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.FrameInterval <= 0 {
		opts.FrameInterval = 33 * time.Millisecond
	}
	if opts.Resend <= 0 {
		opts.Resend = time.Second
	}
	opts.Limits = opts.Limits.withDefaults()
	s := &Server{opts: opts, id: newID(), log: opts.Log}
	s.rec.limits, s.rec.log = opts.Limits, opts.Log
	s.sess.init()
	s.events.replay = opts.Limits.EventReplay
	s.events.init()
	rt, err := opts.NewAgent(ModelSettings{}, s.onEvent)
	if err != nil {
		return nil, fmt.Errorf("server: the AI runtime: %w", err)
	}
	s.models.rt = rt
	s.routes()
	return s, nil
}

// ID identifies this server process (GET /status).
func (s *Server) ID() string { return s.id }

// Handler serves the API behind the guard (guard.go).
func (s *Server) Handler() http.Handler { return s.guarded(s.mux) }

// Close cancels a running task, waits for it and ends the session.
func (s *Server) Close() error {
	s.destroy()
	s.rec.close()
	s.events.close()
	s.closeScratch()
	return nil
}

// route is one endpoint of the API.
type route struct {
	pattern string
	h       http.HandlerFunc
}

func (s *Server) api() []route {
	rs := []route{
		{"GET /status", s.status},
		{"GET /runtime-info", s.runtimeInfo},
		{"GET /interface-info", s.interfaceInfo},
		{"GET /session/setup", s.setup},
		{"GET /session/targets", s.targets},
		{"POST /session", s.createSession},
		{"DELETE /session", s.deleteSession},
		{"GET /action-space", s.actionSpace},
		{"POST /interact", s.interact},
		{"POST /execute", s.execute},
		{"GET /tasks", s.listTasks},
		{"GET /task-progress/{id}", s.taskProgress},
		{"POST /cancel/{id}", s.cancel},
		{"GET /events", s.stream},
		{"GET /screenshot", s.screenshot},
		{"POST /screenshot", s.screenshot}, // capture: a fresh screenshot, as GET
		{"GET /mjpeg", s.mjpeg},
		{"GET /preview/h264", s.h264Preview},
		{"POST /preview/webrtc", s.webrtcPreview},
		{"POST /recorder/start", s.recorderStart},
		{"POST /recorder/stop", s.recorderStop},
		{"GET /recorder/events", s.recorderEvents},
		{"GET /recorder/screenshot/{seq}/{which}", s.recorderScreenshot},
		{"GET /recorder/export", s.recorderExport},
		{"GET /report/{run}", s.runReport},
		{"GET /runs", s.runs},
		{"GET /runs/{run}/{file...}", s.runFile},
	}
	rs = append(rs, s.configAPI()...)
	rs = append(rs, s.contextAPI()...)
	rs = append(rs, s.authAPI()...)
	rs = append(rs, s.midsceneAPI()...)
	rs = append(rs, s.readAPI()...)
	rs = append(rs, s.bootAPI()...)
	return rs
}

func (s *Server) routes() {
	m := http.NewServeMux()
	var list []string
	for _, r := range s.api() {
		m.HandleFunc(r.pattern, r.h)
		list = append(list, r.pattern)
	}
	s.serveUI(m, list) // the web page at /; GET /api lists the endpoints
	s.mux = m
}

// interfaceInfo describes what the session drives, for a client's title
// and help: the kind of device, a line about it, and what it can do.
func (s *Server) interfaceInfo(w http.ResponseWriter, r *http.Request) {
	ss := &s.sess
	ss.mu.Lock()
	state, target, space := ss.state, ss.target, ss.space
	ss.mu.Unlock()
	out := map[string]any{"type": "none", "description": "no device session: POST /session to open one", "state": state, "actions": []string{}}
	if space != nil {
		out["type"] = string(target.Platform)
		out["description"] = describeTarget(target)
		out["device"] = target
		out["actions"] = space.Names()
		out["actionTypes"] = space.Names() // Midscene's name for them
		if dev, err := s.sess.open(false); err == nil {
			if size := screenSize(r.Context(), dev); size != nil {
				out["size"] = size
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// describeTarget is one line about a device: "Android · Pixel 7 (emulator-5554)".
func describeTarget(t device.Target) string {
	kind := map[device.Platform]string{device.Android: "Android", device.IOS: "iOS"}[t.Platform]
	if kind == "" {
		kind = string(t.Platform)
	}
	name := t.Model
	if name == "" {
		name = t.Serial
	}
	if name == "" || name == t.ID {
		return kind + " · " + t.ID
	}
	return kind + " · " + name + " (" + t.ID + ")"
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"id": s.id, "ok": true, "status": "ok"})
}

// previewKinds are the preview endpoints a client may use here: a
// playground locked to WebRTC serves no H.264 WebSocket.
func (s *Server) previewKinds() []string {
	if s.opts.PreviewTransport == TransportWebRTC {
		return []string{"screenshot", "mjpeg", TransportWebRTC}
	}
	return []string{"screenshot", "mjpeg", "h264", TransportWebRTC}
}

// runtimeInfo is the platform, the preview kinds and the session, with
// Midscene's fields beside (runtimeView).
func (s *Server) runtimeInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.runtimeView(s.sess.view()))
}

// apiError is an error with the HTTP status it is answered with and any
// fields the client needs (the running task's id on a 409).
type apiError struct {
	code   int
	err    error
	fields map[string]any
}

func (e *apiError) Error() string { return e.err.Error() }
func (e *apiError) Unwrap() error { return e.err }

func errorf(code int, format string, args ...any) *apiError {
	return &apiError{code: code, err: fmt.Errorf(format, args...)}
}

func writeError(w http.ResponseWriter, code int, err error) {
	body := map[string]any{"error": err.Error()}
	var ae *apiError
	if errors.As(err, &ae) {
		code = ae.code
		for k, v := range ae.fields {
			body[k] = v
		}
	}
	writeJSON(w, code, body)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// readJSON decodes the body into v, naming what was wrong.
func readJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return errorf(http.StatusRequestEntityTooLarge, "request body over %d bytes", tooBig.Limit)
		}
		return errorf(http.StatusBadRequest, "request body: want a JSON object: %w", err)
	}
	return nil
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
