package server

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestTicketRoundTrip(t *testing.T) {
	key := derive("tok", "k")
	now := time.Unix(1_700_000_000, 0)
	for _, scope := range []string{"", "/runs/r1/"} {
		s := signTicket(key, ticket{exp: now.Add(ticketTTL), scope: scope})
		if strings.ContainsAny(s, "?&=+/ ") {
			t.Errorf("ticket %q needs escaping in a query string", s)
		}
		got, err := checkTicket(key, s, now)
		if err != nil || got.scope != scope || !got.exp.Equal(now.Add(ticketTTL)) {
			t.Errorf("checkTicket(%q) = %+v, %v; want scope %q", s, got, err, scope)
		}
	}
}

func TestTicketRefused(t *testing.T) {
	key, other := derive("tok", "k"), derive("tok", "other server")
	now := time.Unix(1_700_000_000, 0)
	good := signTicket(key, ticket{exp: now.Add(ticketTTL)})
	exp, scope, mac := splitTicket(t, good)
	later := signTicket(key, ticket{exp: now.Add(time.Hour)})
	_, _, laterMAC := splitTicket(t, later)
	for name, s := range map[string]string{
		"empty":             "",
		"no dots":           "abc",
		"other key":         signTicket(other, ticket{exp: now.Add(ticketTTL)}),
		"expiry moved":      exp + "9." + scope + "." + mac,
		"scope added":       exp + ".L3J1bnMv." + mac,
		"MAC of another":    exp + "." + scope + "." + laterMAC,
		"MAC cut":           exp + "." + scope + "." + mac[:10],
		"MAC not base64":    exp + "." + scope + ".!!!",
		"huge":              strings.Repeat("1", maxTicket+1),
		"signed but absurd": signBody(key, "x.y"),
	} {
		if _, err := checkTicket(key, s, now); err != errTicketInvalid {
			t.Errorf("%s: %q: err %v, want errTicketInvalid", name, s, err)
		}
	}
	_, err := checkTicket(key, good, now.Add(ticketTTL+5*time.Second))
	if err == nil || !strings.Contains(err.Error(), "expired 5s ago") || !strings.Contains(err.Error(), "POST /auth/ticket") {
		t.Errorf("expired ticket: %v, want how long ago and what to do", err)
	}
}

func splitTicket(t *testing.T, s string) (exp, scope, mac string) {
	t.Helper()
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		t.Fatalf("ticket %q: want EXP.SCOPE.MAC", s)
	}
	return parts[0], parts[1], parts[2]
}

// signBody signs any body, as only a holder of key could.
func signBody(key []byte, body string) string {
	return body + "." + base64.RawURLEncoding.EncodeToString(ticketMAC(key, body))
}

func FuzzParseTicket(f *testing.F) {
	key := derive("tok", "k")
	f.Add(signTicket(key, ticket{exp: time.Unix(1_700_000_000, 0), scope: "/runs/a/"}))
	f.Add("1.2.3")
	f.Add("..")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseTicket(key, s)
		if err != nil {
			return
		}
		// Whatever parses was signed with key: signing it again gives a
		// ticket that parses to the same thing.
		again, err := parseTicket(key, signTicket(key, got))
		if err != nil || again != got {
			t.Fatalf("%q parsed to %+v, which re-signed parses to %+v, %v", s, got, again, err)
		}
	})
}

// gated is a handler behind a gate whose clock the test sets.
func gated(t *testing.T, now *time.Time) (*gate, http.Handler) {
	t.Helper()
	g := newGate("s3cret", "server1", 0)
	g.now = func() time.Time { return *now }
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"path": r.URL.Path, "query": r.URL.RawQuery})
	})
	return g, guard(h, g)
}

func serve(h http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	r.Host = "phone-lab.example:5800"
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestGateTicketExpiresAndHides(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	g, h := gated(t, &now)
	tk := signTicket(g.ticketKey, ticket{exp: now.Add(ticketTTL)})
	w := serve(h, "GET", "/screenshot?ticket="+tk+"&t=1", nil)
	var body map[string]string
	_ = json.Unmarshal(w.Body.Bytes(), &body)
	if w.Code != 200 || body["query"] != "t=1" {
		t.Errorf("fresh ticket: %d %s; want 200 and the handler not seeing the ticket", w.Code, w.Body)
	}
	now = now.Add(ticketTTL)
	w = serve(h, "GET", "/screenshot?ticket="+tk, nil)
	if w.Code != 401 || !strings.Contains(w.Body.String(), "expired") || w.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("expired ticket: %d %s", w.Code, w.Body)
	}
}

// A ticket opens a run's report; the report's relative screenshots then
// load through a cookie scoped to that run, for that run only.
func TestGateRunGrant(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	g, h := gated(t, &now)
	tk := signTicket(g.ticketKey, ticket{exp: now.Add(ticketTTL)})
	w := serve(h, "GET", "/report/run-1?ticket="+tk, nil)
	var grant *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == "apex_run_5800" {
			grant = c
		}
	}
	if w.Code != 200 || grant == nil || grant.Path != "/runs/run-1/" || !grant.HttpOnly || grant.SameSite != http.SameSiteStrictMode {
		t.Fatalf("GET /report with a ticket: %d, grant cookie %+v", w.Code, grant)
	}
	cookie := map[string]string{"Cookie": grant.Name + "=" + grant.Value}
	now = now.Add(30 * time.Minute) // the ticket is long dead; the grant is not
	if w := serve(h, "GET", "/runs/run-1/steps/0001-after.png", cookie); w.Code != 200 {
		t.Errorf("the run's screenshot with its grant: %d %s", w.Code, w.Body)
	}
	for _, path := range []string{"/runs/run-2/report.html", "/screenshot", "/status"} {
		if w := serve(h, "GET", path, cookie); w.Code != 401 {
			t.Errorf("%s with run-1's grant: %d, want 401", path, w.Code)
		}
	}
	if w := serve(h, "POST", "/runs/run-1/x", cookie); w.Code != 401 {
		t.Errorf("POST with a grant: %d, want 401", w.Code)
	}
	now = now.Add(runGrantTTL)
	if w := serve(h, "GET", "/runs/run-1/steps/0001-after.png", cookie); w.Code != 401 {
		t.Errorf("an expired grant: %d, want 401", w.Code)
	}
	// A grant is no ticket: it does not work in the query string.
	if w := serve(h, "GET", "/runs/run-1/report.html?ticket="+grant.Value, nil); w.Code != 401 {
		t.Errorf("a grant as ?ticket=: %d, want 401", w.Code)
	}
}

func TestCookieNamePerPort(t *testing.T) {
	for host, want := range map[string]string{
		"127.0.0.1:5800":    "apex_playground_5800",
		"[::1]:5801":        "apex_playground_5801",
		"lab.example":       "apex_playground",
		"lab.example:5x;=1": "apex_playground",
	} {
		if got := cookieName(authCookie, host); got != want {
			t.Errorf("cookieName(%q) = %q, want %q", host, got, want)
		}
	}
}
