package adb

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/apexagent/apex/adb/proto"
)

// directStream is one multiplexed stream. Flow control follows adb: each
// WRTE we send waits for the device's OKAY, and each WRTE we receive is
// acknowledged when Read has taken it, so a slow reader slows the device
// instead of growing a buffer.
type directStream struct {
	c      *directConn
	local  uint32
	remote uint32 // set before opened is closed

	opened   chan struct{}
	openOnce sync.Once
	ack      chan struct{} // one token per OKAY after opening
	wake     chan struct{} // data or an end arrived

	mu           sync.Mutex
	queue        [][]byte
	cur          []byte // the chunk Read is taking apart
	remoteClosed bool
	localClosed  bool
	lost         bool
	gone         chan struct{} // closed on any end
	goneOnce     sync.Once
}

func newDirectStream(c *directConn, id uint32) *directStream {
	return &directStream{c: c, local: id, opened: make(chan struct{}), ack: make(chan struct{}, 1),
		wake: make(chan struct{}, 1), gone: make(chan struct{})}
}

func (s *directStream) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *directStream) end() { s.goneOnce.Do(func() { close(s.gone) }) }

func (s *directStream) onOkay(remote uint32) {
	first := false
	s.openOnce.Do(func() {
		s.remote = remote
		first = true
		close(s.opened)
	})
	if !first {
		select {
		case s.ack <- struct{}{}:
		default:
		}
	}
}

func (s *directStream) onData(b []byte) {
	s.mu.Lock()
	s.queue = append(s.queue, b)
	s.mu.Unlock()
	s.signal()
}

func (s *directStream) onClose() {
	s.mu.Lock()
	s.remoteClosed = true
	s.mu.Unlock()
	s.end()
	s.signal()
}

func (s *directStream) kill() {
	s.mu.Lock()
	s.lost = true
	s.mu.Unlock()
	s.end()
	s.signal()
}

// Read returns queued data, then io.EOF after the device's CLSE, or an
// ErrGone error if the connection dropped first.
func (s *directStream) Read(p []byte) (int, error) {
	b, err := s.take()
	if err != nil {
		return 0, err
	}
	n := copy(p, b)
	if n < len(b) {
		s.mu.Lock()
		s.cur = b[n:]
		s.mu.Unlock()
	}
	return n, nil
}

// WriteTo hands w each WRTE's payload as it arrives, with no copy through
// a read buffer; an *execOutput keeps the payloads themselves.
func (s *directStream) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for {
		b, err := s.take()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if o, ok := w.(*execOutput); ok {
			o.keep(b)
			n += int64(len(b))
			continue
		}
		m, err := w.Write(b)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
}

// take returns what is left of the chunk Read was taking apart, or the next
// WRTE's payload whole (acknowledged as it is taken, so the device sends
// the next one meanwhile), waiting for one; then io.EOF after the device's
// CLSE, or an ErrGone error if the connection dropped first. The caller
// owns the bytes.
func (s *directStream) take() ([]byte, error) {
	for {
		s.mu.Lock()
		if len(s.cur) > 0 {
			b := s.cur
			s.cur = nil
			s.mu.Unlock()
			return b, nil
		}
		if len(s.queue) > 0 {
			b := s.queue[0]
			s.queue = s.queue[1:]
			ack := !s.remoteClosed && !s.localClosed && !s.lost
			s.mu.Unlock()
			if ack {
				s.c.send(proto.Message{Command: proto.CmdOKAY, Arg0: s.local, Arg1: s.remote})
			}
			if len(b) > 0 {
				return b, nil
			}
			continue
		}
		switch {
		case s.localClosed:
			s.mu.Unlock()
			return nil, errors.New("adb: read from closed stream")
		case s.lost:
			s.mu.Unlock()
			return nil, s.c.failure()
		case s.remoteClosed:
			s.mu.Unlock()
			return nil, io.EOF
		}
		s.mu.Unlock()
		<-s.wake
	}
}

// Write sends p in WRTEs no larger than the device's max payload, waiting
// for the OKAY of each before the next.
func (s *directStream) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if err := s.writable(); err != nil {
			return written, err
		}
		n := min(len(p), s.c.maxData)
		if err := s.c.send(proto.Message{Command: proto.CmdWRTE, Arg0: s.local, Arg1: s.remote, Data: p[:n]}); err != nil {
			return written, err
		}
		select {
		case <-s.ack:
		case <-s.gone:
			if err := s.writable(); err != nil {
				return written, err
			}
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

func (s *directStream) writable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.lost:
		return s.c.failure()
	case s.localClosed:
		return errors.New("adb: write to closed stream")
	case s.remoteClosed:
		return fmt.Errorf("adb: device closed the stream: %w", io.ErrClosedPipe)
	}
	return nil
}

// Close sends CLSE (once) and wakes any pending Read or Write.
func (s *directStream) Close() error {
	s.mu.Lock()
	if s.localClosed {
		s.mu.Unlock()
		return nil
	}
	s.localClosed = true
	tell := !s.remoteClosed && !s.lost
	s.mu.Unlock()
	select {
	case <-s.opened:
	default:
		tell = false
	}
	s.c.forget(s.local)
	s.end()
	s.signal()
	if tell {
		s.c.send(proto.Message{Command: proto.CmdCLSE, Arg0: s.local, Arg1: s.remote})
	}
	return nil
}
