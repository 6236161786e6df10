package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
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
	// http.FileServer refuses paths that climb out of the run directory.
	h := http.StripPrefix("/runs/"+id, http.FileServer(http.Dir(st.RunDir(id))))
	w.Header().Set("Cache-Control", "no-store")
	h.ServeHTTP(w, r)
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
