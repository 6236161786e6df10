package attack

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestReportsFramedByNoOneAndNeverListed: a run's report is served with a
// CSP of frame-ancestors 'none' (another site cannot frame it to trick a
// click), nosniff and no referrer; its directories are never listed, and
// paths cannot climb out of the run.
func TestReportsFramedByNoOneAndNeverListed(t *testing.T) {
	url, _ := playground(t, "", nil, "--sim")
	code, m := call(t, "POST", url+"execute", "", map[string]any{"action": "Home"})
	if code != 200 {
		t.Fatalf("POST /execute: %d %v", code, m)
	}
	id, _ := m["runId"].(string)
	get := func(path string) *http.Response {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", url+strings.TrimPrefix(path, "/"), nil)
		// Redirects are not followed: the mux sends a path with .. to its
		// clean form, which is what is checked.
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		return resp
	}
	if r := get("/report/" + id); r.StatusCode != http.StatusSeeOther { // writes the report, then redirects to it
		t.Fatalf("GET /report/%s: %d", id, r.StatusCode)
	}
	r := get("/runs/" + id + "/report.html")
	csp := r.Header.Get("Content-Security-Policy")
	if r.StatusCode != 200 || !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "object-src 'none'") ||
		r.Header.Get("X-Frame-Options") != "DENY" || r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("report: %d, CSP %q, X-Frame-Options %q, nosniff %q, Referrer-Policy %q", r.StatusCode, csp,
			r.Header.Get("X-Frame-Options"), r.Header.Get("X-Content-Type-Options"), r.Header.Get("Referrer-Policy"))
	}
	for _, path := range []string{"/runs/" + id + "/", "/runs/" + id + "/steps/", "/runs/" + id + "/steps", "/runs/" + id + "/../../", "/runs/" + id + "/..%2f..%2fapex.db"} {
		if r := get(path); r.StatusCode == 200 {
			t.Errorf("GET %s: 200, want no listing and nothing outside the run", path)
		}
	}
}
