package adbd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/apexagent/apex/adb/proto"
)

// serveSync speaks the file-transfer protocol of `sync:` (adb push, pull,
// ls) over the device FS. Requests may straddle WRTEs or share one; the
// buffered reader takes care of that. A malformed request ends the stream
// with a log line.
func (s *Server) serveSync(ctx context.Context, st *stream) {
	r := bufio.NewReaderSize(st, 64*1024)
	w := bufio.NewWriterSize(st, 64*1024)
	for {
		req, err := proto.ReadSyncRequest(r)
		if err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				s.log.Warn("adbd: sync: closing stream after a bad request", "err", err)
			}
			return
		}
		if req.ID == proto.SyncQUIT {
			return
		}
		if err := s.syncRequest(r, w, req); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("adbd: sync: closing stream", "request", req.ID, "path", req.Path, "err", err)
			}
			return
		}
		if err := w.Flush(); err != nil {
			return
		}
	}
}

func (s *Server) syncRequest(r io.Reader, w *bufio.Writer, req proto.SyncRequest) error {
	var out []byte
	switch req.ID {
	case proto.SyncSTAT:
		fi, err := s.fs.Stat(req.Path)
		if err != nil {
			out = proto.AppendStatV1(nil, 0, 0, 0)
		} else {
			out = proto.AppendStatV1(nil, fi.UnixMode(), uint32(fi.Size), uint32(fi.MTime.Unix()))
		}
	case proto.SyncSTA2, proto.SyncLST2:
		fi, err := s.fs.Stat(req.Path)
		if err != nil {
			out = proto.AppendStatV2(nil, req.ID, proto.SyncStat{Error: proto.ErrnoNOENT})
		} else {
			out = proto.AppendStatV2(nil, req.ID, syncStat(fi))
		}
	case proto.SyncLIST, proto.SyncLIS2:
		v2 := req.ID == proto.SyncLIS2
		list, _ := s.fs.ReadDir(req.Path) // a missing directory lists as empty, as adbd does
		dot := []proto.SyncDent{}
		if fi, err := s.fs.Stat(req.Path); err == nil && fi.Dir {
			dot = append(dot, proto.SyncDent{Name: ".", Stat: syncStat(fi)}, proto.SyncDent{Name: "..", Stat: syncStat(fi)})
		}
		for _, fi := range list {
			dot = append(dot, proto.SyncDent{Name: fi.Name, Stat: syncStat(fi)})
		}
		for _, d := range dot {
			if v2 {
				out = proto.AppendDentV2(out, d)
			} else {
				out = proto.AppendDentV1(out, d)
			}
		}
		if v2 {
			out = proto.AppendDentV2Done(out)
		} else {
			out = proto.AppendDentV1Done(out)
		}
	case proto.SyncRECV:
		data, err := s.fs.ReadFile(req.Path)
		if err != nil {
			_, werr := w.Write(proto.AppendSyncFail(nil, failMessage(err)))
			return werr
		}
		for len(data) > 0 {
			n := min(len(data), proto.SyncMaxData)
			if _, err := w.Write(proto.AppendSyncData(nil, data[:n])); err != nil {
				return err
			}
			data = data[n:]
		}
		out = proto.AppendSyncDone(nil, 0)
	case proto.SyncSEND:
		return s.syncSend(r, w, req.Path)
	}
	_, err := w.Write(out)
	return err
}

// syncSend receives a file: DATA… then DONE(mtime); it answers OKAY, or
// FAIL once the host has sent everything.
func (s *Server) syncSend(r io.Reader, w *bufio.Writer, spec string) error {
	i := strings.LastIndexByte(spec, ',')
	if i < 0 {
		return errors.New("SEND without a mode")
	}
	name := spec[:i]
	mode, err := strconv.ParseUint(spec[i+1:], 10, 32)
	if err != nil {
		return errors.New("SEND with a bad mode " + strconv.Quote(spec[i+1:]))
	}
	// Past the file bound the rest is read and dropped: the host hears
	// FAIL once it has sent everything, as for any failed push.
	var buf bytes.Buffer
	limit, size := s.fs.MaxFile(), int64(0)
	for {
		p, err := proto.ReadSyncPacket(r, proto.SyncMaxData)
		if err != nil {
			return err
		}
		switch p.ID {
		case proto.SyncDATA:
			size += int64(len(p.Data))
			if size <= limit {
				buf.Write(p.Data)
			} else {
				buf = bytes.Buffer{}
			}
			continue
		case proto.SyncDONE:
		default:
			return errors.New("unexpected " + p.ID + " during SEND")
		}
		var ferr error
		if size > limit {
			s.fs.mu.Lock()
			ferr = s.fs.spaceError(name, size)
			s.fs.mu.Unlock()
		} else if !strings.HasPrefix(name, "/") {
			ferr = &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
		} else if ferr = s.fs.MkdirAll(path.Dir(name)); ferr == nil {
			ferr = s.fs.WriteFile(name, buf.Bytes(), fs.FileMode(mode).Perm())
		}
		if ferr != nil {
			_, err := w.Write(proto.AppendSyncFail(nil, failMessage(ferr)))
			return err
		}
		s.fs.SetMTime(name, time.Unix(int64(p.Arg), 0))
		_, err = w.Write(proto.AppendSyncOkay(nil))
		return err
	}
}

func syncStat(fi FileInfo) proto.SyncStat {
	nlink := uint32(1)
	if fi.Dir {
		nlink = 2
	}
	t := fi.MTime.Unix()
	return proto.SyncStat{Ino: fi.Ino, Mode: fi.UnixMode(), Nlink: nlink, UID: 2000, GID: 2000,
		Size: uint64(fi.Size), Atime: t, Mtime: t, Ctime: t}
}

func failMessage(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "Permission denied"
	case errors.Is(err, ErrNoSpace):
		return err.Error()
	}
	return err.Error()
}
