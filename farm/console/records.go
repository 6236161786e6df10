package console

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"path"
	"time"

	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/records"
)

// member is the one check between a request and a project's runs and
// records.
func (c *Console) member(r *http.Request, project string) bool {
	return c.auth.Allow(r.Context(), principal(r), auth.View, project) == nil
}

// recordList answers the runs with a record, filtered by project, state,
// labels and since (query parameters), newest first.
func (c *Console) recordList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := records.ParseFilter(q.Get("project"), q.Get("state"), q.Get("labels"), q.Get("since"), time.Now())
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	runs, err := c.records.List(r.Context(), f)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	out := make([]queue.Run, 0, min(len(runs), 200))
	for _, run := range runs {
		if len(out) < 200 && c.member(r, run.Project) {
			out = append(out, run)
		}
	}
	writeJSON(w, out)
}

// recordFile serves one file of a run's record: /records/RUN/report.html
// opens the report, whose screenshots load from beside it.
func (c *Console) recordFile(w http.ResponseWriter, r *http.Request) {
	run, err := c.records.Run(r.Context(), r.PathValue("run"))
	if errors.Is(err, records.ErrNoRecord) || errors.Is(err, queue.ErrNoRun) {
		writeError(w, http.StatusNotFound, err)
		return
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	if !c.member(r, run.Project) {
		// Not found, not forbidden: a run of another project is not
		// shown to exist.
		writeError(w, http.StatusNotFound, errors.New("no record of run "+run.ID))
		return
	}
	res, err := c.records.Get(r.Context(), run, r.PathValue("file"))
	if errors.Is(err, records.ErrNoRecord) {
		writeError(w, http.StatusNotFound, err)
		return
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	defer res.Close()
	ct := mime.TypeByExtension(path.Ext(r.PathValue("file")))
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	io.Copy(w, res)
}
