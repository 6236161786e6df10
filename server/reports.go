package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/apexagent/apex/report"
	"github.com/apexagent/apex/store"
)

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
