package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/apexagent/apex/internal/httpguard"
)

// A gate lets in the requests that prove they know the token (Options.Token):
//
//   - API clients send Authorization: Bearer TOKEN;
//   - the page's browser holds a cookie, set by GET /?token=TOKEN, which
//     then redirects to / so the token leaves the address bar;
//   - a GET of a URL that cannot carry a header (ticketPath) may carry
//     ?ticket= from POST /auth/ticket instead.
//
// The cookie holds an HMAC of the token, not the token, and the ticket key
// is derived from the token and the server's id: a gate needs no state of
// its own, tickets die with the server, and cookies live as long as the
// token does (a restart with the same token keeps the browser signed in).
// The token is never logged.
type gate struct {
	token     [sha256.Size]byte // SHA-256 of the token, compared in constant time
	cookie    string
	ticketKey []byte
	now       func() time.Time
	// fails refuses an address that sent too many wrong tokens.
	fails *httpguard.Failures
}

func newGate(token, serverID string, failures int) *gate {
	return &gate{
		token:     sha256.Sum256([]byte(token)),
		cookie:    base64.RawURLEncoding.EncodeToString(derive(token, "apex playground cookie")),
		ticketKey: derive(token, "apex playground tickets\x00"+serverID),
		now:       time.Now,
		fails:     httpguard.NewFailures(failures, 0, nil),
	}
}

func derive(token, purpose string) []byte {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

func (g *gate) tokenIs(s string) bool {
	h := sha256.Sum256([]byte(s))
	return subtle.ConstantTimeCompare(h[:], g.token[:]) == 1
}

// The cookies' names carry the port: browsers share cookies between the
// ports of a host, and two playgrounds on one machine must not sign each
// other out.
const (
	authCookie  = "apex_playground"
	grantCookie = "apex_run"
)

func cookieName(base, host string) string {
	if _, port, err := net.SplitHostPort(host); err == nil && port != "" && strings.Trim(port, "0123456789") == "" {
		return base + "_" + port
	}
	return base
}

// runGrantTTL is how long a run's report stays readable in a browser that
// opened it with a ticket: its images load lazily, as the reader scrolls.
const runGrantTTL = time.Hour

var (
	errNoCredentials = errors.New("this playground needs its token: open the URL apex playground printed (it ends with ?token=…) in a browser, or send Authorization: Bearer TOKEN (the token of that URL, or of --token / $APEX_PLAYGROUND_TOKEN)")
	errWrongBearer   = errors.New("wrong bearer token: send the token apex playground printed in its URL (?token=…), or the one it was given with --token / $APEX_PLAYGROUND_TOKEN")
	errWrongURLToken = errors.New("wrong token in the URL: open the URL apex playground printed, with its ?token=…")
)

// admit authenticates r. It answers the request itself (and returns false)
// when r is the page's sign-in or is refused; else it returns r, without
// its ticket when it came with one.
// An address that sent too many wrong tokens is answered 429 for a while
// (httpguard.Failures), whatever it sends.
func (g *gate) admit(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if e := g.fails.Refused(r, "the playground"); e != nil {
		e.SetHeader(w)
		writeError(w, http.StatusTooManyRequests, e)
		return nil, false
	}
	if r.URL.Path == "/" && r.Method == http.MethodGet && r.URL.Query().Has("token") {
		g.signIn(w, r)
		return nil, false
	}
	r, err := g.check(w, r)
	if err != nil {
		if err != errNoCredentials { // a guess, not a browser yet to sign in
			g.fails.Failed(r)
		}
		refuse(w, r, err)
		return nil, false
	}
	return r, true
}

func (g *gate) check(w http.ResponseWriter, r *http.Request) (*http.Request, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, _ := strings.Cut(h, " ")
		if !strings.EqualFold(scheme, "Bearer") || !g.tokenIs(strings.TrimSpace(tok)) {
			return r, errWrongBearer
		}
		return r, nil
	}
	for _, c := range r.CookiesNamed(cookieName(authCookie, r.Host)) {
		if subtle.ConstantTimeCompare([]byte(c.Value), []byte(g.cookie)) == 1 {
			return r, nil
		}
	}
	if q := r.URL.Query(); q.Has("ticket") {
		if (r.Method != http.MethodGet && r.Method != http.MethodHead) || !ticketPath(r.URL.Path) {
			return r, fmt.Errorf("a ticket authorises only GET of %s: send Authorization: Bearer TOKEN for %s %s", ticketPlaces, r.Method, r.URL.Path)
		}
		t, err := checkTicket(g.ticketKey, q.Get("ticket"), g.now())
		if err != nil {
			return r, err
		}
		if t.scope != "" {
			return r, errTicketInvalid // run grants travel in their cookie only
		}
		g.grantRun(w, r)
		// The handler and anything it redirects to never see the ticket.
		r = r.Clone(r.Context())
		q.Del("ticket")
		r.URL.RawQuery = q.Encode()
		return r, nil
	}
	for _, c := range r.CookiesNamed(cookieName(grantCookie, r.Host)) {
		t, err := checkTicket(g.ticketKey, c.Value, g.now())
		if err == nil && t.scope != "" && strings.HasPrefix(r.URL.Path, t.scope) && r.Method == http.MethodGet {
			return r, nil
		}
	}
	return r, errNoCredentials
}

