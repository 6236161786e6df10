package remote

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apexagent/apex/farm/lease"
	"github.com/coder/websocket"
	"github.com/nats-io/nats.go"
)

// A WebSocket through the front door: the door asks the host (the request
// on HTTPSubject with WebSocket set); the host opens the socket on its
// playground in memory and answers 101, or the playground's refusal (a
// 409, say) as a proxied answer. Then each message travels as NATS
// messages, down (host → door) on the request's Chunks subject and up
// (door → host) on its Cancel subject, split into parts of chunkSize.
// The door acknowledges what it delivered; the host sends at most window
// parts ahead of that, so a slow viewer slows the host's reading (and the
// playground's stream skips frames for it, as for a viewer on its own
// socket). The host pings when it has been quiet; the door ends a socket
// whose host went silent, and a socket ends with its lease.
const (
	wsHeader   = "Apex-WS"   // "t" text, "b" binary: a message's part
	moreHeader = "Apex-More" // more parts of this message follow
	ackHeader  = "Apex-Ack"  // up: parts delivered so far
	pingHeader = "Apex-Ping" // down: the host is alive
	// window is how many parts the host sends ahead of the door's acks.
	window = 64
	// ackEvery is how often (in parts) the door acknowledges.
	ackEvery = window / 4
	// ping is the host's longest silence; the door gives up after
	// three.
	ping = 5 * time.Second
	// wsReadLimit bounds one message (an H.264 key frame fits).
	wsReadLimit = 16 << 20
)

// IsWebSocket reports whether r asks to open a WebSocket.
func IsWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// ProxyWebSocket opens the WebSocket r asks for on the playground of
// device id on its host, under the lease fence, and relays its messages
// until either side closes it or ended is closed (the lease ended). up is
// r as the host may see it (stripped of tickets, cookies and tokens); r
// itself is what the browser sent, whose origin the door checks.
func ProxyWebSocket(nc *nats.Conn, id string, rec lease.Record, path string, w http.ResponseWriter, r, up *http.Request, ended <-chan struct{}) {
	req := httpRequest{Fence: rec.Fence, Key: rec.Key, Method: http.MethodGet, Path: path, Query: up.URL.RawQuery, Header: handshakeless(up.Header), WebSocket: true}
	head, sub, ok := ask(r.Context(), nc, id, &req, w)
	if !ok {
		return
	}
	defer sub.Unsubscribe()
	defer nc.PublishMsg(endMsg(req.Cancel, websocket.StatusGoingAway, "the viewer left"))
	ctx := r.Context()
	if head.Status != http.StatusSwitchingProtocols {
		copyAnswer(ctx, sub, head, w) // the playground's refusal, as it said it
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(wsReadLimit)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-ended:
			c.Close(websocket.StatusPolicyViolation, "the device's lease ended")
			stop()
		case <-ctx.Done():
		}
	}()
	go func() { // up: the browser's messages
		defer stop()
		for {
			typ, p, err := c.Read(ctx)
			if err != nil {
				code, reason := closeOf(err)
				nc.PublishMsg(endMsg(req.Cancel, code, reason))
				return
			}
			if publishParts(nc, req.Cancel, typ, p, nil) != nil {
				return
			}
		}
	}()
	var msg []byte
	delivered := 0
	for {
		pctx, cancel := context.WithTimeout(ctx, 3*ping)
		m, err := sub.NextMsgWithContext(pctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				c.Close(websocket.StatusGoingAway, "the device's host went silent")
			}
			return
		}
		if end := m.Header.Get(endHeader); end != "" {
			code, _ := strconv.Atoi(end)
			c.Close(websocket.StatusCode(code), string(m.Data))
			return
		}
		if m.Header.Get(pingHeader) != "" {
			continue
		}
		if delivered++; delivered%ackEvery == 0 {
			ack := nats.NewMsg(req.Cancel)
			ack.Header.Set(ackHeader, strconv.Itoa(delivered))
			nc.PublishMsg(ack)
		}
		msg = append(msg, m.Data...)
		if m.Header.Get(moreHeader) != "" {
			continue
		}
		typ := websocket.MessageBinary
		if m.Header.Get(wsHeader) == "t" {
			typ = websocket.MessageText
		}
		if err := c.Write(ctx, typ, msg); err != nil {
			return
		}
		msg = msg[:0]
	}
}

// handshakeless is h without the headers of a WebSocket handshake (the
// host's own dial writes its own).
func handshakeless(h http.Header) http.Header {
	h = h.Clone()
	for _, k := range []string{"Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Extensions", "Sec-Websocket-Accept"} {
		h.Del(k)
	}
	return h
}

