package adbd

import (
	"context"
	"errors"
	"fmt"
	"github.com/apexagent/apex/internal/supervise"
	"log/slog"
	"net"
	"sync"

	"github.com/apexagent/apex/adb/proto"
)

// Features are the banner features this adbd implements, and only those:
// adb changes what it sends by what the device advertises.
var Features = []string{"shell_v2", "cmd", "stat_v2", "ls_v2", "fixed_push_mkdir", "abb_exec"}

// Options configure a Server. The zero value serves without AUTH at 1 MiB
// maxdata and logs nothing.
type Options struct {
	// Auth makes the device challenge every host with AUTH and accept no
	// key, so adb lists it as "unauthorized".
	Auth bool
	// MaxData is the device's maxdata (0 = 1 MiB). Streams use the smaller
	// of this and the host's.
	MaxData int
	// FS is the device's file system; nil gives a fresh one (NewFS).
	FS *FS
	// Log receives connection and protocol errors (nil = discard).
	Log *slog.Logger
	// Encoder is the ffmpeg (with libx264) `screenrecord
	// --output-format=h264` encodes with: "" finds ffmpeg on PATH, "none"
	// has no encoder (screenrecord says so).
	Encoder string
	// OnSupervise, when set, is told every start and end of the processes
	// the phone keeps running (screenrecord's ffmpeg), on their
	// supervisor's goroutine.
	OnSupervise func(supervise.Event)
}

// Server serves one Phone as adbd to any number of connections.
type Server struct {
	phone Phone
	opts  Options
	fs    *FS
	log   *slog.Logger
	ctx   context.Context
	stop  context.CancelFunc

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	wg        sync.WaitGroup
	// device state the Phone contract does not hold (guarded by mu)
	setProps    map[string]string
	started     map[string]bool // packages started by am/monkey, not force-stopped
	clipboard   string
	logcatFrom  int // `logcat -c` hides the lines before this
	sessions    map[int]map[string][]byte
	nextSession int
	touch       *touchDown         // `input motionevent DOWN` not yet lifted
	panel       *panel             // the touch device's events (sendevent)
	appops      map[string]string  // "pkg/OP" -> mode set by `appops set`
	reverses    map[string]reverse // `adb reverse` rules by device-side spec
}

// NewServer returns a server for phone. opts may be nil.
func NewServer(phone Phone, opts *Options) *Server {
	s := &Server{phone: phone, listeners: map[net.Listener]struct{}{}, conns: map[*conn]struct{}{},
		setProps: map[string]string{}, started: map[string]bool{}, sessions: map[int]map[string][]byte{}, appops: map[string]string{}, reverses: map[string]reverse{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.MaxData <= 0 || s.opts.MaxData > proto.MaxPayload {
		s.opts.MaxData = proto.MaxPayload
	}
	s.fs = s.opts.FS
	if s.fs == nil {
		s.fs = NewFS()
	}
	s.log = s.opts.Log
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.ctx, s.stop = context.WithCancel(context.Background())
	return s
}

// FS returns the device's file system.
func (s *Server) FS() *FS { return s.fs }

// Phone returns the phone the server serves.
func (s *Server) Phone() Phone { return s.phone }

// Serve accepts connections on ln until ln is closed or Close is called. It
// returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("adbd: accept on %s: %w", ln.Addr(), err)
		}
		s.ServeConn(c)
	}
}

// ServeConn serves one connection in the background. The connection is
// closed when the host leaves, on a protocol error, or by Close.
func (s *Server) ServeConn(nc net.Conn) {
	c := newConn(s, nc)
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		nc.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		c.serve()
		s.mu.Lock()
		delete(s.conns, c)
		for dev, r := range s.reverses {
			if r.c == c {
				delete(s.reverses, dev)
			}
		}
		s.mu.Unlock()
	}()
}

// Close stops every listener and connection and waits for their goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	s.stop()
	for ln := range s.listeners {
		ln.Close()
	}
	for c := range s.conns {
		c.close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

func (s *Server) banner() string {
	props := s.phone.Props()
	b := proto.Banner{Kind: "device", Props: map[string]string{}, Features: Features}
	for _, k := range []string{"ro.product.name", "ro.product.model", "ro.product.device"} {
		if v, ok := props[k]; ok {
			b.Props[k] = v
		}
	}
	return b.String()
}
