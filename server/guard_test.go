package server_test

import (
	"bufio"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/server"
)

const testToken = "tok-Zq3vX9-secret"

// answer is one response, read in full.
type answer struct {
	code int
	hdr  http.Header
	body string
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(a.body), &m); err != nil {
		t.Fatalf("answer %d is not JSON: %v\n%s", a.code, err, a.body)
	}
	return m
}

// send sends a request as a client at host (the server's own when ""),
// with the given headers and body, following no redirect.
func send(t *testing.T, p *phone, method, path, host string, hdr map[string]string, body string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), method, p.http.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, string(data)}
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

// Without a token the guard is what it always was: loopback names only,
// no cross-origin state changes, and tickets ignored.
func TestNoTokenLoopbackOnly(t *testing.T) {
	p := startPhone(t, nil)
	if a := send(t, p, "GET", "/status", "", nil, ""); a.code != 200 {
		t.Errorf("GET /status on 127.0.0.1: %d %s", a.code, a.body)
	}
	for _, host := range []string{"phone-lab.example:5800", "192.168.1.20:5800", "attacker.example"} {
		a := send(t, p, "GET", "/status", host, bearer(testToken), "")
		if a.code != 403 || !strings.Contains(a.json(t)["error"].(string), "--host") {
			t.Errorf("Host %s without a token: %d %s, want 403 naming --host", host, a.code, a.body)
		}
	}
	if a := send(t, p, "GET", "/status", "localhost:5800", nil, ""); a.code != 200 {
		t.Errorf("Host localhost: %d", a.code)
	}
	a := send(t, p, "POST", "/session", "", map[string]string{"Origin": "http://attacker.example"}, `{}`)
	if a.code != 403 || p.state() != "required" {
		t.Errorf("cross-origin POST /session: %d %s, session %s", a.code, a.body, p.state())
	}
	a = send(t, p, "POST", "/auth/ticket", "", nil, "")
	if tk, _ := a.json(t)["ticket"].(string); a.code != 200 || tk == "" {
		t.Fatalf("POST /auth/ticket without a token: %d %s", a.code, a.body)
	}
	if a := send(t, p, "GET", "/status?ticket=forged", "", nil, ""); a.code != 200 {
		t.Errorf("a ticket where none is needed: %d %s", a.code, a.body)
	}
}

