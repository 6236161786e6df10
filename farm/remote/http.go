package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/lease"
	"github.com/nats-io/nats.go"
)

// HTTPSubject is where the host of device id answers HTTP requests for the
// device's playground, carried over NATS: the host opens no port.
func HTTPSubject(id string) string { return "farm.http." + farm.Key(id) }

// MaxRequestBody bounds a proxied request's body.
const MaxRequestBody = 512 << 10

// chunkSize bounds one message of a response body (NATS's default
// payload limit is 1 MiB).
const chunkSize = 64 << 10

// recheck is how often the host checks the fence of a long response (a
// stream) again; a stream outlives its lease by at most this.
const recheck = 2 * time.Second

// httpRequest is a proxied request. The head of the answer is the reply to
// the request; the body follows, in order, on Body, ending with a message
// whose header End is set. A message on Cancel ends it early.
type httpRequest struct {
	Fence  uint64      `json:"fence"`
	Key    string      `json:"key"`
	Method string      `json:"method"`
	Path   string      `json:"path"`
	Query  string      `json:"query,omitempty"`
	Header http.Header `json:"header,omitempty"`
	Body   []byte      `json:"body,omitempty"`
	Chunks string      `json:"chunks"`
	Cancel string      `json:"cancel"`
	// WebSocket asks to open a WebSocket (ws.go); Cancel carries its
	// messages up.
	WebSocket bool `json:"websocket,omitempty"`
}

type httpHead struct {
	Status int         `json:"status"`
	Header http.Header `json:"header,omitempty"`
}

const endHeader = "Apex-End"

