package proto

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Shell v2 packet ids.
const (
	ShellStdin      byte = 0
	ShellStdout     byte = 1
	ShellStderr     byte = 2
	ShellExit       byte = 3
	ShellCloseStdin byte = 4
	ShellWindowSize byte = 5
)

// ShellPacket is one shell v2 frame: [id u8][len u32 LE][data].
type ShellPacket struct {
	ID   byte
	Data []byte
}

// EncodeShell appends the wire form of a shell v2 packet to dst.
func EncodeShell(dst []byte, id byte, data []byte) []byte {
	var h [5]byte
	h[0] = id
	binary.LittleEndian.PutUint32(h[1:], uint32(len(data)))
	return append(append(dst, h[:]...), data...)
}

// ReadShell reads one shell v2 packet of at most maxData bytes.
func ReadShell(r io.Reader, maxData int) (ShellPacket, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return ShellPacket{}, err
	}
	n := binary.LittleEndian.Uint32(h[1:])
	if h[0] > ShellWindowSize {
		return ShellPacket{}, fmt.Errorf("%w: unknown shell packet id %d", ErrBadMessage, h[0])
	}
	if int64(n) > int64(maxData) {
		return ShellPacket{}, fmt.Errorf("%w: shell packet of %d bytes exceeds %d", ErrBadMessage, n, maxData)
	}
	p := ShellPacket{ID: h[0], Data: make([]byte, n)}
	if _, err := io.ReadFull(r, p.Data); err != nil {
		return ShellPacket{}, fmt.Errorf("%w: shell packet truncated: %v", ErrBadMessage, err)
	}
	return p, nil
}
