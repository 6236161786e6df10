package server

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/apexagent/apex/internal/lazy"
	"github.com/apexagent/apex/report"
)

// The report endpoints Midscene's client follows from an answer's
// report ({id, url, replayUrl}): the id is the task's run.
func (s *Server) reportsAPI() []route {
	return []route{
		{"GET /reports/{run}/{$}", s.reportPage},
		{"GET /reports/{run}/replay", s.reportReplay},
		{"GET /reports/{run}/screenshots/{asset}", s.reportScreenshot},
	}
}

// withReportHTML adds the task's report to v as one standalone HTML page
// (screenshots inside), as Midscene's answers carry it.
func (s *Server) withReportHTML(ctx context.Context, v TaskView) TaskView {
	st, err := s.store()
	if v.RunID == "" || v.Status == statusRunning || err != nil {
		return v
	}
	_, page, err := report.Render(ctx, st, v.RunID, &report.Options{Inline: true})
	if err != nil {
		s.log.Warn("render the task's inline report", "run", v.RunID, "err", err)
		return v
	}
	if len(page) > s.opts.Limits.InlineRecord {
		v.Omitted = append(v.Omitted, fmt.Sprintf("reportHTML: the report is %d bytes, over the %d an answer carries: GET /reports/%s/", len(page), s.opts.Limits.InlineRecord, v.RunID))
		return v
	}
	v.ReportHTML = string(page)
	return v
}

// reportPage serves a run's report as one standalone page.
func (s *Server) reportPage(w http.ResponseWriter, r *http.Request) {
	st, id, ok := s.knownRun(w, r)
	if !ok {
		return
	}
	_, page, err := report.Render(r.Context(), st, id, &report.Options{Inline: true})
	if err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("render the report of run %s: %w", id, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(page)
}

// reportReplay is a run's record (Dump), for a client that replays it.
func (s *Server) reportReplay(w http.ResponseWriter, r *http.Request) {
	if _, _, ok := s.knownRun(w, r); !ok {
		return
	}
	d, err := s.readDump(r.Context(), r.PathValue("run"))
	if err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("reading the record of run %s: %w", r.PathValue("run"), err))
		return
	}
	writeJSON(w, http.StatusOK, d)
}

var assetName = lazy.Regexp(`^[0-9]{4}-(before|after)\.png$`)

// reportScreenshot serves one screenshot of a run by its file name
// (0003-after.png).
func (s *Server) reportScreenshot(w http.ResponseWriter, r *http.Request) {
	st, id, ok := s.knownRun(w, r)
	if !ok {
		return
	}
	name := r.PathValue("asset")
	if !assetName().MatchString(name) {
		writeError(w, http.StatusBadRequest, fmt.Errorf("screenshot %q: name one as NNNN-before.png or NNNN-after.png", name))
		return
	}
	w.Header().Set("Cache-Control", "private, max-age=3600")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeFile(w, r, filepath.Join(st.RunDir(id), "steps", name))
}
