package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/scene"
)

// Recorded is one successful manual action of a recording.
type Recorded struct {
	Seq     int             `json:"seq"`
	Time    time.Time       `json:"time"`
	Action  string          `json:"action"`
	Params  json.RawMessage `json:"params"`
	Element *scene.Element  `json:"element,omitempty"` // what a locator found
	Point   *device.Point   `json:"point,omitempty"`
	Device  string          `json:"device"`
	// App is the app in front when the action began: the export launches
	// the first one, so it replays from a fresh start.
	App string `json:"app,omitempty"`
	// Before and After are the screenshots' URLs ("" when the screenshot
	// failed: recording never fails an action).
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// MidsceneRecorded is the action as Midscene's recorder reads it.
	MidsceneRecorded

	before, after []byte
	platform      device.Platform
}

// recorder keeps the manual actions of one recording.
type recorder struct {
	mu      sync.Mutex
	on      bool
	started time.Time
	events  []Recorded
}

func (rc *recorder) recording() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.on
}

func (rc *recorder) add(r Recorded) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !rc.on {
		return
	}
	r.Seq = len(rc.events) + 1
	if r.before != nil {
		r.Before = fmt.Sprintf("/recorder/screenshot/%d/before", r.Seq)
	}
	if r.after != nil {
		r.After = fmt.Sprintf("/recorder/screenshot/%d/after", r.Seq)
	}
	r.fillMidscene()
	rc.events = append(rc.events, r)
}

func (rc *recorder) list() []Recorded {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Recorded{}, rc.events...)
}

// recorderStart starts a recording. Midscene's client names its recording
// ({sessionId}) and starts it again at will: a named start begins a new
// recording whatever was going on.
func (s *Server) recorderStart(w http.ResponseWriter, r *http.Request) {
	var body struct {
		SessionID string `json:"sessionId"`
	}
	if err := readJSON(r, &body); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, 0, err)
		return
	}
	rc := &s.rec
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.on && body.SessionID == "" {
		writeError(w, http.StatusConflict, fmt.Errorf("already recording: POST /recorder/stop first"))
		return
	}
	rc.on, rc.started, rc.events = true, time.Now(), nil
	var platform any
	if v := s.sess.view(); v.Device != nil {
		platform = v.Device.Platform
	}
	writeJSON(w, http.StatusOK, map[string]any{"recording": true, "ok": true, "supported": true, "source": "studio-preview", "platformId": platform})
}

func (s *Server) recorderStop(w http.ResponseWriter, r *http.Request) {
	rc := &s.rec
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !rc.on {
		writeError(w, http.StatusConflict, fmt.Errorf("not recording: POST /recorder/start first"))
		return
	}
	rc.on = false
	writeJSON(w, http.StatusOK, map[string]any{"recording": false, "events": len(rc.events), "ok": true})
}

// recorderEvents lists the recording's actions from ?since=N (default 0),
// and nextIndex, the since of the next call.
func (s *Server) recorderEvents(w http.ResponseWriter, r *http.Request) {
	evs := s.rec.list()
	from := min(sinceIndex(r.URL.Query().Get("since")), len(evs))
	writeJSON(w, http.StatusOK, map[string]any{"recording": s.rec.recording(), "events": evs[from:], "nextIndex": len(evs)})
}

func (s *Server) recorderScreenshot(w http.ResponseWriter, r *http.Request) {
	seq, err := strconv.Atoi(r.PathValue("seq"))
	evs := s.rec.list()
	if err != nil || seq < 1 || seq > len(evs) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no recorded action %q", r.PathValue("seq")))
		return
	}
	var img []byte
	switch r.PathValue("which") {
	case "before":
		img = evs[seq-1].before
	case "after":
		img = evs[seq-1].after
	default:
		writeError(w, http.StatusNotFound, fmt.Errorf("%q: ask for before or after", r.PathValue("which")))
		return
	}
	if img == nil {
		writeError(w, http.StatusNotFound, fmt.Errorf("action %d has no %s screenshot", seq, r.PathValue("which")))
		return
	}
	w.Header().Set("Content-Type", "image/png")
	_, _ = w.Write(img)
}

// recorderExport writes the recording as an apex run script: one generic
// action step per action, its params as recorded (JSON is YAML).
func (s *Server) recorderExport(w http.ResponseWriter, r *http.Request) {
	evs := s.rec.list()
	if len(evs) == 0 {
		writeError(w, http.StatusConflict, fmt.Errorf("nothing recorded: POST /recorder/start, act with POST /interact, then export"))
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Recorded in the Apex playground on %s at %s.\n", evs[0].Device, evs[0].Time.UTC().Format(time.RFC3339))
	b.WriteString("# Replay: apex run --device ID this.yaml\n\n")
	if first := evs[0]; first.App != "" && first.platform != "" {
		// The app the recording began in, opened first, as it was.
		fmt.Fprintf(&b, "%s:\n  launch: %s\n\n", first.platform, first.App)
	}
	b.WriteString("tasks:\n  - name: recorded\n    flow:\n")
	for _, e := range evs {
		fmt.Fprintf(&b, "      - %s: %s\n", e.Action, strings.ReplaceAll(string(e.Params), "${", "$${")) // typed text stays as typed: scripts read ${…} as a value
	}
	w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="recorded.yaml"`)
	_, _ = w.Write([]byte(b.String()))
}