// grantRun lets a browser that opened a run's report with a ticket read
// the rest of that run for runGrantTTL: GET /report/RUN redirects to
// /runs/RUN/report.html, whose screenshots are relative URLs that carry no
// ticket. The grant is a ticket scoped to /runs/RUN/, in a cookie of that
// path.
func (g *gate) grantRun(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/report/")
	if !ok {
		if rest, ok = strings.CutPrefix(r.URL.Path, "/runs/"); !ok {
			return
		}
	}
	run, _, _ := strings.Cut(rest, "/")
	if run == "" || strings.Trim(run, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != "" || strings.Trim(run, ".") == "" {
		return
	}
	scope := "/runs/" + run + "/"
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(grantCookie, r.Host), Value: signTicket(g.ticketKey, ticket{exp: g.now().Add(runGrantTTL), scope: scope}),
		Path: scope, MaxAge: int(runGrantTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}

// signIn answers GET /?token=: the right token sets the page's cookie and
// redirects to / with the rest of the query, so the token leaves the
// address bar and the history.
func (g *gate) signIn(w http.ResponseWriter, r *http.Request) {
	if !g.tokenIs(r.URL.Query().Get("token")) {
		g.fails.Failed(r)
		refuse(w, r, errWrongURLToken)
		return
	}
	// Lax, not Strict: the printed URL is often clicked in another web
	// page (a chat, a ticket), and a Strict cookie set there would not
	// reach the redirect to /. Lax still keeps it off other sites'
	// POSTs, fetches and images, and state changes also need the origin
	// check.
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(authCookie, r.Host), Value: g.cookie, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil,
	})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	// The rest of the query (?context=…) is the page's.
	q := r.URL.Query()
	q.Del("token")
	to := "/"
	if len(q) > 0 {
		to += "?" + q.Encode()
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// refuse answers 401: a short page for a browser's navigation, the API's
// JSON error for the rest.
func refuse(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="apex playground"`)
	if r.Method != http.MethodGet || !wantsHTML(r) {
		writeError(w, http.StatusUnauthorized, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprintf(w, refusedPage, html.EscapeString(err.Error()))
}

const refusedPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<title>Apex playground: sign in</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:38em;margin:4em auto;padding:0 1em;color:#222}code{background:#eee;padding:0 .2em}</style>
</head><body>
<h1>This playground needs its token</h1>
<p id="how">Open the URL <code>apex playground</code> printed when it started, with its <code>?token=…</code>.
This browser then stays signed in to it; the token leaves the address bar.</p>
<p>Lost the URL? Restart <code>apex playground</code>: it prints it again (pass <code>--token</code> or set <code>$APEX_PLAYGROUND_TOKEN</code> to keep the same token).</p>
<p id="why">%s</p>
</body></html>
`

// authAPI is the endpoints of token authentication.
func (s *Server) authAPI() []route {
	return []route{{"POST /auth/ticket", s.mintTicket}}
}
