package httpguard

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Default bounds on failed authentications: an address that sends
// MaxFailures wrong tokens within FailureWindow is answered 429 until the
// window ends.
const (
	MaxFailures   = 10
	FailureWindow = time.Minute
	// maxTracked bounds the addresses a Failures remembers: past it the
	// expired ones are dropped, then (under a flood of new addresses)
	// every one, so memory stays bounded whatever the clients.
	maxTracked = 1 << 14
)

// Failures limits guessing: it counts failed authentications per client
// address in fixed windows. Its methods are safe for concurrent use.
type Failures struct {
	max    int
	window time.Duration
	now    func() time.Time

	mu sync.Mutex
	by map[string]*failWindow
}

type failWindow struct {
	start time.Time
	n     int
}

// NewFailures allows max failures per window and address (0: the
// defaults); now is the clock (nil: time.Now).
func NewFailures(max int, window time.Duration, now func() time.Time) *Failures {
	if max <= 0 {
		max = MaxFailures
	}
	if window <= 0 {
		window = FailureWindow
	}
	if now == nil {
		now = time.Now
	}
	return &Failures{max: max, window: window, now: now, by: map[string]*failWindow{}}
}

// clientIP is the address r's connection comes from.
func clientIP(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// RateError refuses an address that failed too often; each face writes
// it in its own shape, with SetHeader's Retry-After.
type RateError struct {
	RetryAfter int // seconds
	msg        string
}

func (e *RateError) Error() string { return e.msg }

// SetHeader sets Retry-After on w's answer.
func (e *RateError) SetHeader(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
}

// Refused is a *RateError when r's address has failed too often in its
// window (face names the server in its message), else nil.
func (f *Failures) Refused(r *http.Request, face string) *RateError {
	return f.RefusedAddr(clientIP(r), face)
}

// RefusedAddr is Refused for a client address (an IP) of a server that is
// not HTTP.
func (f *Failures) RefusedAddr(ip, face string) *RateError {
	f.mu.Lock()
	fw := f.by[ip]
	var wait time.Duration
	if fw != nil && fw.n >= f.max {
		wait = fw.start.Add(f.window).Sub(f.now())
	}
	f.mu.Unlock()
	if wait <= 0 {
		return nil
	}
	secs := int((wait + time.Second - 1) / time.Second)
	return &RateError{RetryAfter: secs, msg: fmt.Sprintf("%s: %d wrong tokens from this address within %v: wait %d s (Retry-After), then send the right one", face, f.max, f.window, secs)}
}

// Failed counts a failed authentication of r's address.
func (f *Failures) Failed(r *http.Request) { f.FailedAddr(clientIP(r)) }

// FailedAddr is Failed for a client address (an IP).
func (f *Failures) FailedAddr(ip string) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	fw := f.by[ip]
	if fw == nil || now.Sub(fw.start) >= f.window {
		if fw == nil && len(f.by) >= maxTracked {
			f.forgetLocked(now)
		}
		fw = &failWindow{start: now}
		f.by[ip] = fw
	}
	fw.n++
}

// forgetLocked drops the addresses whose window has ended, or all of them
// when none has.
func (f *Failures) forgetLocked(now time.Time) {
	for ip, fw := range f.by {
		if now.Sub(fw.start) >= f.window {
			delete(f.by, ip)
		}
	}
	if len(f.by) >= maxTracked {
		clear(f.by)
	}
}