func TestTokenGuardsEverything(t *testing.T) {
	// Many wrong credentials from one address: the bound on guessing
	// (TestTokenGuessing) is lifted here.
	p := startPhone(t, &phoneOptions{opts: server.Options{Token: testToken, Limits: server.Limits{AuthFailures: 1000}}})
	lab := "phone-lab.example:5800" // any name is served once authenticated

	// Nothing without credentials, whatever the path.
	for _, path := range []string{"/status", "/api", "/runtime-info", "/screenshot", "/ui/app.js", "/mjpeg"} {
		a := send(t, p, "GET", path, lab, nil, "")
		if a.code != 401 || !strings.Contains(a.json(t)["error"].(string), "?token=") || a.hdr.Get("WWW-Authenticate") == "" {
			t.Errorf("GET %s without credentials: %d %s, want 401 saying where the token is", path, a.code, a.body)
		}
	}
	state := func() string {
		t.Helper()
		return send(t, p, "GET", "/runtime-info", "", bearer(testToken), "").json(t)["session"].(map[string]any)["state"].(string)
	}
	if a := send(t, p, "POST", "/session", lab, nil, `{}`); a.code != 401 || state() != "required" {
		t.Errorf("POST /session without credentials: %d", a.code)
	}
	// A browser is told, in a page, what to open.
	page := send(t, p, "GET", "/", lab, map[string]string{"Accept": "text/html,*/*"}, "")
	if page.code != 401 || !strings.Contains(page.hdr.Get("Content-Type"), "text/html") || !strings.Contains(page.body, "?token=") {
		t.Errorf("GET / in a browser without the cookie: %d %s\n%.400s", page.code, page.hdr.Get("Content-Type"), page.body)
	}

	// Bearer.
	if a := send(t, p, "GET", "/status", lab, bearer(testToken), ""); a.code != 200 {
		t.Errorf("bearer: %d %s", a.code, a.body)
	}
	for _, h := range []string{"Bearer wrong", "Bearer " + testToken + "x", "Basic " + testToken, testToken} {
		a := send(t, p, "GET", "/status", lab, map[string]string{"Authorization": h}, "")
		if a.code != 401 || strings.Contains(a.body, testToken) {
			t.Errorf("Authorization %q: %d %s, want 401 without the token in it", h, a.code, a.body)
		}
	}

	// The page's sign-in: the right token sets the cookie and redirects
	// to /; a wrong one is refused.
	if a := send(t, p, "GET", "/?token=nope", lab, map[string]string{"Accept": "text/html"}, ""); a.code != 401 || !strings.Contains(a.body, "wrong token") {
		t.Errorf("GET /?token=nope: %d %.300s", a.code, a.body)
	}
	in := send(t, p, "GET", "/?token="+testToken, lab, map[string]string{"Accept": "text/html"}, "")
	cookies := (&http.Response{Header: in.hdr}).Cookies()
	if in.code != 303 || in.hdr.Get("Location") != "/" || len(cookies) != 1 {
		t.Fatalf("GET /?token=TOKEN: %d Location %q cookies %v", in.code, in.hdr.Get("Location"), cookies)
	}
	if a := send(t, p, "GET", "/?context=abc&token="+testToken, lab, map[string]string{"Accept": "text/html"}, ""); a.code != 303 || a.hdr.Get("Location") != "/?context=abc" {
		t.Errorf("GET /?context=abc&token=TOKEN: %d Location %q, want /?context=abc", a.code, a.hdr.Get("Location"))
	}
	c := cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || strings.Contains(c.Value, testToken) || c.Name != "apex_playground_5800" {
		t.Errorf("sign-in cookie %+v: want HttpOnly, SameSite=Lax, Path=/, named for the port, without the token", c)
	}
	withCookie := map[string]string{"Cookie": c.Name + "=" + c.Value}
	if a := send(t, p, "GET", "/runtime-info", lab, withCookie, ""); a.code != 200 {
		t.Errorf("cookie: %d %s", a.code, a.body)
	}
	forgedCookie := map[string]string{"Cookie": c.Name + "=" + c.Value[:len(c.Value)-2] + "xx"}
	if a := send(t, p, "GET", "/runtime-info", lab, forgedCookie, ""); a.code != 401 {
		t.Errorf("altered cookie: %d", a.code)
	}
	// The cookie still needs the page's own origin to change anything.
	evil := map[string]string{"Cookie": withCookie["Cookie"], "Origin": "http://attacker.example"}
	if a := send(t, p, "POST", "/session", lab, evil, `{}`); a.code != 403 || state() != "required" {
		t.Errorf("cross-origin POST /session with the cookie: %d %s, session %s", a.code, a.body, state())
	}
	own := map[string]string{"Cookie": withCookie["Cookie"], "Origin": "http://" + lab}
	if a := send(t, p, "POST", "/session", lab, own, `{}`); a.code != 200 {
		t.Fatalf("POST /session from the page's origin: %d %s", a.code, a.body)
	}

	// Tickets: minted with the bearer token, good for a GET of a preview
	// URL, nothing else.
	if a := send(t, p, "POST", "/auth/ticket", lab, nil, ""); a.code != 401 {
		t.Errorf("POST /auth/ticket without credentials: %d", a.code)
	}
	m := send(t, p, "POST", "/auth/ticket", lab, bearer(testToken), "").json(t)
	tk, _ := m["ticket"].(string)
	exp, err := time.Parse(time.RFC3339, m["expires"].(string))
	if tk == "" || err != nil || time.Until(exp) > time.Minute || time.Until(exp) < 30*time.Second {
		t.Fatalf("POST /auth/ticket = %v (%v), want a ticket good for about a minute", m, err)
	}
	shot := send(t, p, "GET", "/screenshot?ticket="+tk, lab, nil, "")
	if shot.code != 200 || shot.hdr.Get("Content-Type") != "image/png" || !strings.HasPrefix(shot.body, "\x89PNG") {
		t.Errorf("GET /screenshot?ticket=: %d %s", shot.code, shot.hdr.Get("Content-Type"))
	}
	readFirstFrame(t, p.http.URL+"/mjpeg?ticket="+tk)
	for _, tc := range []struct{ method, path, want string }{
		{"POST", "/interact?ticket=" + tk, "only GET"},
		{"GET", "/runtime-info?ticket=" + tk, "only GET of /mjpeg"},
		{"DELETE", "/session?ticket=" + tk, "Bearer"},
		{"GET", "/screenshot?ticket=" + tk[:len(tk)-3] + "AAA", "not valid"},
		{"GET", "/screenshot?ticket=1.." + tk[strings.LastIndex(tk, ".")+1:], "not valid"},
		{"GET", "/mjpeg?ticket=", "not valid"},
	} {
		a := send(t, p, tc.method, tc.path, lab, nil, `{"action":"Back"}`)
		if a.code != 401 || !strings.Contains(a.json(t)["error"].(string), tc.want) {
			t.Errorf("%s %s: %d %s, want 401 saying %q", tc.method, tc.path, a.code, a.body, tc.want)
		}
	}
	if st := state(); st != "ready" {
		t.Errorf("session %s after refused requests, want ready", st)
	}
}

// readFirstFrame reads the MJPEG stream at url up to its first JPEG frame.
func readFirstFrame(t *testing.T, url string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(testCtx(t), "GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != 200 || mt != "multipart/x-mixed-replace" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s %s", url, resp.StatusCode, mt, b)
	}
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("MJPEG stream ended before a frame: %v", err)
		}
		if strings.TrimSpace(line) == "Content-Type: image/jpeg" {
			return
		}
		if strings.TrimSpace(line) == "--"+params["boundary"]+"--" {
			t.Fatal("MJPEG stream closed without a frame")
		}
	}
}
