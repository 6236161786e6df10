package wda

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apexagent/apex/sim"
)

// TestHostAndOriginChecks: a web page cannot drive the simulated phone
// through the user's browser, by a rebound name or a cross-origin POST.
func TestHostAndOriginChecks(t *testing.T) {
	p, err := sim.NewPhone(sim.Options{Platform: sim.PlatformIOS})
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(p, nil)
	tests := []struct {
		name, method, host, origin string
		want                       int
	}{
		{"loopback status", "GET", "127.0.0.1:8100", "", 200},
		{"address status", "GET", "10.0.0.7:8100", "", 200},
		{"rebound name", "GET", "evil.example:8100", "", 403},
		{"cross-origin text/plain POST", "POST", "127.0.0.1:8100", "http://evil.example", 403},
		{"same-origin POST", "POST", "127.0.0.1:8100", "http://127.0.0.1:8100", 200},
	}
	for _, tt := range tests {
		path := "/status"
		var body *strings.Reader
		if tt.method == http.MethodPost {
			path = "/wda/homescreen"
			body = strings.NewReader("{}")
		} else {
			body = strings.NewReader("")
		}
		r := httptest.NewRequest(tt.method, "http://"+tt.host+path, body)
		r.Header.Set("Content-Type", "text/plain")
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != tt.want {
			t.Errorf("%s: %d %s, want %d", tt.name, w.Code, w.Body, tt.want)
		}
	}
}
