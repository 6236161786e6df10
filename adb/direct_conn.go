package adb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/apexagent/apex/adb/proto"
)

// directConn is one live TCP connection to an adbd and its streams.
type directConn struct {
	nc      net.Conn
	r       *bufio.Reader // nc's messages: one read takes a header and what follows it
	addr    string
	wto     time.Duration
	log     *slog.Logger
	banner  proto.Banner
	maxData int

	wmu sync.Mutex // serialises whole messages on nc

	mu      sync.Mutex
	streams map[uint32]*directStream
	nextID  uint32
	err     error
	done    chan struct{}
}

func (c *directConn) dead() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// send writes one message; a write that cannot finish in time kills the
// connection, since the peer has stopped reading.
func (c *directConn) send(m proto.Message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.dead() {
		return c.failure()
	}
	c.nc.SetWriteDeadline(time.Now().Add(c.wto))
	if err := proto.WriteMessage(c.nc, m); err != nil {
		c.fail(fmt.Errorf("write %s: %v", m, err))
		return c.failure()
	}
	return nil
}

// failure is the error streams see once the connection is dead.
func (c *directConn) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Errorf("%w: connection to %s lost: %v", ErrGone, c.addr, c.err)
}

// fail marks the connection dead once and wakes every stream.
func (c *directConn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	streams := c.streams
	c.streams = map[uint32]*directStream{}
	close(c.done)
	c.mu.Unlock()
	c.nc.Close()
	c.log.Debug("adb direct connection lost", "addr", c.addr, "err", err)
	for _, s := range streams {
		s.kill()
	}
}

// readLoop dispatches messages to streams. It never blocks on a stream:
// data is queued and acknowledged when the stream's reader takes it.
func (c *directConn) readLoop() {
	for {
		m, err := proto.ReadMessage(c.r, proto.MaxPayload)
		if err != nil {
			c.fail(err)
			return
		}
		switch m.Command {
		case proto.CmdOKAY, proto.CmdWRTE, proto.CmdCLSE:
			c.mu.Lock()
			s := c.streams[m.Arg1]
			if m.Command == proto.CmdCLSE && s != nil {
				delete(c.streams, m.Arg1)
			}
			c.mu.Unlock()
			if s == nil {
				if m.Command != proto.CmdCLSE {
					// A stream we gave up on (cancelled open, or closed while
					// data was in flight): tell the device to drop it.
					c.send(proto.Message{Command: proto.CmdCLSE, Arg0: m.Arg1, Arg1: m.Arg0})
				}
				continue
			}
			switch m.Command {
			case proto.CmdOKAY:
				s.onOkay(m.Arg0)
			case proto.CmdWRTE:
				s.onData(m.Data)
			case proto.CmdCLSE:
				s.onClose()
			}
		case proto.CmdAUTH:
			c.fail(errors.New("device asked for authentication mid-session"))
			return
		}
	}
}

// open sends OPEN and waits for OKAY (accepted) or CLSE (refused).
func (c *directConn) open(ctx context.Context, service string) (Stream, error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.failure()
	}
	id := c.nextID
	c.nextID++
	s := newDirectStream(c, id)
	c.streams[id] = s
	c.mu.Unlock()

	if err := c.send(proto.Message{Command: proto.CmdOPEN, Arg0: id, Data: append([]byte(service), 0)}); err != nil {
		return nil, fmt.Errorf("adb: open %q on %s: %w", service, c.addr, err)
	}
	select {
	case <-s.opened:
		return s, nil
	case <-s.gone:
		select {
		case <-s.opened:
			// OKAY then CLSE before this woke (a command with no
			// output): opened, and its end is Read's io.EOF.
			return s, nil
		default:
		}
		if c.dead() {
			return nil, fmt.Errorf("adb: open %q on %s: %w", service, c.addr, c.failure())
		}
		return nil, fmt.Errorf("adb: %s refused service %q (closed it without opening)", c.addr, service)
	case <-ctx.Done():
		s.Close()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// An adbd that cannot even answer OPEN in time is not healthy:
			// drop the connection so the next call dials afresh.
			c.fail(fmt.Errorf("no answer to OPEN %q", service))
		}
		return nil, fmt.Errorf("adb: open %q on %s: %w", service, c.addr, ctx.Err())
	}
}

func (c *directConn) forget(id uint32) {
	c.mu.Lock()
	delete(c.streams, id)
	c.mu.Unlock()
}
