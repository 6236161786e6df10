package proto

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Sync protocol ids (the `sync:` service). Each is four ASCII bytes on the
// wire, in this order.
const (
	SyncSTAT = "STAT" // request: stat v1 (mode, size, mtime)
	SyncSTA2 = "STA2" // request/response: stat v2 (follows symlinks)
	SyncLST2 = "LST2" // request/response: lstat v2
	SyncLIST = "LIST" // request: list a directory (DENT… DONE)
	SyncLIS2 = "LIS2" // request: list v2 (DNT2… DONE)
	SyncDENT = "DENT"
	SyncDNT2 = "DNT2"
	SyncSEND = "SEND" // request: "path,mode", then DATA… DONE(mtime)
	SyncRECV = "RECV" // request: path; response DATA… DONE, or FAIL
	SyncDATA = "DATA"
	SyncDONE = "DONE"
	SyncOKAY = "OKAY"
	SyncFAIL = "FAIL"
	SyncQUIT = "QUIT"
)

const (
	// SyncMaxPath is the longest path a sync request may carry (adb's limit).
	SyncMaxPath = 1024
	// SyncMaxData is the largest DATA chunk (64 KiB, as adb).
	SyncMaxData = 64 * 1024
	// sizes of the fixed structs, ids included.
	syncStatV1Size = 16
	syncStatV2Size = 72
	syncDentV1Size = 20
	syncDentV2Size = 76
)

// SyncRequest is one request a host sends on a sync stream. Path holds the
// payload: a path, or "path,mode" for SEND.
type SyncRequest struct {
	ID   string
	Path string
}

// ReadSyncRequest reads one request id and its length-prefixed path. It
// rejects unknown ids and paths longer than SyncMaxPath.
func ReadSyncRequest(r io.Reader) (SyncRequest, error) {
	var h [8]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return SyncRequest{}, err
	}
	id := string(h[:4])
	n := binary.LittleEndian.Uint32(h[4:])
	switch id {
	case SyncSTAT, SyncSTA2, SyncLST2, SyncLIST, SyncLIS2, SyncSEND, SyncRECV:
	case SyncQUIT:
		return SyncRequest{ID: id}, nil
	default:
		return SyncRequest{}, fmt.Errorf("%w: unknown sync request %q", ErrBadMessage, printable(h[:4]))
	}
	if n > SyncMaxPath {
		return SyncRequest{}, fmt.Errorf("%w: sync %s path of %d bytes exceeds %d", ErrBadMessage, id, n, SyncMaxPath)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return SyncRequest{}, fmt.Errorf("%w: sync %s path truncated: %v", ErrBadMessage, id, err)
	}
	return SyncRequest{ID: id, Path: string(p)}, nil
}

// AppendSyncRequest appends a request (id, u32 length, path) to dst.
func AppendSyncRequest(dst []byte, id, path string) []byte {
	return appendPacket(dst, id, []byte(path))
}

// SyncPacket is a packet of a file transfer: DATA (Data holds the bytes),
// DONE (Arg is the mtime on SEND, 0 on RECV), OKAY, or FAIL (Data holds the
// message).
type SyncPacket struct {
	ID   string
	Arg  uint32
	Data []byte
}

// ReadSyncPacket reads one DATA, DONE, OKAY, FAIL or QUIT packet, accepting
// at most maxData payload bytes for DATA and FAIL (0 means SyncMaxData).
func ReadSyncPacket(r io.Reader, maxData int) (SyncPacket, error) {
	if maxData <= 0 {
		maxData = SyncMaxData
	}
	var h [8]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return SyncPacket{}, err
	}
	p := SyncPacket{ID: string(h[:4]), Arg: binary.LittleEndian.Uint32(h[4:])}
	switch p.ID {
	case SyncDONE, SyncOKAY, SyncQUIT:
		return p, nil
	case SyncDATA, SyncFAIL:
	default:
		return SyncPacket{}, fmt.Errorf("%w: unexpected sync packet %q", ErrBadMessage, printable(h[:4]))
	}
	if int64(p.Arg) > int64(maxData) {
		return SyncPacket{}, fmt.Errorf("%w: sync %s of %d bytes exceeds %d", ErrBadMessage, p.ID, p.Arg, maxData)
	}
	p.Data = make([]byte, p.Arg)
	if _, err := io.ReadFull(r, p.Data); err != nil {
		return SyncPacket{}, fmt.Errorf("%w: sync %s truncated: %v", ErrBadMessage, p.ID, err)
	}
	return p, nil
}

