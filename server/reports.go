package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/apexagent/apex/report"
	"github.com/apexagent/apex/store"
)

// RunInfo is one recorded run as GET /runs lists it.
type RunInfo struct {
	ID      string    `json:"id"`
	Name    string    `json:"name,omitempty"`
	Device  string    `json:"device,omitempty"`
	Status  string    `json:"status"`
	Reason  string    `json:"reason,omitempty"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	// Report is where its HTML report is served.
	Report string `json:"report"`
}

// maxListedRuns bounds GET /runs?limit=.
const maxListedRuns = 500

// runs lists the newest recorded runs (the playground's tasks, and apex
// run's when they share the runs directory), newest first.
func (s *Server) runs(w http.ResponseWriter, r *http.Request) {
	limit := 50
	if q := r.URL.Query().Get("limit"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 || n > maxListedRuns {
			writeError(w, http.StatusBadRequest, fmt.Errorf("limit=%q: give a number from 1 to %d", q, maxListedRuns))
			return
		}
		limit = n
	}
	st, err := s.store()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	rs, err := st.Runs(r.Context(), limit)
	if err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("listing runs: %w", err))
		return
	}
	out := make([]RunInfo, 0, len(rs))
	for _, run := range rs {
		out = append(out, RunInfo{ID: run.ID, Name: run.Name, Device: run.Device, Status: run.Status, Reason: run.Reason,
			Started: run.Started, Ended: run.Ended, Report: "/report/" + run.ID})
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out})
}

// runReport writes the HTML report of a task's run (again each time: the
// run may have ended since) and redirects to it.
func (s *Server) runReport(w http.ResponseWriter, r *http.Request) {
	st, id, ok := s.knownRun(w, r)
	if !ok {
		return
	}
	if _, err := report.Write(r.Context(), st, id); err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("writing the report of run %s: %w", id, err))
		return
	}
	http.Redirect(w, r, "/runs/"+id+"/"+report.FileName, http.StatusSeeOther)
}

// runFile serves a file of a recorded run: its report and the screenshots
// the report refers to.
func (s *Server) runFile(w http.ResponseWriter, r *http.Request) {
	st, id, ok := s.knownRun(w, r)
	if !ok {
		return
	}
	// http.FileServer refuses paths that climb out of the run directory;
	// noDirs keeps it from listing one.
	h := http.StripPrefix("/runs/"+id, http.FileServer(noDirs{http.Dir(st.RunDir(id))}))
	w.Header().Set("Cache-Control", "no-store")
	reportHeaders(w.Header(), r.URL.Path)
	h.ServeHTTP(w, r)
}

// reportCSP keeps a report out of other pages' frames (%s is who may
// frame the file: a report nobody, its Scene files the report itself) and
// stops plugins, form posts and a changed base URL; reports escape what
// they show, and their own inline script talks only to this playground.
const reportCSP = "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors %s"

// reportHeaders are the headers of a run's file at path.
func reportHeaders(h http.Header, path string) {
	ancestors, frame := "'self'", "SAMEORIGIN"
	if strings.HasSuffix(path, ".html") || strings.HasSuffix(path, "/") {
		ancestors, frame = "'none'", "DENY"
	}
	h.Set("Content-Security-Policy", fmt.Sprintf(reportCSP, ancestors))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", frame)
	h.Set("Referrer-Policy", "no-referrer")
}

// noDirs is a file system whose directories cannot be opened: a run's
// files are served by name, never listed.
type noDirs struct{ http.FileSystem }

func (d noDirs) Open(name string) (http.File, error) {
	f, err := d.FileSystem.Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || fi.IsDir() {
		f.Close()
		return nil, fs.ErrNotExist
	}
	return f, nil
}

// knownRun is the store and the run the path names, which must exist, so
// the id can never name a directory outside the store.
func (s *Server) knownRun(w http.ResponseWriter, r *http.Request) (*store.Store, string, bool) {
	id := r.PathValue("run")
	st, err := s.store()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return nil, "", false
	}
	if _, err := st.Run(r.Context(), id); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, store.ErrNotFound) {
			code = http.StatusNotFound
		}
		writeError(w, code, fmt.Errorf("run %q: %w", id, err))
		return nil, "", false
	}
	return st, id, true
}
