package remote_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/remote"
	"github.com/coder/websocket"
	"github.com/nats-io/nats.go"
)

// TestWebSocketRelay: a WebSocket relayed over NATS carries the viewer's
// message up and the handler's messages down, in order and whole (those
// over a NATS part too), and the host closes it when the lease's fence
// goes stale.
func TestWebSocketRelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nc, leases, l := leased(ctx, t)
	const n = 300
	msg := func(i int) []byte {
		size := 16
		if i%50 == 0 {
			size = 200 << 10 // several parts
		}
		b := bytes.Repeat([]byte{byte(i)}, size)
		binary.BigEndian.PutUint64(b, uint64(i))
		return b
	}
	// The playground's side: echo the first message, send n, then wait.
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		typ, hello, err := c.Read(r.Context())
		if err != nil || c.Write(r.Context(), typ, append([]byte("echo "), hello...)) != nil {
			return
		}
		for i := range n {
			if c.Write(r.Context(), websocket.MessageBinary, msg(i)) != nil {
				return
			}
		}
		c.Read(r.Context()) // until the socket ends
	})
	hctx, hcancel := context.WithCancel(ctx)
	defer hcancel()
	if err := remote.ServeHTTP(hctx, nc, leases, "h1/d1", h, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	door := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		remote.ProxyWebSocket(nc, "h1/d1", l.Record(), "/ws", w, r, r, l.Done())
	}))
	defer door.Close()

	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(door.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	if err := c.Write(ctx, websocket.MessageText, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if typ, got, err := c.Read(ctx); err != nil || typ != websocket.MessageText || string(got) != "echo hello" {
		t.Fatalf("the echo: %v %q %v", typ, got, err)
	}
	for i := range n {
		typ, got, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if typ != websocket.MessageBinary || !bytes.Equal(got, msg(i)) {
			t.Fatalf("message %d: %v of %d bytes (seq %d), want binary of %d", i, typ, len(got), binary.BigEndian.Uint64(got), len(msg(i)))
		}
	}

	// An admin breaks the lease: the host ends the socket at its next check.
	if err := leases.Break(ctx, "h1/d1", "admin"); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "lease ended") {
		t.Errorf("after the lease was broken: %v, want the socket closed as the lease ended", err)
	}
}

// leased starts a farm and leases device h1/d1 on it.
func leased(ctx context.Context, t *testing.T) (*nats.Conn, *lease.Leaser, *lease.Lease) {
	t.Helper()
	p := farmtest.Start(ctx, t, 0)
	nc, js := p.Conn()
	leases, err := lease.New(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	l, err := leases.Acquire(ctx, lease.Record{Resource: "h1/d1", Holder: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return nc, leases, l
}

// TestWebSocketFlowControl: the host sends a socket's parts at most 64
// ahead of the door's acknowledgements. Playing the door on the wire
// (the request, then no acks), the next message after 64 parts is the
// host's ping, not a 65th part, though the playground has hundreds ready;
// an ack lets the rest come.
func TestWebSocketFlowControl(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nc, leases, l := leased(ctx, t)
	const n = 500
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for i := range n {
			if c.Write(r.Context(), websocket.MessageBinary, []byte{byte(i)}) != nil {
				return
			}
		}
		c.Read(r.Context())
	})
	hctx, hcancel := context.WithCancel(ctx)
	defer hcancel()
	if err := remote.ServeHTTP(hctx, nc, leases, "h1/d1", h, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	down := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(down)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := json.Marshal(map[string]any{"fence": l.Fence(), "key": l.Record().Key, "method": "GET", "path": "/ws", "chunks": down, "cancel": down + ".up", "websocket": true})
	head, err := nc.RequestWithContext(ctx, remote.HTTPSubject("h1/d1"), req)
	if err != nil || !strings.Contains(string(head.Data), `"status":101`) {
		t.Fatalf("open the socket: %v %s", err, head.Data)
	}
	parts := 0
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			t.Fatalf("after %d parts: %v", parts, err)
		}
		if m.Header.Get("Apex-Ping") != "" {
			if parts == 64 {
				break
			}
			continue // a busy host's ping before the window filled
		}
		if parts++; parts > 64 {
			t.Fatalf("the host sent a part past the window of 64 with no ack")
		}
	}
	ack := nats.NewMsg(down + ".up")
	ack.Header.Set("Apex-Ack", strconv.Itoa(n))
	if err := nc.PublishMsg(ack); err != nil {
		t.Fatal(err)
	}
	for parts < n {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			t.Fatalf("after the ack, %d parts: %v", parts, err)
		}
		if m.Header.Get("Apex-Ping") == "" {
			parts++
		}
	}
}
