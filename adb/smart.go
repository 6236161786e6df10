package adb

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
)

// The smart-socket protocol: a request is four hex digits of length and the
// text; the reply is "OKAY" or "FAIL" followed by a length-prefixed message.

// maxReply bounds a length-prefixed reply (the length is 4 hex digits).
const maxReply = 0xffff

// writeRequest sends one length-prefixed request.
func writeRequest(w io.Writer, req string) error {
	if len(req) > maxReply {
		return fmt.Errorf("adb: request of %d bytes is too long", len(req))
	}
	_, err := fmt.Fprintf(w, "%04x%s", len(req), req)
	return err
}

// readStatus reads OKAY, or FAIL and its message as a *ServerError.
func readStatus(r io.Reader, req string) error {
	var st [4]byte
	if _, err := io.ReadFull(r, st[:]); err != nil {
		return fmt.Errorf("adb: reading reply to %q: %w", req, eofGone(err))
	}
	switch string(st[:]) {
	case "OKAY":
		return nil
	case "FAIL":
		msg, err := readHexString(r)
		if err != nil {
			return fmt.Errorf("adb: reading failure message for %q: %w", req, err)
		}
		return &ServerError{Request: req, Message: msg}
	}
	return fmt.Errorf("%w: reply %q to %q is neither OKAY nor FAIL", ErrProtocol, st[:], req)
}

// readHexString reads four hex digits of length and that many bytes.
func readHexString(r io.Reader) (string, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return "", eofGone(err)
	}
	n, err := strconv.ParseUint(string(h[:]), 16, 32)
	if err != nil {
		return "", fmt.Errorf("%w: length %q is not four hex digits", ErrProtocol, h[:])
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", fmt.Errorf("%w: reply truncated after %q: %v", ErrProtocol, h[:], err)
	}
	return string(buf), nil
}

// eofGone turns an unexpected end of stream into ErrGone, keeping the cause.
func eofGone(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: connection closed (%v)", ErrGone, err)
	}
	return err
}

// serverConn is one connection to the adb server.
type serverConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *serverConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// request sends req and waits for the status; ctx bounds the wait.
func (c *serverConn) request(ctx context.Context, req string) error {
	stop := context.AfterFunc(ctx, func() { c.Conn.Close() })
	defer stop()
	err := writeRequest(c.Conn, req)
	if err == nil {
		err = readStatus(c.r, req)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("adb: %q: %w", req, ctx.Err())
	}
	return err
}
