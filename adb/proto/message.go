// Package proto encodes the ADB device protocol shared by both ends of a
// transport: the 24-byte message framing, the connection banner and the
// shell v2 packet format. It has no knowledge of services.
package proto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Commands of the transport protocol.
const (
	CmdCNXN uint32 = 0x4e584e43
	CmdAUTH uint32 = 0x48545541
	CmdOPEN uint32 = 0x4e45504f
	CmdOKAY uint32 = 0x59414b4f
	CmdWRTE uint32 = 0x45545257
	CmdCLSE uint32 = 0x45534c43
	CmdSTLS uint32 = 0x534c5453
)

const (
	// Version is the protocol version sent in CNXN.
	Version uint32 = 0x01000001
	// MaxPayload is the largest payload this package reads (1 MiB, as adb).
	MaxPayload = 1 << 20
	// HeaderSize is the size of a message header.
	HeaderSize = 24
)

// Message is one transport message.
type Message struct {
	Command uint32
	Arg0    uint32
	Arg1    uint32
	Data    []byte
}

// ErrBadMessage is wrapped by every framing error.
var ErrBadMessage = errors.New("adb: bad message")

// CommandName returns the four-letter name of a command, or its hex value.
func CommandName(c uint32) string {
	switch c {
	case CmdCNXN, CmdAUTH, CmdOPEN, CmdOKAY, CmdWRTE, CmdCLSE, CmdSTLS:
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], c)
		return string(b[:])
	}
	return fmt.Sprintf("0x%08x", c)
}

func (m Message) String() string {
	return fmt.Sprintf("%s(%d, %d, %d bytes)", CommandName(m.Command), m.Arg0, m.Arg1, len(m.Data))
}

// Checksum is the byte sum adb puts in data_check.
func Checksum(data []byte) uint32 {
	var s uint32
	for _, b := range data {
		s += uint32(b)
	}
	return s
}

// Header is the wire form of m's header; m.Data follows it.
func (m Message) Header() [HeaderSize]byte {
	var h [HeaderSize]byte
	binary.LittleEndian.PutUint32(h[0:], m.Command)
	binary.LittleEndian.PutUint32(h[4:], m.Arg0)
	binary.LittleEndian.PutUint32(h[8:], m.Arg1)
	binary.LittleEndian.PutUint32(h[12:], uint32(len(m.Data)))
	switch m.Command {
	case CmdCNXN, CmdAUTH, CmdSTLS:
		// As adb: a checksum where the peer's version is not known yet;
		// 0 after it, since version 0x01000001 skips it (summing a
		// screenshot's bytes was a tenth of its transport's CPU).
		binary.LittleEndian.PutUint32(h[16:], Checksum(m.Data))
	}
	binary.LittleEndian.PutUint32(h[20:], m.Command^0xffffffff)
	return h
}

// Encode appends the wire form of m to dst.
func (m Message) Encode(dst []byte) []byte {
	h := m.Header()
	dst = append(dst, h[:]...)
	return append(dst, m.Data...)
}

// WriteMessage writes m in one Write call, so concurrent writers that hold a
// lock around it never interleave frames.
func WriteMessage(w io.Writer, m Message) error {
	_, err := w.Write(m.Encode(make([]byte, 0, HeaderSize+len(m.Data))))
	return err
}

// ReadMessage reads one message. maxData bounds the payload it accepts (0
// means MaxPayload). A malformed header is an error wrapping ErrBadMessage
// that says what was wrong; the stream cannot be resynchronised after it.
func ReadMessage(r io.Reader, maxData int) (Message, error) {
	if maxData <= 0 {
		maxData = MaxPayload
	}
	var h [HeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return Message{}, err
	}
	m := Message{
		Command: binary.LittleEndian.Uint32(h[0:]),
		Arg0:    binary.LittleEndian.Uint32(h[4:]),
		Arg1:    binary.LittleEndian.Uint32(h[8:]),
	}
	n := binary.LittleEndian.Uint32(h[12:])
	if magic := binary.LittleEndian.Uint32(h[20:]); magic != m.Command^0xffffffff {
		return Message{}, fmt.Errorf("%w: magic 0x%08x does not match command %s", ErrBadMessage, magic, CommandName(m.Command))
	}
	switch m.Command {
	case CmdCNXN, CmdAUTH, CmdOPEN, CmdOKAY, CmdWRTE, CmdCLSE, CmdSTLS:
	default:
		return Message{}, fmt.Errorf("%w: unknown command %s", ErrBadMessage, CommandName(m.Command))
	}
	if int64(n) > int64(maxData) {
		return Message{}, fmt.Errorf("%w: %s payload of %d bytes exceeds the %d-byte limit", ErrBadMessage, CommandName(m.Command), n, maxData)
	}
	if n > 0 {
		m.Data = make([]byte, n)
		if _, err := io.ReadFull(r, m.Data); err != nil {
			return Message{}, fmt.Errorf("%w: %s payload truncated: %v", ErrBadMessage, CommandName(m.Command), err)
		}
	}
	// adb ignores data_check since protocol version 0x01000001, so do we.
	return m, nil
}
