package httpguard

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits bound what one client can hold of a server. Zero fields take
// Default's.
type Limits struct {
	// HeaderTimeout is how long a client may take to send a request's
	// headers.
	HeaderTimeout time.Duration
	// BodyTimeout is how long a handler may wait for a request's body,
	// from the moment the headers arrived to its end. It is not
	// http.Server.ReadTimeout, which would also end a long handler (a goal
	// answered at its end, an event stream) once it expires.
	BodyTimeout time.Duration
	// WriteStall is how long one write of an answer may block on a client
	// that does not read; streams get a fresh allowance for every write.
	WriteStall time.Duration
	// IdleTimeout closes a kept-alive connection with no request.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes int
	// PerIP is how many connections one address may keep open before any
	// of them was admitted (see Admit); past it, its oldest such
	// connection is closed, so slow clients cannot starve an authorised
	// one, which takes the place of the oldest.
	PerIP int
}

// Default is the limits of Apex's servers (docs/security.md).
var Default = Limits{
	HeaderTimeout:  10 * time.Second,
	BodyTimeout:    60 * time.Second,
	WriteStall:     60 * time.Second,
	IdleTimeout:    2 * time.Minute,
	MaxHeaderBytes: 64 << 10,
	PerIP:          32,
}

func (l *Limits) orDefault() Limits {
	var o Limits
	if l != nil {
		o = *l
	}
	d := Default
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = d.HeaderTimeout
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = d.BodyTimeout
	}
	if o.WriteStall <= 0 {
		o.WriteStall = d.WriteStall
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = d.IdleTimeout
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = d.MaxHeaderBytes
	}
	if o.PerIP <= 0 {
		o.PerIP = d.PerIP
	}
	return o
}

// NewServer is an http.Server for h with l's limits (nil: Default). h
// must call Admit for each request it lets in (after its authentication,
// or its host check where there is none).
func NewServer(h http.Handler, l *Limits) *http.Server {
	o := l.orDefault()
	t := &tracker{perIP: o.PerIP, waiting: map[string][]*conn{}}
	return &http.Server{
		Handler:           deadlines(h, o),
		ReadHeaderTimeout: o.HeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ConnContext:       t.connContext,
		ConnState:         t.connState,
	}
}

// Admit marks r's connection as authorised: it no longer counts against
// its address's cap, nor is it closed to make room. A request not served
// by NewServer's server is left alone.
func Admit(r *http.Request) {
	if c, ok := r.Context().Value(connKey{}).(*conn); ok {
		c.t.admit(c)
	}
}

type connKey struct{}

type conn struct {
	t        *tracker
	nc       net.Conn
	ip       string
	admitted bool
}

// tracker keeps, per address, its connections not yet admitted, oldest
// first.
type tracker struct {
	perIP   int
	mu      sync.Mutex
	conns   map[net.Conn]*conn
	waiting map[string][]*conn
}

func (t *tracker) connContext(ctx context.Context, nc net.Conn) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conns == nil {
		t.conns = map[net.Conn]*conn{}
	}
	c := t.conns[nc]
	if c == nil {
		ip := nc.RemoteAddr().String()
		if h, _, err := net.SplitHostPort(ip); err == nil {
			ip = h
		}
		c = &conn{t: t, nc: nc, ip: ip}
		t.conns[nc] = c
		t.waiting[ip] = append(t.waiting[ip], c)
		if w := t.waiting[ip]; len(w) > t.perIP {
			oldest := w[0]
			t.waiting[ip] = w[1:]
			oldest.nc.Close()
		}
	}
	return context.WithValue(ctx, connKey{}, c)
}

func (t *tracker) connState(nc net.Conn, s http.ConnState) {
	if s != http.StateClosed && s != http.StateHijacked {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.conns[nc]; c != nil {
		delete(t.conns, nc)
		t.unwait(c)
	}
}

func (t *tracker) admit(c *conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !c.admitted {
		c.admitted = true
		t.unwait(c)
	}
}

// unwait takes c off its address's list (t.mu held).
func (t *tracker) unwait(c *conn) {
	w := t.waiting[c.ip]
	for i, x := range w {
		if x == c {
			w = append(w[:i:i], w[i+1:]...)
			break
		}
	}
	if len(w) == 0 {
		delete(t.waiting, c.ip)
	} else {
		t.waiting[c.ip] = w
	}
}

// deadlines bounds reading each request's body by BodyTimeout and each
// write of its answer by WriteStall.
func deadlines(h http.Handler, o Limits) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			_ = rc.SetReadDeadline(time.Now().Add(o.BodyTimeout))
			r.Body = &bodyReader{ReadCloser: r.Body, rc: rc}
		}
		h.ServeHTTP(&stallWriter{ResponseWriter: w, rc: rc, stall: o.WriteStall}, r)
	})
}

// bodyReader lifts the read deadline once the body is read, so a long
// handler's connection is not timed out under it.
type bodyReader struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

func (b *bodyReader) Close() error { return b.ReadCloser.Close() }

// stallWriter gives each write WriteStall to reach the client.
type stallWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
}

func (s *stallWriter) Write(p []byte) (int, error) {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.stall))
	return s.ResponseWriter.Write(p)
}

func (s *stallWriter) WriteHeader(code int) {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.stall))
	s.ResponseWriter.WriteHeader(code)
}

// Flush lets handlers that assert http.Flusher stream through it.
func (s *stallWriter) Flush() {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.stall))
	_ = s.rc.Flush()
}

func (s *stallWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
