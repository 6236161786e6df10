package adbd

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/apexagent/apex/adb/proto"
)

// errStreamClosed is returned by writes after the host closed the stream
// or the connection went away.
var errStreamClosed = errors.New("adbd: stream closed by the host")

// stream is one service stream. Read returns what the host wrote (io.EOF
// once the host closed it); Write sends WRTEs of at most maxdata bytes,
// each after the host's OKAY for the previous one.
type stream struct {
	c             *conn
	local, remote uint32
	ctx           context.Context
	cancel        context.CancelFunc

	mu   sync.Mutex
	in   [][]byte
	eof  bool
	wake chan struct{}
	ack  chan struct{}
	wmu  sync.Mutex // one Write at a time keeps WRTE/OKAY in lockstep
	// unacked is set while the host has not yet acknowledged the last
	// WRTE (under wmu).
	unacked bool
	closed  sync.Once
	// opened is closed when the host accepts a stream the device opened
	// (see conn.dial); nil for streams the host opened.
	opened chan struct{}
}

func newStream(c *conn, local, remote uint32) *stream {
	ctx, cancel := context.WithCancel(c.ctx)
	return &stream{c: c, local: local, remote: remote, ctx: ctx, cancel: cancel,
		wake: make(chan struct{}, 1), ack: make(chan struct{}, 1)}
}

// push is called by the connection reader with a WRTE's payload.
func (st *stream) push(data []byte) {
	if len(data) == 0 {
		st.c.send(proto.Message{Command: proto.CmdOKAY, Arg0: st.local, Arg1: st.remote})
		return
	}
	st.mu.Lock()
	st.in = append(st.in, data)
	st.mu.Unlock()
	signal(st.wake)
}

// okay is called by the connection reader on the host's OKAY: the
// acceptance of a stream the device opened, or the ack of a WRTE.
func (st *stream) okay(remote uint32) {
	st.mu.Lock()
	opening := st.opened != nil && st.remote == 0
	if opening {
		st.remote = remote
	}
	st.mu.Unlock()
	if opening {
		close(st.opened)
		return
	}
	signal(st.ack)
}

// hangup is called when the host closes the stream or the connection dies.
func (st *stream) hangup() {
	st.mu.Lock()
	st.eof = true
	st.mu.Unlock()
	st.cancel()
	st.c.forget(st.local)
	signal(st.wake)
}

func (st *stream) Read(p []byte) (int, error) {
	for {
		st.mu.Lock()
		if len(st.in) > 0 {
			n := copy(p, st.in[0])
			st.in[0] = st.in[0][n:]
			done := len(st.in[0]) == 0
			if done {
				st.in = st.in[1:]
			}
			st.mu.Unlock()
			if done {
				st.c.send(proto.Message{Command: proto.CmdOKAY, Arg0: st.local, Arg1: st.remote})
			}
			return n, nil
		}
		eof := st.eof
		st.mu.Unlock()
		if eof {
			return 0, io.EOF
		}
		select {
		case <-st.wake:
		case <-st.ctx.Done():
			st.mu.Lock()
			st.eof = true
			st.mu.Unlock()
		}
	}
}

// Write sends p in WRTEs, each after the host's OKAY for the one before.
// It does not wait for the OKAY of its last WRTE: a command's output ends
// (CLSE) without a round trip, as the host keeps what it received until
// it has read it.
func (st *stream) Write(p []byte) (int, error) {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	written := 0
	for len(p) > 0 {
		if st.unacked {
			select {
			case <-st.ack:
				st.unacked = false
			case <-st.ctx.Done():
				return written, errStreamClosed
			}
		}
		if st.ctx.Err() != nil {
			return written, errStreamClosed
		}
		n := min(len(p), st.c.chunkSize())
		if err := st.c.write(proto.Message{Command: proto.CmdWRTE, Arg0: st.local, Arg1: st.remote, Data: p[:n]}); err != nil {
			return written, errStreamClosed
		}
		st.unacked = true
		written += n
		p = p[n:]
	}
	return written, nil
}

// Close tells the host the service is done (CLSE), once.
func (st *stream) Close() error {
	st.closed.Do(func() {
		if st.ctx.Err() == nil {
			st.c.send(proto.Message{Command: proto.CmdCLSE, Arg0: st.local, Arg1: st.remote})
		}
		st.cancel()
		st.c.forget(st.local)
	})
	return nil
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