// publishParts sends one message in parts; room, when set, waits for
// room in the window before each part.
func publishParts(nc *nats.Conn, subj string, typ websocket.MessageType, p []byte, room func() error) error {
	kind := "b"
	if typ == websocket.MessageText {
		kind = "t"
	}
	for {
		n := min(len(p), chunkSize)
		m := nats.NewMsg(subj)
		m.Header.Set(wsHeader, kind)
		if n < len(p) {
			m.Header.Set(moreHeader, "1")
		}
		m.Data = p[:n]
		if room != nil {
			if err := room(); err != nil {
				return err
			}
		}
		if err := nc.PublishMsg(m); err != nil {
			return err
		}
		if p = p[n:]; len(p) == 0 {
			return nil
		}
	}
}

func endMsg(subj string, code websocket.StatusCode, reason string) *nats.Msg {
	m := nats.NewMsg(subj)
	m.Header.Set(endHeader, strconv.Itoa(int(code)))
	m.Data = []byte(reason)
	return m
}

// closeOf is the close code and reason err carries, for the other side.
func closeOf(err error) (websocket.StatusCode, string) {
	var ce websocket.CloseError
	if errors.As(err, &ce) && ce.Code != websocket.StatusNoStatusRcvd && ce.Code != websocket.StatusAbnormalClosure {
		return ce.Code, ce.Reason // a code that may be sent on
	}
	if errors.As(err, &ce) && ce.Code == websocket.StatusNoStatusRcvd {
		return websocket.StatusNormalClosure, ""
	}
	return websocket.StatusGoingAway, "the link broke"
}

// serveWebSocket opens the WebSocket req asks for on h (in memory: the
// host opens no port) and relays its messages over NATS until either side
// closes it or ctx ends (the fence went stale).
func serveWebSocket(ctx context.Context, nc *nats.Conn, h http.Handler, req httpRequest, u string, w *chunkWriter) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	ln := newPipeListener()
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer srv.Close()
	c, resp, err := websocket.Dial(ctx, "ws://127.0.0.1"+u, &websocket.DialOptions{HTTPHeader: req.Header,
		HTTPClient: &http.Client{Transport: &http.Transport{DialContext: ln.dial}}, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		if resp == nil {
			http.Error(w, "the playground's WebSocket: "+err.Error(), http.StatusBadGateway)
			return
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(wsReadLimit)
	// The answer's head only: the end of the socket is an end message.
	w.WriteHeader(http.StatusSwitchingProtocols)
	w.mu.Lock()
	w.status = -1 // nothing more goes out through w
	w.mu.Unlock()

	var acked atomic.Int64
	room := make(chan struct{}, 1)
	var closeOnce sync.Once
	end := func(code websocket.StatusCode, reason string) {
		closeOnce.Do(func() { nc.PublishMsg(endMsg(req.Chunks, code, reason)) })
	}
	usub, err := nc.Subscribe(req.Cancel, func(m *nats.Msg) {
		switch {
		case m.Header.Get(ackHeader) != "":
			n, _ := strconv.Atoi(m.Header.Get(ackHeader))
			acked.Store(int64(n))
			select {
			case room <- struct{}{}:
			default:
			}
		case m.Header.Get(endHeader) != "":
			code, _ := strconv.Atoi(m.Header.Get(endHeader))
			c.Close(websocket.StatusCode(code), string(m.Data))
			stop()
		case m.Header.Get(wsHeader) != "":
			typ := websocket.MessageBinary
			if m.Header.Get(wsHeader) == "t" {
				typ = websocket.MessageText
			}
			// The door's messages are small (a page's requests): one part each.
			c.Write(ctx, typ, m.Data)
		}
	})
	if err != nil {
		return
	}
	defer usub.Unsubscribe()
	var sent int64
	wait := func() error {
		for sent-acked.Load() >= window {
			select {
			case <-room:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		sent++
		return nil
	}
	go func() { // pings while quiet
		t := time.NewTicker(ping)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				m := nats.NewMsg(req.Chunks)
				m.Header.Set(pingHeader, "1")
				nc.PublishMsg(m)
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		typ, p, err := c.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				end(websocket.StatusPolicyViolation, "the device's lease ended")
			} else {
				end(closeOf(err))
			}
			return
		}
		if err := publishParts(nc, req.Chunks, typ, p, wait); err != nil {
			end(websocket.StatusGoingAway, "the device's lease ended")
			return
		}
	}
}

// pipeListener serves a handler over in-memory connections.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return loopback }

var loopback = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	a, b := net.Pipe()
	select {
	case l.conns <- loopbackConn{b}:
		return a, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// loopbackConn is the playground's end: its peer is on this machine.
type loopbackConn struct{ net.Conn }

func (loopbackConn) RemoteAddr() net.Addr { return loopback }
