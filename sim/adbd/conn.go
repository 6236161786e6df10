package adbd

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"

	"github.com/apexagent/apex/adb/proto"
)

// AUTH message types (arg0 of AUTH).
const (
	authToken        = 1
	authSignature    = 2
	authRSAPublicKey = 3
)

// conn is one host connection. Its reader goroutine never blocks on a
// stream: messages out go through a queue drained by a writer goroutine,
// and data in is buffered per stream until the service reads it (the OKAY
// that lets the host send more goes out at that moment).
type conn struct {
	s      *Server
	nc     net.Conn
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	maxData int
	online  bool
	streams map[uint32]*stream
	nextID  uint32
	outQ    [][]byte
	outErr  error
	outWake chan struct{}
	// wmu serialises writes on nc: the writer goroutine's queue and the
	// services' data (see write).
	wmu sync.Mutex

	services sync.WaitGroup
}

func newConn(s *Server, nc net.Conn) *conn {
	ctx, cancel := context.WithCancel(s.ctx)
	return &conn{s: s, nc: nc, ctx: ctx, cancel: cancel, maxData: s.opts.MaxData,
		streams: map[uint32]*stream{}, outWake: make(chan struct{}, 1)}
}

func (c *conn) close() {
	c.cancel()
	c.nc.Close()
}

func (c *conn) serve() {
	defer func() {
		c.close()
		// hangup forgets the stream, which takes c.mu: collect first.
		c.mu.Lock()
		open := make([]*stream, 0, len(c.streams))
		for _, st := range c.streams {
			open = append(open, st)
		}
		c.mu.Unlock()
		for _, st := range open {
			st.hangup()
		}
		c.services.Wait()
	}()
	go c.writeLoop()
	remote := c.nc.RemoteAddr().String()
	// One read takes a message's header and what follows it (the OKAYs
	// and CLSEs in between a screenshot's WRTEs), not one read per part.
	r := bufio.NewReader(c.nc)
	for {
		m, err := proto.ReadMessage(r, proto.MaxPayload)
		if err != nil {
			if c.ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.s.log.Warn("adbd: closing connection after a bad message", "remote", remote, "err", err)
			}
			return
		}
		if err := c.handle(m); err != nil {
			c.s.log.Warn("adbd: closing connection", "remote", remote, "msg", m.String(), "err", err)
			return
		}
	}
}

func (c *conn) handle(m proto.Message) error {
	switch m.Command {
	case proto.CmdCNXN:
		c.mu.Lock()
		c.maxData = c.s.opts.MaxData
		if m.Arg1 > 0 && int(m.Arg1) < c.maxData {
			c.maxData = int(m.Arg1)
		}
		c.mu.Unlock()
		if c.s.opts.Auth {
			c.challenge()
			return nil
		}
		c.mu.Lock()
		c.online = true
		c.mu.Unlock()
		c.send(proto.Message{Command: proto.CmdCNXN, Arg0: proto.Version, Arg1: uint32(c.s.opts.MaxData), Data: []byte(c.s.banner())})
	case proto.CmdAUTH:
		// A signature is never accepted and a public key waits for a user
		// who will not come: the host stays "unauthorized", as with a real
		// phone whose owner ignores the dialog.
		if c.s.opts.Auth && m.Arg0 == authSignature {
			c.challenge()
		}
	case proto.CmdOPEN:
		c.open(m.Arg0, strings.TrimRight(string(m.Data), "\x00"))
	case proto.CmdOKAY:
		if st := c.stream(m.Arg1); st != nil {
			st.okay(m.Arg0)
		}
	case proto.CmdWRTE:
		st := c.stream(m.Arg1)
		if st == nil {
			c.send(proto.Message{Command: proto.CmdCLSE, Arg0: 0, Arg1: m.Arg0})
			return nil
		}
		st.push(m.Data)
	case proto.CmdCLSE:
		if st := c.stream(m.Arg1); st != nil {
			st.hangup()
		}
	}
	return nil
}

