package adb

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
)

// Stream is one open service on a device: bytes both ways until either
// side closes. Reads return io.EOF when the device closes the stream
// normally, and an error wrapping ErrGone when the transport drops. Close
// unblocks pending reads and writes. One goroutine may read while another
// writes; Close may be called from any goroutine.
//
// Through the adb server a dropped transport looks like a normal end (the
// server just closes the socket), so services that can tell (shell v2's
// exit status, sync's DONE) report the drop themselves.
type Stream interface {
	io.ReadWriteCloser
}

// Transport opens services on one device: through the adb server
// (ServerTransport) or straight to an adbd (Direct). Implementations are
// safe for concurrent use; every Open is an independent stream.
type Transport interface {
	// Open opens a service such as "shell,v2,raw:ls" or "sync:". ctx bounds
	// the opening only; close the stream to end it early.
	Open(ctx context.Context, service string) (Stream, error)
	// Features lists the features of the device ("shell_v2", "stat_v2", …).
	Features(ctx context.Context) ([]string, error)
	// Serial names the device in messages.
	Serial() string
}

// ServerTransport reaches a device through the adb server.
type ServerTransport struct {
	c      *Client
	serial string

	mu       sync.Mutex
	features []string
}

var _ Transport = (*ServerTransport)(nil)

// Serial is the device's serial as the server knows it.
func (t *ServerTransport) Serial() string { return t.serial }

// Open switches a new server connection to the device, then to the service.
func (t *ServerTransport) Open(ctx context.Context, service string) (Stream, error) {
	conn, err := t.c.dial(ctx)
	if err != nil {
		return nil, err
	}
	sel := "host:transport:" + t.serial
	if t.serial == "" {
		sel = "host:transport-any"
	}
	if err := conn.request(ctx, sel); err != nil {
		conn.Close()
		return nil, fmt.Errorf("adb: open %q on %s: %w", service, t.name(), err)
	}
	if err := conn.request(ctx, service); err != nil {
		conn.Close()
		return nil, fmt.Errorf("adb: open %q on %s: %w", service, t.name(), err)
	}
	return conn, nil
}

func (t *ServerTransport) name() string {
	if t.serial == "" {
		return "the only device"
	}
	return t.serial
}

// Features asks the server once and remembers the answer.
func (t *ServerTransport) Features(ctx context.Context) ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.features != nil {
		return t.features, nil
	}
	f, err := t.c.Features(ctx, t.serial)
	if err != nil {
		return nil, err
	}
	t.features = append([]string{}, f...)
	return t.features, nil
}

// hasFeature reports whether t advertises f; errors count as absent.
func hasFeature(ctx context.Context, t Transport, f string) bool {
	fs, err := t.Features(ctx)
	return err == nil && slices.Contains(fs, f)
}