// AppendSyncData appends a DATA packet. Callers split data into chunks of at
// most SyncMaxData.
func AppendSyncData(dst, data []byte) []byte { return appendPacket(dst, SyncDATA, data) }

// AppendSyncFail appends a FAIL packet carrying msg.
func AppendSyncFail(dst []byte, msg string) []byte { return appendPacket(dst, SyncFAIL, []byte(msg)) }

// AppendSyncDone appends DONE with arg (the file mtime on SEND, 0 on RECV).
func AppendSyncDone(dst []byte, arg uint32) []byte { return appendHeader(dst, SyncDONE, arg) }

// AppendSyncOkay appends the OKAY that ends a successful SEND.
func AppendSyncOkay(dst []byte) []byte { return appendHeader(dst, SyncOKAY, 0) }

// SyncStat is a file's metadata as stat v2 carries it. Error is an errno (0
// when the file exists). Mode holds the type bits (0o040000 dir, 0o100000
// regular file, 0o120000 symlink) and the permissions.
type SyncStat struct {
	Error               uint32
	Dev, Ino            uint64
	Mode, Nlink         uint32
	UID, GID            uint32
	Size                uint64
	Atime, Mtime, Ctime int64
}

// Errno values the sync protocol carries in SyncStat.Error.
const (
	ErrnoNOENT  = 2
	ErrnoNOTDIR = 20
)

// AppendStatV1 appends the response to STAT: mode, size and mtime (all
// zero when the file does not exist).
func AppendStatV1(dst []byte, mode, size, mtime uint32) []byte {
	dst = appendHeader(dst, SyncSTAT, mode)
	dst = binary.LittleEndian.AppendUint32(dst, size)
	return binary.LittleEndian.AppendUint32(dst, mtime)
}

// ReadStatV1 reads a STAT response.
func ReadStatV1(r io.Reader) (mode, size, mtime uint32, err error) {
	var b [syncStatV1Size]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, 0, 0, err
	}
	if string(b[:4]) != SyncSTAT {
		return 0, 0, 0, fmt.Errorf("%w: sync STAT response has id %q", ErrBadMessage, printable(b[:4]))
	}
	le := binary.LittleEndian
	return le.Uint32(b[4:]), le.Uint32(b[8:]), le.Uint32(b[12:]), nil
}

// AppendStatV2 appends the response to STA2 or LST2 (id says which).
func AppendStatV2(dst []byte, id string, st SyncStat) []byte {
	dst = append(dst, id[:4]...)
	return appendStatFields(dst, st)
}

// ReadStatV2 reads a STA2 or LST2 response.
func ReadStatV2(r io.Reader) (id string, st SyncStat, err error) {
	var b [syncStatV2Size]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", SyncStat{}, err
	}
	id = string(b[:4])
	if id != SyncSTA2 && id != SyncLST2 {
		return "", SyncStat{}, fmt.Errorf("%w: sync stat v2 response has id %q", ErrBadMessage, printable(b[:4]))
	}
	return id, parseStatFields(b[4:]), nil
}

// SyncDent is one directory entry of a LIST or LIS2 answer.
type SyncDent struct {
	Name string
	Stat SyncStat // v1 carries only Mode, Size and Mtime
}

// AppendDentV1 appends a DENT entry (LIST answer).
func AppendDentV1(dst []byte, d SyncDent) []byte {
	dst = appendHeader(dst, SyncDENT, d.Stat.Mode)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(d.Stat.Size))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(d.Stat.Mtime))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(d.Name)))
	return append(dst, d.Name...)
}