func (c *conn) challenge() {
	token := make([]byte, 20)
	rand.Read(token)
	c.send(proto.Message{Command: proto.CmdAUTH, Arg0: authToken, Data: token})
}

func (c *conn) open(remote uint32, service string) {
	c.mu.Lock()
	online := c.online
	c.mu.Unlock()
	if !online || remote == 0 {
		c.send(proto.Message{Command: proto.CmdCLSE, Arg1: remote})
		return
	}
	run := c.s.service(service)
	if run == nil {
		c.s.log.Info("adbd: refusing unknown service", "service", service)
		c.send(proto.Message{Command: proto.CmdCLSE, Arg1: remote})
		return
	}
	c.mu.Lock()
	c.nextID++
	st := newStream(c, c.nextID, remote)
	c.streams[st.local] = st
	c.services.Add(1)
	c.mu.Unlock()
	c.send(proto.Message{Command: proto.CmdOKAY, Arg0: st.local, Arg1: remote})
	go func() {
		defer c.services.Done()
		defer st.Close()
		run(st.ctx, st)
	}()
}

// dial opens a stream to a service of the host (`adb reverse` forwards
// device-side connections this way: OPEN "tcp:PORT" towards the host). It
// returns once the host accepted it.
func (c *conn) dial(ctx context.Context, service string) (*stream, error) {
	c.mu.Lock()
	c.nextID++
	st := newStream(c, c.nextID, 0)
	st.opened = make(chan struct{})
	c.streams[st.local] = st
	c.mu.Unlock()
	c.send(proto.Message{Command: proto.CmdOPEN, Arg0: st.local, Data: append([]byte(service), 0)})
	select {
	case <-st.opened:
		return st, nil
	case <-st.ctx.Done():
		st.Close()
		return nil, fmt.Errorf("adbd: the host refused %q (is anything listening there on the host?)", service)
	case <-ctx.Done():
		st.Close()
		return nil, ctx.Err()
	}
}

func (c *conn) stream(local uint32) *stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.streams[local]
}

func (c *conn) forget(local uint32) {
	c.mu.Lock()
	delete(c.streams, local)
	c.mu.Unlock()
}

func (c *conn) chunkSize() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxData
}

// send queues m for the writer goroutine; it never blocks.
func (c *conn) send(m proto.Message) {
	c.mu.Lock()
	if c.outErr == nil {
		c.outQ = append(c.outQ, m.Encode(nil))
	}
	c.mu.Unlock()
	select {
	case c.outWake <- struct{}{}:
	default:
	}
}

// write sends m from the calling goroutine, after what send queued before
// it: a WRTE's data goes to the socket as it is, not copied into a
// message, and the caller's buffer is free again when write returns.
func (c *conn) write(m proto.Message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.flushLocked(); err != nil {
		return err
	}
	h := m.Header()
	bufs := net.Buffers{h[:], m.Data}
	if _, err := bufs.WriteTo(c.nc); err != nil {
		return c.writeFailed(err)
	}
	return nil
}

func (c *conn) writeLoop() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.outWake:
		}
		c.wmu.Lock()
		err := c.flushLocked()
		c.wmu.Unlock()
		if err != nil {
			return
		}
	}
}

// flushLocked writes what send queued; c.wmu is held.
func (c *conn) flushLocked() error {
	c.mu.Lock()
	q, err := c.outQ, c.outErr
	c.outQ = nil
	c.mu.Unlock()
	if err != nil {
		return err
	}
	for _, b := range q {
		if _, err := c.nc.Write(b); err != nil {
			return c.writeFailed(err)
		}
	}
	return nil
}

// writeFailed records the first write error and closes the connection.
func (c *conn) writeFailed(err error) error {
	c.mu.Lock()
	if c.outErr == nil {
		c.outErr = err
	}
	err = c.outErr
	c.mu.Unlock()
	c.close()
	return err
}
