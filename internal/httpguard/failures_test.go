package httpguard

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFailures: an address is refused (429, Retry-After) after its
// failures in a window, until the window ends; other addresses are not.
func TestFailures(t *testing.T) {
	now := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	f := NewFailures(3, time.Minute, func() time.Time { return now })
	req := func(ip string) *http.Request {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = ip + ":4000"
		return r
	}
	refused := func(ip string) (bool, *httptest.ResponseRecorder) {
		w := httptest.NewRecorder()
		e := f.Refused(req(ip), "test")
		if e != nil {
			e.SetHeader(w)
			http.Error(w, e.Error(), http.StatusTooManyRequests)
		}
		return e != nil, w
	}
	for i := range 3 {
		if r, _ := refused("10.0.0.1"); r {
			t.Fatalf("refused after %d failures, want after 3", i)
		}
		f.Failed(req("10.0.0.1"))
	}
	now = now.Add(20 * time.Second)
	r, w := refused("10.0.0.1")
	if !r || w.Code != 429 || w.Header().Get("Retry-After") != "40" || !strings.Contains(w.Body.String(), "3 wrong tokens") {
		t.Fatalf("after 3 failures: refused %v, %d, Retry-After %q, %q; want 429 for the 40 s left", r, w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if r, _ := refused("10.0.0.2"); r {
		t.Error("another address is refused")
	}
	now = now.Add(40 * time.Second)
	if r, _ := refused("10.0.0.1"); r {
		t.Error("still refused after the window")
	}
	// A flood of new addresses keeps the table bounded.
	for i := range maxTracked + 10 {
		f.Failed(req("10.1." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256)))
	}
	if n := len(f.by); n > maxTracked {
		t.Errorf("%d addresses tracked, want at most %d", n, maxTracked)
	}
}
