package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
)

// The read routes answer GET only (the mux refuses other methods with
// 405): what is on the device, never a way to change it.
func (s *Server) readAPI() []route {
	return []route{
		{"GET /a11y-tree", s.a11yTree},
		{"GET /foreground-app", s.foregroundApp},
		{"GET /events/log", s.eventLog},
	}
}

// a11yTree is the accessibility tree as the device wrote it (uiautomator
// XML on Android, the XCUITest source on iOS).
func (s *Server) a11yTree(w http.ResponseWriter, r *http.Request) {
	dev, err := s.sess.open(false)
	if err != nil {
		writeError(w, 0, err)
		return
	}
	src, err := dev.drv.Source(r.Context())
	if err != nil {
		s.readFailed(w, r, dev, "accessibility tree", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"device": dev.target.ID, "format": src.Format, "tree": string(src.Data)})
}

func (s *Server) foregroundApp(w http.ResponseWriter, r *http.Request) {
	dev, err := s.sess.open(false)
	if err != nil {
		writeError(w, 0, err)
		return
	}
	app, err := dev.drv.ForegroundApp(r.Context())
	if err != nil {
		s.readFailed(w, r, dev, "foreground app", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"device": dev.target.ID, "app": app})
}

func (s *Server) readFailed(w http.ResponseWriter, r *http.Request, dev sessionDevice, what string, err error) {
	if errors.Is(err, device.ErrOffline) {
		s.relinkAnswer(w, r, dev, what, err)
		return
	}
	writeError(w, http.StatusBadGateway, fmt.Errorf("%s of %s: %w", what, dev.target.ID, err))
}

// logLines bounds what one GET /events/log reads.
const logLines = 2000

// eventLog is the device's log after since (RFC 3339, or Unix
// milliseconds; the last logLines lines when left out), with next, the
// since of the following call. Android's is logcat; an iPhone's log is
// not reachable through WebDriverAgent, and the answer says so.
func (s *Server) eventLog(w http.ResponseWriter, r *http.Request) {
	since, err := parseSince(r.URL.Query().Get("since"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	dev, err := s.sess.open(false)
	if err != nil {
		writeError(w, 0, err)
		return
	}
	lr, ok := logReader(dev.drv)
	if !ok {
		writeError(w, http.StatusNotImplemented, fmt.Errorf("the log of %s (%s) cannot be read here: WebDriverAgent has no log; read the device's syslog on its Mac (idevicesyslog, or Console)", dev.target.ID, dev.target.Platform))
		return
	}
	entries, err := lr.ReadLog(r.Context(), since, logLines)
	if err != nil {
		s.readFailed(w, r, dev, "log", err)
		return
	}
	next := since
	if len(entries) > 0 {
		next = entries[len(entries)-1].Time
	}
	writeJSON(w, http.StatusOK, map[string]any{"device": dev.target.ID, "entries": entries, "next": next.Format(time.RFC3339Nano)})
}

func parseSince(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("since=%q: give a time as RFC 3339 (2026-01-02T15:04:05Z) or Unix milliseconds, or the next of the last answer", v)
	}
	return t, nil
}

// logReader finds the log of a driver, or of the driver it wraps.
func logReader(d device.Driver) (device.LogReader, bool) {
	for d != nil {
		if lr, ok := d.(device.LogReader); ok {
			return lr, true
		}
		w, ok := d.(action.Wrapper)
		if !ok {
			break
		}
		d = w.Unwrap()
	}
	return nil, false
}
