package adb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apexagent/apex/adb/proto"
)

// ShellOptions are the streams of a shell command. Nil writers discard.
type ShellOptions struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// V1 forces the old shell service even when the device has shell_v2:
	// stdout and stderr arrive merged and the exit status is unknown.
	V1 bool
}

// maxShellPacket bounds one shell v2 packet; adbd sends at most its
// max payload (1 MiB) per packet.
const maxShellPacket = 16 << 20

// RunShell runs cmd in the device's shell. With shell v2 it returns the
// exit status and keeps stderr apart; with v1 the status is -1 (unknown).
// Cancelling ctx closes the stream and returns ctx's error.
func RunShell(ctx context.Context, t Transport, cmd string, opts ShellOptions) (int, error) {
	v2 := !opts.V1 && hasFeature(ctx, t, "shell_v2")
	service := "shell:" + cmd
	if v2 {
		service = "shell,v2,raw:" + cmd
	}
	s, err := t.Open(ctx, service)
	if err != nil {
		return -1, &OpenError{Service: service, Err: err}
	}
	defer s.Close()
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	stdout, stderr := orDiscard(opts.Stdout), orDiscard(opts.Stderr)
	var code int
	if v2 {
		code, err = runShellV2(s, opts.Stdin, stdout, stderr)
	} else {
		code, err = -1, runShellV1(s, opts.Stdin, stdout)
	}
	if ctx.Err() != nil {
		return -1, fmt.Errorf("adb: shell %q on %s: %w", cmd, t.Serial(), ctx.Err())
	}
	if err != nil {
		return -1, fmt.Errorf("adb: shell %q on %s: %w", cmd, t.Serial(), err)
	}
	return code, nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func runShellV2(s Stream, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if stdin != nil {
		go pumpStdinV2(s, stdin)
	}
	for {
		p, err := proto.ReadShell(s, maxShellPacket)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return -1, fmt.Errorf("%w: stream ended without an exit status", ErrGone)
			}
			return -1, err
		}
		switch p.ID {
		case proto.ShellStdout:
			if _, err := stdout.Write(p.Data); err != nil {
				return -1, err
			}
		case proto.ShellStderr:
			if _, err := stderr.Write(p.Data); err != nil {
				return -1, err
			}
		case proto.ShellExit:
			if len(p.Data) != 1 {
				return -1, fmt.Errorf("%w: exit packet of %d bytes", ErrProtocol, len(p.Data))
			}
			// adbd closes the stream right after the status; wait for that
			// so the stream ends cleanly instead of crossing CLSEs.
			io.Copy(io.Discard, s)
			return int(p.Data[0]), nil
		}
	}
}

// pumpStdinV2 copies stdin in packets, then closes the device's stdin.
// Errors end it quietly: the reader sees the stream's fate.
func pumpStdinV2(s Stream, stdin io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := stdin.Read(buf)
		if n > 0 {
			if _, werr := s.Write(proto.EncodeShell(nil, proto.ShellStdin, buf[:n])); werr != nil {
				return
			}
		}
		if err != nil {
			s.Write(proto.EncodeShell(nil, proto.ShellCloseStdin, nil))
			return
		}
	}
}

func runShellV1(s Stream, stdin io.Reader, stdout io.Writer) error {
	if stdin != nil {
		go io.Copy(s, stdin)
	}
	_, err := io.Copy(stdout, s)
	return err
}

// MaxShellOutput is how much of a command's stdout (and of its stderr)
// Shell keeps: more than any command Apex runs itself writes (a dumpsys of
// a busy device is a few MB).
const MaxShellOutput = 8 << 20

// Shell runs cmd and returns its stdout, at most MaxShellOutput bytes of
// it (see ShellLimit). A non-zero exit status is a *ShellError carrying
// stderr; the stdout read so far is returned with it.
func Shell(ctx context.Context, t Transport, cmd string) ([]byte, error) {
	return ShellLimit(ctx, t, cmd, MaxShellOutput)
}

// ShellLimit is Shell keeping at most limit bytes of stdout and of stderr.
// The rest is read and dropped, so the command runs to its end (or until
// ctx ends: then the stream closes and adbd kills it) in bounded memory;
// output cut so ends with a line "[output truncated at LIMIT bytes: N more
// dropped]".
func ShellLimit(ctx context.Context, t Transport, cmd string, limit int) ([]byte, error) {
	out, errOut := &capped{limit: limit}, &capped{limit: limit}
	code, err := RunShell(ctx, t, cmd, ShellOptions{Stdout: out, Stderr: errOut})
	if err != nil {
		return out.Bytes(), err
	}
	if code > 0 {
		return out.Bytes(), &ShellError{Command: cmd, Exit: code, Stderr: string(errOut.Bytes())}
	}
	return out.Bytes(), nil
}

// capped keeps the first limit bytes written to it and counts the rest.
type capped struct {
	buf     bytes.Buffer
	limit   int
	dropped int64
}

func (c *capped) Write(p []byte) (int, error) {
	keep := min(len(p), max(c.limit-c.buf.Len(), 0))
	c.buf.Write(p[:keep])
	c.dropped += int64(len(p) - keep)
	return len(p), nil
}

// Bytes is what was kept, with the truncation line when some was dropped.
func (c *capped) Bytes() []byte {
	if c.dropped == 0 {
		return c.buf.Bytes()
	}
	return fmt.Appendf(c.buf.Bytes(), "\n[output truncated at %d bytes: %d more dropped]\n", c.limit, c.dropped)
}

// Exec runs cmd through the exec service (`adb exec-out`): raw bytes, no
// pty and no exit status, for binary output such as screencap.
func Exec(ctx context.Context, t Transport, cmd string) ([]byte, error) {
	var out execOutput
	err := ExecTo(ctx, t, cmd, &out)
	return out.bytes(), err
}

// execOutput gathers Exec's output in pieces and joins them once at the
// end: a screenshot that came in one WRTE is that WRTE's payload, never
// copied (a growing buffer copied and cleared each PNG three times over).
type execOutput struct {
	parts [][]byte
	n     int
}

// Write keeps a copy of p.
func (o *execOutput) Write(p []byte) (int, error) {
	o.keep(bytes.Clone(p))
	return len(p), nil
}

// keep keeps b itself; nothing else may use it.
func (o *execOutput) keep(b []byte) {
	o.parts = append(o.parts, b)
	o.n += len(b)
}

func (o *execOutput) bytes() []byte {
	switch len(o.parts) {
	case 0:
		return nil
	case 1:
		return o.parts[0]
	}
	out := make([]byte, 0, o.n)
	for _, b := range o.parts {
		out = append(out, b...)
	}
	return out
}

// ExecTo is Exec writing to w.
func ExecTo(ctx context.Context, t Transport, cmd string, w io.Writer) error {
	s, err := t.Open(ctx, "exec:"+cmd)
	if err != nil {
		return &OpenError{Service: "exec:" + cmd, Err: err}
	}
	defer s.Close()
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	_, err = io.Copy(w, s)
	if ctx.Err() != nil {
		return fmt.Errorf("adb: exec %q on %s: %w", cmd, t.Serial(), ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("adb: exec %q on %s: %w", cmd, t.Serial(), err)
	}
	return nil
}
