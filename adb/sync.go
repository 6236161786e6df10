package adb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/apexagent/apex/adb/proto"
)

// FileInfo is what sync STAT/LIST report about a file on the device.
type FileInfo struct {
	Name    string      `json:"name"`
	Mode    fs.FileMode `json:"mode"`
	Size    int64       `json:"size"`
	ModTime time.Time   `json:"mod_time"`
}

// fileMode converts Linux st_mode bits to an fs.FileMode.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & 0o170000 {
	case 0o040000:
		mode |= fs.ModeDir
	case 0o120000:
		mode |= fs.ModeSymlink
	case 0o020000:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case 0o060000:
		mode |= fs.ModeDevice
	case 0o010000:
		mode |= fs.ModeNamedPipe
	case 0o140000:
		mode |= fs.ModeSocket
	}
	return mode
}

// syncSession runs f on a fresh sync: stream and ends it with QUIT.
func syncSession(ctx context.Context, t Transport, op, path string, f func(rw *bufio.ReadWriter) error) error {
	s, err := t.Open(ctx, "sync:")
	if err != nil {
		return fmt.Errorf("adb: sync %s %q on %s: %w", op, path, t.Serial(), err)
	}
	defer s.Close()
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	rw := bufio.NewReadWriter(bufio.NewReaderSize(s, 64<<10), bufio.NewWriterSize(s, proto.SyncMaxData+64))
	err = f(rw)
	if err == nil {
		// QUIT, then let the device close first so the stream ends cleanly.
		rw.Write(proto.AppendSyncRequest(nil, proto.SyncQUIT, ""))
		if rw.Flush() == nil {
			io.Copy(io.Discard, rw)
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("adb: sync %s %q on %s: %w", op, path, t.Serial(), ctx.Err())
	}
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: sync stream ended early", ErrGone)
		}
		return fmt.Errorf("adb: sync %s %q on %s: %w", op, path, t.Serial(), err)
	}
	return nil
}

func sendRequest(rw *bufio.ReadWriter, id, path string) error {
	if len(path) > proto.SyncMaxPath {
		return fmt.Errorf("path of %d bytes is longer than %d", len(path), proto.SyncMaxPath)
	}
	if _, err := rw.Write(proto.AppendSyncRequest(nil, id, path)); err != nil {
		return err
	}
	return rw.Flush()
}

// Stat describes a file; a missing file is an error wrapping fs.ErrNotExist.
// It uses stat v2 when the device has stat_v2.
func Stat(ctx context.Context, t Transport, path string) (FileInfo, error) {
	v2 := hasFeature(ctx, t, "stat_v2")
	var fi FileInfo
	err := syncSession(ctx, t, "stat", path, func(rw *bufio.ReadWriter) error {
		if v2 {
			if err := sendRequest(rw, proto.SyncSTA2, path); err != nil {
				return err
			}
			_, st, err := proto.ReadStatV2(rw)
			if err != nil {
				return err
			}
			if st.Error != 0 {
				if st.Error == proto.ErrnoNOENT {
					return fs.ErrNotExist
				}
				return fmt.Errorf("errno %d", st.Error)
			}
			fi = FileInfo{Name: path, Mode: fileMode(st.Mode), Size: int64(st.Size), ModTime: time.Unix(st.Mtime, 0)}
			return nil
		}
		if err := sendRequest(rw, proto.SyncSTAT, path); err != nil {
			return err
		}
		mode, size, mtime, err := proto.ReadStatV1(rw)
		if err != nil {
			return err
		}
		if mode == 0 && size == 0 && mtime == 0 {
			return fs.ErrNotExist
		}
		fi = FileInfo{Name: path, Mode: fileMode(mode), Size: int64(size), ModTime: time.Unix(int64(mtime), 0)}
		return nil
	})
	return fi, err
}

// List lists a directory (LIS2 when the device has ls_v2, else LIST).
func List(ctx context.Context, t Transport, dir string) ([]FileInfo, error) {
	v2 := hasFeature(ctx, t, "ls_v2")
	var out []FileInfo
	err := syncSession(ctx, t, "list", dir, func(rw *bufio.ReadWriter) error {
		id := proto.SyncLIST
		if v2 {
			id = proto.SyncLIS2
		}
		if err := sendRequest(rw, id, dir); err != nil {
			return err
		}
		for {
			d, done, err := proto.ReadDent(rw, v2)
			if err != nil {
				return err
			}
			if done {
				return nil
			}
			if d.Name == "." || d.Name == ".." {
				continue
			}
			out = append(out, FileInfo{Name: d.Name, Mode: fileMode(d.Stat.Mode), Size: int64(d.Stat.Size), ModTime: time.Unix(d.Stat.Mtime, 0)})
		}
	})
	return out, err
}

// Pull copies a device file to w.
func Pull(ctx context.Context, t Transport, path string, w io.Writer) error {
	return syncSession(ctx, t, "pull", path, func(rw *bufio.ReadWriter) error {
		if err := sendRequest(rw, proto.SyncRECV, path); err != nil {
			return err
		}
		for {
			p, err := proto.ReadSyncPacket(rw, 0)
			if err != nil {
				return err
			}
			switch p.ID {
			case proto.SyncDATA:
				if _, err := w.Write(p.Data); err != nil {
					return err
				}
			case proto.SyncDONE:
				return nil
			case proto.SyncFAIL:
				return fmt.Errorf("device refused: %s", p.Data)
			default:
				return fmt.Errorf("%w: unexpected %s during pull", ErrProtocol, p.ID)
			}
		}
	})
}

// Push copies r to a device file created with mode and mtime (zero mtime
// means now).
func Push(ctx context.Context, t Transport, r io.Reader, path string, mode fs.FileMode, mtime time.Time) error {
	if mtime.IsZero() {
		mtime = time.Now()
	}
	return syncSession(ctx, t, "push", path, func(rw *bufio.ReadWriter) error {
		spec := fmt.Sprintf("%s,%d", path, uint32(mode.Perm())|0o100000)
		if _, err := rw.Write(proto.AppendSyncRequest(nil, proto.SyncSEND, spec)); err != nil {
			return err
		}
		buf := make([]byte, proto.SyncMaxData)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				if _, werr := rw.Write(proto.AppendSyncData(nil, buf[:n])); werr != nil {
					return werr
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("reading local data: %w", err)
			}
		}
		if _, err := rw.Write(proto.AppendSyncDone(nil, uint32(mtime.Unix()))); err != nil {
			return err
		}
		if err := rw.Flush(); err != nil {
			return err
		}
		p, err := proto.ReadSyncPacket(rw, 0)
		if err != nil {
			return err
		}
		switch p.ID {
		case proto.SyncOKAY:
			return nil
		case proto.SyncFAIL:
			return fmt.Errorf("device refused: %s", p.Data)
		}
		return fmt.Errorf("%w: unexpected %s after push", ErrProtocol, p.ID)
	})
}

// PushFile pushes a local file, keeping its mode and mtime.
func PushFile(ctx context.Context, t Transport, local, remote string) error {
	f, err := os.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return Push(ctx, t, f, remote, st.Mode(), st.ModTime())
}
