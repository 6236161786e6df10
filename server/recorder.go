package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
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

	platform device.Platform
	// beforeFile and afterFile hold the screenshots ("" when none was
	// kept): a recording keeps its frames on disk, never in memory.
	beforeFile, afterFile string
}

// recorder keeps the manual actions of one recording, and their frames in
// a private directory of their own, within the Limits.
type recorder struct {
	mu      sync.Mutex
	on      bool
	started time.Time
	events  []Recorded
	// dir holds the recording's frames ("" until the first); frames is
	// their size, dropped how many were not kept for the bound.
	dir     string
	frames  int64
	dropped int
	limits  Limits
	log     *slog.Logger
}

func (rc *recorder) recording() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.on
}

// full refuses an action the recording could not keep: past
// Limits.RecordedActions (429), or with params over MaxText (413).
func (rc *recorder) full(params []byte) error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch {
	case !rc.on:
		return nil
	case len(rc.events) >= rc.limits.RecordedActions:
		return errorf(http.StatusTooManyRequests, "the recording holds %d actions, its limit: export it (GET /recorder/export), then POST /recorder/stop or start a new one", len(rc.events))
	case len(params) > MaxText:
		return errorf(http.StatusRequestEntityTooLarge, "params of %d bytes: a recorded action keeps at most %d; shorten them or stop recording", len(params), MaxText)
	}
	return nil
}

// add records r with its frames (PNG; nil: none), which go to disk while
// the recording's frames stay within Limits.RecorderFrames.
func (rc *recorder) add(r Recorded, before, after []byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !rc.on || len(rc.events) >= rc.limits.RecordedActions {
		return
	}
	r.Seq = len(rc.events) + 1
	r.fillMidscene(before, after)
	r.beforeFile = rc.keep(r.Seq, "before", before)
	r.afterFile = rc.keep(r.Seq, "after", after)
	if r.beforeFile != "" {
		r.Before = fmt.Sprintf("/recorder/screenshot/%d/before", r.Seq)
	}
	if r.afterFile != "" {
		r.After = fmt.Sprintf("/recorder/screenshot/%d/after", r.Seq)
	}
	if r.beforeFile == "" && r.afterFile == "" {
		r.ScreenshotAsset = nil
	}
	rc.events = append(rc.events, r)
}

// keep writes one frame to the recording's directory and returns its
// path; "" when there is none, or it is over the bound (counted), or the
// disk refused it (logged: recording never fails an action).
func (rc *recorder) keep(seq int, which string, png []byte) string {
	if png == nil {
		return ""
	}
	if rc.frames+int64(len(png)) > rc.limits.RecorderFrames {
		rc.dropped++
		return ""
	}
	if rc.dir == "" {
		dir, err := os.MkdirTemp("", "apex-recorder-") // 0700
		if err != nil {
			rc.log.Warn("a directory for the recording's frames", "err", err)
			return ""
		}
		rc.dir = dir
	}
	path := filepath.Join(rc.dir, fmt.Sprintf("%04d-%s.png", seq, which))
	if err := os.WriteFile(path, png, 0o600); err != nil {
		rc.log.Warn("keep a recorded frame", "path", path, "err", err)
		return ""
	}
	rc.frames += int64(len(png))
	return path
}

// resetLocked forgets the recording and removes its frames from disk.
func (rc *recorder) resetLocked() {
	if rc.dir != "" {
		os.RemoveAll(rc.dir)
	}
	rc.events, rc.dir, rc.frames, rc.dropped = nil, "", 0, 0
}

// close ends the recording and removes its frames (Server.Close).
func (rc *recorder) close() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.on = false
	rc.resetLocked()
}

func (rc *recorder) list() []Recorded {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Recorded{}, rc.events...)
}

// framesNote says how many frames the recording left out, "" when none.
func (rc *recorder) framesNote() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.dropped == 0 {
		return ""
	}
	return fmt.Sprintf("%d screenshots were not kept: the recording's frames reached their bound of %d bytes (the actions are recorded)", rc.dropped, rc.limits.RecorderFrames)
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
	rc.resetLocked()
	rc.on, rc.started = true, time.Now()
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
	out := map[string]any{"recording": s.rec.recording(), "events": evs[from:], "nextIndex": len(evs)}
	if note := s.rec.framesNote(); note != "" {
		out["framesOmitted"] = note
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) recorderScreenshot(w http.ResponseWriter, r *http.Request) {
	seq, err := strconv.Atoi(r.PathValue("seq"))
	evs := s.rec.list()
	if err != nil || seq < 1 || seq > len(evs) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no recorded action %q", r.PathValue("seq")))
		return
	}
	var file string
	switch r.PathValue("which") {
	case "before":
		file = evs[seq-1].beforeFile
	case "after":
		file = evs[seq-1].afterFile
	default:
		writeError(w, http.StatusNotFound, fmt.Errorf("%q: ask for before or after", r.PathValue("which")))
		return
	}
	img, err := os.ReadFile(file)
	if file == "" || err != nil {
		writeError(w, http.StatusNotFound, fmt.Errorf("action %d has no %s screenshot kept", seq, r.PathValue("which")))
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
