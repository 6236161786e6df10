package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/apexagent/apex/internal/lazy"
)

// MidsceneRecorded is what Midscene's recorder reads of a recorded action
// (GET /recorder/events lists both shapes in one object).
type MidsceneRecorded struct {
	Source          string          `json:"source"`
	Type            string          `json:"type"` // click, drag, input, keydown, scroll, navigation
	ActionType      string          `json:"actionType"`
	Value           string          `json:"value,omitempty"`
	ElementRect     map[string]int  `json:"elementRect,omitempty"`
	PageInfo        map[string]int  `json:"pageInfo"`
	ScreenshotAsset *screenshotRef  `json:"screenshotAsset,omitempty"`
	Semantic        *recordSemantic `json:"semantic,omitempty"`
	Timestamp       int64           `json:"timestamp"`
	HashID          string          `json:"hashId"`
}

type screenshotRef struct {
	ID       string `json:"id"`
	MimeType string `json:"mimeType"`
	Bytes    int    `json:"bytes"`
}

// recordSemantic says what a recorded action did in words. Apex knows the
// element an action touched, so it needs no model to say it.
type recordSemantic struct {
	Source             string `json:"source"` // heuristic
	Status             string `json:"status"` // ready
	ElementDescription string `json:"elementDescription,omitempty"`
	ReplayInstruction  string `json:"replayInstruction,omitempty"`
	ActionSummary      string `json:"actionSummary,omitempty"`
	Confidence         string `json:"confidence,omitempty"`
}

// midsceneTypes is the recorder event type of each action.
var midsceneTypes = map[string]string{"Tap": "click", "DoubleTap": "click", "LongPress": "click", "Swipe": "drag",
	"DragAndDrop": "drag", "Input": "input", "ClearInput": "input", "KeyboardPress": "keydown", "Scroll": "scroll",
	"Launch": "navigation", "Back": "navigation", "Home": "navigation"}

// fillMidscene fills r's Midscene fields from its own (r.Seq set) and its
// frames.
func (r *Recorded) fillMidscene(before, after []byte) {
	m := MidsceneRecorded{Source: "studio-preview", Type: midsceneTypes[r.Action], ActionType: r.Action,
		Timestamp: r.Time.UnixMilli(), HashID: "apex-" + strconv.Itoa(r.Seq), PageInfo: map[string]int{"width": 0, "height": 0}}
	if m.Type == "" {
		m.Type = "click"
	}
	if r.Point != nil {
		m.ElementRect = map[string]int{"x": r.Point.X, "y": r.Point.Y, "left": r.Point.X, "top": r.Point.Y}
		m.Value = fmt.Sprintf("%d,%d", r.Point.X, r.Point.Y)
	}
	var p struct {
		Value   string `json:"value"`
		KeyName string `json:"keyName"`
	}
	_ = json.Unmarshal(r.Params, &p)
	m.Value = cmpOr(p.Value, p.KeyName, m.Value)
	if shot := cmpBytes(before, after); shot != nil {
		if cfg, err := png.DecodeConfig(bytes.NewReader(shot)); err == nil {
			m.PageInfo = map[string]int{"width": cfg.Width, "height": cfg.Height}
		}
		m.ScreenshotAsset = &screenshotRef{ID: assetID(r.Seq, before != nil), MimeType: "image/png", Bytes: len(shot)}
	}
	desc := ""
	if e := r.Element; e != nil {
		desc = cmpOr(e.Text, e.Desc, e.ResourceID)
	}
	if desc != "" {
		instr := fmt.Sprintf("%s %q", r.Action, desc)
		if m.Type == "input" && p.Value != "" {
			instr = fmt.Sprintf("Input %q into %q", p.Value, desc)
		}
		m.Semantic = &recordSemantic{Source: "heuristic", Status: "ready", ElementDescription: desc, ReplayInstruction: instr,
			ActionSummary: instr, Confidence: "high"}
	} else {
		m.Semantic = &recordSemantic{Source: "heuristic", Status: "ready", ReplayInstruction: r.Action + " " + string(r.Params),
			ActionSummary: r.Action + " " + string(r.Params), Confidence: "medium"}
	}
	r.MidsceneRecorded = m
}

func cmpOr(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func cmpBytes(bs ...[]byte) []byte {
	for _, b := range bs {
		if b != nil {
			return b
		}
	}
	return nil
}

// assetID names a recorded screenshot: the one before the action when it
// was taken, else the one after.
func assetID(seq int, before bool) string {
	if before {
		return fmt.Sprintf("rec-%d-before", seq)
	}
	return fmt.Sprintf("rec-%d-after", seq)
}

var assetPattern = lazy.Regexp(`^rec-([0-9]+)-(before|after)$`)

func (s *Server) midsceneRecorderAPI() []route {
	return []route{
		{"GET /recorder/capabilities", s.recorderCapabilities},
		{"GET /recorder/assets/{id}", s.recorderAsset},
		{"DELETE /recorder/assets/session/{sid}", s.recorderAssetsDone},
		{"POST /recorder/assets/session/{sid}/prune", s.recorderAssetsDone},
		{"POST /recorder/describe-event", s.recorderDescribe},
	}
}

// recorderCapabilities says whether manual actions can be recorded: they
// can whenever a session is open.
func (s *Server) recorderCapabilities(w http.ResponseWriter, r *http.Request) {
	v := s.sess.view()
	if v.Device == nil {
		writeJSON(w, http.StatusOK, map[string]any{"supported": false, "source": "unsupported", "error": "no device session: POST /session first"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"supported": true, "source": "studio-preview", "platformId": v.Device.Platform})
}

// recorderAsset serves a recorded screenshot by its asset id.
func (s *Server) recorderAsset(w http.ResponseWriter, r *http.Request) {
	m := assetPattern().FindStringSubmatch(r.PathValue("id"))
	if m == nil {
		writeError(w, http.StatusNotFound, fmt.Errorf("no recorded screenshot %q", r.PathValue("id")))
		return
	}
	r.SetPathValue("seq", m[1])
	r.SetPathValue("which", m[2])
	s.recorderScreenshot(w, r)
}

// recorderAssetsDone answers Midscene's clean-ups of its screenshot store:
// recorded screenshots live with their recording here, and go with it.
func (s *Server) recorderAssetsDone(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// recorderDescribe answers Midscene's request to describe a recorded
// event: the event as recorded, whose semantic already names the element.
func (s *Server) recorderDescribe(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Event struct {
			HashID string `json:"hashId"`
		} `json:"event"`
	}
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(&body); err != nil || body.Event.HashID == "" {
		writeError(w, http.StatusBadRequest, errors.New(`give the event to describe: {"event": {"hashId": …}} from GET /recorder/events`))
		return
	}
	for _, e := range s.rec.list() {
		if e.HashID == body.Event.HashID {
			writeJSON(w, http.StatusOK, map[string]any{"ok": true, "event": e})
			return
		}
	}
	writeError(w, http.StatusNotFound, fmt.Errorf("no recorded event %q: it belongs to an earlier recording", body.Event.HashID))
}

// sinceIndex is GET /recorder/events' since: the first event to list.
func sinceIndex(q string) int {
	n, err := strconv.Atoi(strings.TrimSpace(q))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