// AppendDentV1Done appends the DONE that ends a LIST answer (a zero DENT).
func AppendDentV1Done(dst []byte) []byte {
	dst = append(dst, SyncDONE...)
	return append(dst, make([]byte, syncDentV1Size-4)...)
}

// AppendDentV2 appends a DNT2 entry (LIS2 answer).
func AppendDentV2(dst []byte, d SyncDent) []byte {
	dst = append(dst, SyncDNT2...)
	dst = appendStatFields(dst, d.Stat)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(d.Name)))
	return append(dst, d.Name...)
}

// AppendDentV2Done appends the DONE that ends a LIS2 answer.
func AppendDentV2Done(dst []byte) []byte {
	dst = append(dst, SyncDONE...)
	return append(dst, make([]byte, syncDentV2Size-4)...)
}

// ReadDent reads one entry of a LIST (v2 false) or LIS2 (v2 true) answer;
// done is true at the terminating DONE. Names longer than SyncMaxPath are
// rejected.
func ReadDent(r io.Reader, v2 bool) (d SyncDent, done bool, err error) {
	size, want := syncDentV1Size, SyncDENT
	if v2 {
		size, want = syncDentV2Size, SyncDNT2
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return SyncDent{}, false, err
	}
	switch string(b[:4]) {
	case SyncDONE:
		return SyncDent{}, true, nil
	case want:
	default:
		return SyncDent{}, false, fmt.Errorf("%w: sync listing has id %q, want %s", ErrBadMessage, printable(b[:4]), want)
	}
	le := binary.LittleEndian
	if v2 {
		d.Stat = parseStatFields(b[4:])
	} else {
		d.Stat = SyncStat{Mode: le.Uint32(b[4:]), Size: uint64(le.Uint32(b[8:])), Mtime: int64(le.Uint32(b[12:]))}
	}
	n := le.Uint32(b[size-4:])
	if n > SyncMaxPath {
		return SyncDent{}, false, fmt.Errorf("%w: sync entry name of %d bytes exceeds %d", ErrBadMessage, n, SyncMaxPath)
	}
	name := make([]byte, n)
	if _, err := io.ReadFull(r, name); err != nil {
		return SyncDent{}, false, fmt.Errorf("%w: sync entry name truncated: %v", ErrBadMessage, err)
	}
	d.Name = string(name)
	return d, false, nil
}

func appendStatFields(dst []byte, st SyncStat) []byte {
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, st.Error)
	dst = le.AppendUint64(dst, st.Dev)
	dst = le.AppendUint64(dst, st.Ino)
	dst = le.AppendUint32(dst, st.Mode)
	dst = le.AppendUint32(dst, st.Nlink)
	dst = le.AppendUint32(dst, st.UID)
	dst = le.AppendUint32(dst, st.GID)
	dst = le.AppendUint64(dst, st.Size)
	dst = le.AppendUint64(dst, uint64(st.Atime))
	dst = le.AppendUint64(dst, uint64(st.Mtime))
	return le.AppendUint64(dst, uint64(st.Ctime))
}

func parseStatFields(b []byte) SyncStat {
	le := binary.LittleEndian
	return SyncStat{
		Error: le.Uint32(b[0:]), Dev: le.Uint64(b[4:]), Ino: le.Uint64(b[12:]),
		Mode: le.Uint32(b[20:]), Nlink: le.Uint32(b[24:]), UID: le.Uint32(b[28:]), GID: le.Uint32(b[32:]),
		Size: le.Uint64(b[36:]), Atime: int64(le.Uint64(b[44:])), Mtime: int64(le.Uint64(b[52:])), Ctime: int64(le.Uint64(b[60:])),
	}
}

func appendHeader(dst []byte, id string, arg uint32) []byte {
	dst = append(dst, id[:4]...)
	return binary.LittleEndian.AppendUint32(dst, arg)
}

func appendPacket(dst []byte, id string, data []byte) []byte {
	return append(appendHeader(dst, id, uint32(len(data))), data...)
}

func printable(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		out[i] = c
	}
	return string(out)
}