// Proxy sends r to the playground of device id on its host, under the
// lease rec (its fence and key), and copies the answer (streamed, for
// MJPEG) to w. The caller strips what the host must not see (cookies,
// tickets, tokens) first.
func Proxy(nc *nats.Conn, id string, rec lease.Record, path string, w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBody))
	if err != nil {
		http.Error(w, "request body: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	req := httpRequest{Fence: rec.Fence, Key: rec.Key, Method: r.Method, Path: path, Query: r.URL.RawQuery, Header: r.Header, Body: body}
	head, sub, ok := ask(r.Context(), nc, id, &req, w)
	if !ok {
		return
	}
	defer sub.Unsubscribe()
	defer nc.Publish(req.Cancel, nil) // a client gone ends a stream on the host
	copyAnswer(r.Context(), sub, head, w)
}

// ask sends req to the host of device id and returns the head of its
// answer, and the subscription on which what follows arrives (req.Chunks);
// on failure it has answered w.
func ask(ctx context.Context, nc *nats.Conn, id string, req *httpRequest, w http.ResponseWriter) (httpHead, *nats.Subscription, bool) {
	var head httpHead
	req.Chunks = nc.NewRespInbox()
	req.Cancel = req.Chunks + ".cancel"
	sub, err := nc.SubscribeSync(req.Chunks)
	if err != nil {
		http.Error(w, "farm: "+err.Error(), http.StatusBadGateway)
		return head, nil, false
	}
	data, _ := json.Marshal(req)
	hctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	m, err := nc.RequestWithContext(hctx, HTTPSubject(id), data)
	if err == nil {
		err = json.Unmarshal(m.Data, &head)
	}
	if err != nil {
		sub.Unsubscribe()
		http.Error(w, fmt.Sprintf("farm device %s: its host does not answer (%v): is it up?", id, err), http.StatusBadGateway)
		return head, nil, false
	}
	return head, sub, true
}

// copyAnswer writes the head and the body that follows on sub to w.
func copyAnswer(ctx context.Context, sub *nats.Subscription, head httpHead, w http.ResponseWriter) {
	for k, v := range head.Header {
		w.Header()[k] = v
	}
	// A proxy between here and the browser must not buffer or recompress
	// a stream (nor keep a screenshot).
	w.Header().Set("Cache-Control", "no-store, no-transform")
	w.WriteHeader(head.Status)
	fl, _ := w.(http.Flusher)
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil || m.Header.Get(endHeader) != "" {
			return
		}
		if _, err := w.Write(m.Data); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}

// ServeHTTP answers proxied requests for device id with h until ctx ends.
// Each request's fence is checked against the device's lease first (and
// again every few seconds while a stream lasts).
func ServeHTTP(ctx context.Context, nc *nats.Conn, leases *lease.Leaser, id string, h http.Handler, log *slog.Logger) error {
	sub, err := nc.Subscribe(HTTPSubject(id), func(m *nats.Msg) { go serveOne(ctx, nc, leases, id, h, m, log) })
	if err != nil {
		return fmt.Errorf("remote: serve http for %s: %w", id, err)
	}
	context.AfterFunc(ctx, func() { sub.Unsubscribe() })
	return nil
}

func serveOne(ctx context.Context, nc *nats.Conn, leases *lease.Leaser, id string, h http.Handler, m *nats.Msg, log *slog.Logger) {
	var req httpRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		data, _ := json.Marshal(httpHead{Status: http.StatusBadRequest})
		m.Respond(data)
		return
	}
	w := &chunkWriter{nc: nc, m: m, chunks: req.Chunks, header: http.Header{}}
	defer w.end()
	if err := leases.Check(ctx, id, req.Fence, req.Key); err != nil {
		code := http.StatusServiceUnavailable
		switch {
		case errors.Is(err, lease.ErrStaleFence):
			code = http.StatusConflict
		case errors.Is(err, lease.ErrBadKey):
			code = http.StatusForbidden
		}
		http.Error(w, err.Error(), code)
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !req.WebSocket { // a socket's Cancel subject carries its messages up (ws.go)
		csub, err := nc.Subscribe(req.Cancel, func(*nats.Msg) { cancel() })
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		defer csub.Unsubscribe()
	}
	go farm.Every(rctx, recheck, func() {
		if err := leases.Check(rctx, id, req.Fence, req.Key); err != nil && rctx.Err() == nil {
			log.Info("stream ends with its lease", "device", id, "err", err)
			cancel()
		}
	})
	u := req.Path
	if req.Query != "" {
		u += "?" + req.Query
	}
	hr, err := http.NewRequestWithContext(rctx, req.Method, u, bytes.NewReader(req.Body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	hr.Header = req.Header
	hr.Host = "127.0.0.1" // the playground answers its own machine; auth was the front door's
	hr.RemoteAddr = "127.0.0.1:0"
	hr.RequestURI = u
	hr.ContentLength = int64(len(req.Body))
	if req.WebSocket {
		serveWebSocket(rctx, nc, h, req, u, w)
		return
	}
	h.ServeHTTP(w, hr)
}

// chunkWriter sends a handler's answer back: the head as the reply, the
// body as messages on the chunks subject.
type chunkWriter struct {
	nc     *nats.Conn
	m      *nats.Msg
	chunks string
	header http.Header

	mu     sync.Mutex
	status int
	buf    []byte
}

func (w *chunkWriter) Header() http.Header { return w.header }

func (w *chunkWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.head(code)
}

func (w *chunkWriter) head(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	data, _ := json.Marshal(httpHead{Status: code, Header: w.header.Clone()})
	w.m.Respond(data)
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.head(http.StatusOK)
	w.buf = append(w.buf, p...)
	for len(w.buf) >= chunkSize {
		if err := w.send(w.buf[:chunkSize]); err != nil {
			return 0, err
		}
		w.buf = w.buf[chunkSize:]
	}
	return len(p), nil
}

func (w *chunkWriter) send(b []byte) error {
	return w.nc.Publish(w.chunks, bytes.Clone(b))
}

// Flush sends what is buffered: a stream's frame goes out whole.
func (w *chunkWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.head(http.StatusOK)
	if len(w.buf) > 0 {
		w.send(w.buf)
		w.buf = w.buf[:0]
	}
}

func (w *chunkWriter) end() {
	w.Flush()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status < 0 {
		return // a WebSocket's relay sent its own end
	}
	msg := nats.NewMsg(w.chunks)
	msg.Header.Set(endHeader, strconv.Itoa(w.status))
	w.nc.PublishMsg(msg)
}
