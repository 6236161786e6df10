package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ticketTTL is how long a ticket of POST /auth/ticket is good for: long
// enough to put it in an <img> or EventSource URL, short enough that a
// URL copied from a log or the browser's history is useless.
const ticketTTL = 60 * time.Second

// maxTicket bounds what parseTicket reads: a real one is ~70 bytes.
const maxTicket = 1024

// A ticket authorises GET requests that cannot carry a header until exp.
// Its scope, when set, is the one path prefix it is good for (the run
// grants of auth.go); a ticket of POST /auth/ticket has none. Tickets are
// signed, not stored: the server keeps no table of them.
type ticket struct {
	exp   time.Time
	scope string
}

var (
	errTicketInvalid = errors.New("ticket is not valid (altered, or minted by another playground): POST /auth/ticket with the bearer token for a new one")
	errTicketExpired = errors.New("ticket expired")
)

// signTicket writes t as EXP.SCOPE.MAC: EXP in Unix seconds, SCOPE and
// MAC (HMAC-SHA256 of EXP.SCOPE under key) in unpadded base64url, so the
// ticket goes in a query string as it is.
func signTicket(key []byte, t ticket) string {
	body := strconv.FormatInt(t.exp.Unix(), 10) + "." + base64.RawURLEncoding.EncodeToString([]byte(t.scope))
	return body + "." + base64.RawURLEncoding.EncodeToString(ticketMAC(key, body))
}

func ticketMAC(key []byte, body string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("apex-ticket\x00"))
	m.Write([]byte(body))
	return m.Sum(nil)
}

// parseTicket checks s's signature under key and reads it; it does not
// look at the expiry (check does).
func parseTicket(key []byte, s string) (ticket, error) {
	if len(s) > maxTicket {
		return ticket{}, errTicketInvalid
	}
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return ticket{}, errTicketInvalid
	}
	body := s[:i]
	sig, err := base64.RawURLEncoding.DecodeString(s[i+1:])
	if err != nil || !hmac.Equal(sig, ticketMAC(key, body)) {
		return ticket{}, errTicketInvalid
	}
	expText, scopeText, ok := strings.Cut(body, ".")
	if !ok {
		return ticket{}, errTicketInvalid
	}
	exp, err := strconv.ParseInt(expText, 10, 64)
	if err != nil {
		return ticket{}, errTicketInvalid
	}
	scope, err := base64.RawURLEncoding.DecodeString(scopeText)
	if err != nil {
		return ticket{}, errTicketInvalid
	}
	return ticket{exp: time.Unix(exp, 0), scope: string(scope)}, nil
}

// check parses s and refuses it once expired.
func checkTicket(key []byte, s string, now time.Time) (ticket, error) {
	t, err := parseTicket(key, s)
	if err != nil {
		return ticket{}, err
	}
	if !now.Before(t.exp) {
		return ticket{}, fmt.Errorf("%w %s ago (tickets last %s): POST /auth/ticket for a new one and use it at once",
			errTicketExpired, now.Sub(t.exp).Round(time.Second), ticketTTL)
	}
	return t, nil
}

// ticketPath reports whether a ticket may authorise a GET of path: the
// URLs a page puts in <img src>, EventSource or a link, which cannot
// carry an Authorization header.
func ticketPath(path string) bool {
	switch path {
	case "/mjpeg", "/preview/h264", "/screenshot", "/events":
		return true
	}
	for _, p := range []string{"/recorder/screenshot/", "/runs/", "/report/"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// ticketPlaces names the URLs ticketPath accepts, for error messages.
const ticketPlaces = "/mjpeg, /preview/h264, /screenshot, /events, /recorder/screenshot/…, /runs/… and /report/…"

// mintTicket answers POST /auth/ticket: a ticket good for ticketTTL. The
// guard has authenticated the request already; without a token tickets
// are accepted and ignored, so clients can use them either way.
func (s *Server) mintTicket(w http.ResponseWriter, r *http.Request) {
	g := newGate(s.opts.Token, s.id, 0) // for its ticket key only
	exp := g.now().Add(ticketTTL).Truncate(time.Second)
	writeJSON(w, http.StatusOK, map[string]any{
		"ticket":  signTicket(g.ticketKey, ticket{exp: exp}),
		"expires": exp.UTC().Format(time.RFC3339),
	})
}
