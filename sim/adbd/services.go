package adbd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/apexagent/apex/adb/proto"
)

type serviceFunc func(ctx context.Context, st *stream)

// service returns the handler of an OPEN'd service, or nil to refuse it.
func (s *Server) service(name string) serviceFunc {
	switch {
	case name == "sync:":
		return s.serveSync
	case strings.HasPrefix(name, "reverse:"):
		return func(_ context.Context, st *stream) { s.serveReverse(st, strings.TrimPrefix(name, "reverse:")) }
	case name == "root:" || name == "unroot:":
		// A user build, like the phones people own.
		msg := map[string]string{"root:": "adbd cannot run as root in production builds\n", "unroot:": "adbd not running as root\n"}[name]
		return func(_ context.Context, st *stream) { st.Write([]byte(msg)) }
	case strings.HasPrefix(name, "exec:"):
		cmd := strings.TrimPrefix(name, "exec:")
		return func(ctx context.Context, st *stream) { s.serveRaw(ctx, st, cmd) }
	case strings.HasPrefix(name, "abb_exec:"):
		args := strings.Split(strings.TrimPrefix(name, "abb_exec:"), "\x00")
		return func(ctx context.Context, st *stream) { s.serveAbb(ctx, st, args) }
	case strings.HasPrefix(name, "shell"):
		head, cmd, ok := strings.Cut(name, ":")
		if !ok || (head != "shell" && !strings.HasPrefix(head, "shell,")) {
			return nil
		}
		v2 := false
		for _, a := range strings.Split(head, ",")[1:] {
			if a == "v2" {
				v2 = true
			}
		}
		switch {
		case v2:
			return func(ctx context.Context, st *stream) { s.serveShellV2(ctx, st, cmd) }
		case cmd == "":
			return func(ctx context.Context, st *stream) { s.serveInteractive(ctx, st, st) }
		default:
			return func(ctx context.Context, st *stream) { s.serveRaw(ctx, st, cmd) }
		}
	}
	return nil
}

// serveRaw runs a command for `shell:` (v1) and `exec:`: stdin and output
// are the stream's raw bytes, stdout and stderr share it, and the exit
// status is lost, as on a real device.
func (s *Server) serveRaw(ctx context.Context, st *stream, cmd string) {
	out := newLockedWriter(st)
	s.RunShell(ctx, cmd, st, out, out)
	out.Flush()
}

// serveAbb runs `abb_exec:` (adb install uses it): the args name a binder
// service, as `cmd SERVICE ARGS…`, with the stream as raw stdin and stdout.
func (s *Server) serveAbb(ctx context.Context, st *stream, args []string) {
	out := newLockedWriter(st)
	name := "cmd"
	c := &Cmd{s: s, Args: append([]string{name}, args...), Dir: "/", Stdin: st, Stdout: out, Stderr: out}
	commands[name](ctx, c)
	out.Flush()
}

// serveShellV2 speaks shell protocol v2: stdin, stdout, stderr and the
// exit code travel as separate packets.
func (s *Server) serveShellV2(ctx context.Context, st *stream, cmd string) {
	pr, pw := io.Pipe()
	go func() {
		r := bufio.NewReader(st)
		for {
			p, err := proto.ReadShell(r, proto.MaxPayload)
			if err != nil {
				pw.CloseWithError(io.EOF)
				return
			}
			switch p.ID {
			case proto.ShellStdin:
				if _, err := pw.Write(p.Data); err != nil {
					return
				}
			case proto.ShellCloseStdin:
				pw.Close()
			}
		}
	}()
	stdout := newLockedWriter(&packetWriter{w: st, id: proto.ShellStdout})
	stderr := newLockedWriter(&packetWriter{w: st, id: proto.ShellStderr})
	var code int
	if cmd == "" {
		code = s.serveInteractive(ctx, pr, stdout)
	} else {
		code = s.RunShell(ctx, cmd, pr, stdout, stderr)
	}
	stdout.Flush()
	stderr.Flush()
	pr.Close()
	st.Write(proto.EncodeShell(nil, proto.ShellExit, []byte{byte(code)}))
}

// serveInteractive is `adb shell` without a command: a prompt, one command
// line at a time, until `exit` or the end of input.
func (s *Server) serveInteractive(ctx context.Context, in io.Reader, out io.Writer) int {
	lw, ok := out.(*lockedWriter)
	if !ok {
		lw = newLockedWriter(out)
	}
	props := s.phone.Props()
	prompt := fmt.Sprintf("%s:/ $ ", props["ro.product.device"])
	r := bufio.NewReader(in)
	code := 0
	for {
		fmt.Fprint(lw, prompt)
		lw.Flush()
		line, err := r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(line) == "exit" {
			return code
		}
		if line != "" {
			code = s.RunShell(ctx, line, nil, lw, lw)
		}
		if err != nil || ctx.Err() != nil {
			lw.Flush()
			return code
		}
	}
}

// packetWriter wraps each write in a shell v2 packet.
type packetWriter struct {
	w  io.Writer
	id byte
}

func (p *packetWriter) Write(b []byte) (int, error) {
	if _, err := p.w.Write(proto.EncodeShell(nil, p.id, b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// lockedWriter buffers small writes (so many make few WRTEs) and lets the
// goroutines of a pipeline share it.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	w   io.Writer
	err error
}

const flushAt = 64 * 1024

func newLockedWriter(w io.Writer) *lockedWriter { return &lockedWriter{w: w} }

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, l.err
	}
	if l.buf.Len()+len(p) > flushAt || len(p) >= flushAt/2 {
		if err := l.flushLocked(); err != nil {
			return 0, err
		}
		// A large write (a screenshot) goes as it is: copying it into
		// the buffer first cost a fresh, cleared buffer per command.
		if len(p) >= flushAt/2 {
			if _, err := l.w.Write(p); err != nil {
				l.err = err
				return 0, err
			}
			return len(p), nil
		}
	}
	return l.buf.Write(p)
}

func (l *lockedWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flushLocked()
}

func (l *lockedWriter) flushLocked() error {
	if l.err != nil || l.buf.Len() == 0 {
		return l.err
	}
	_, err := l.w.Write(l.buf.Bytes())
	l.buf.Reset()
	if err != nil {
		l.err = err
	}
	return err
}
