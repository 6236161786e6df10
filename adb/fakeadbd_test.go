package adb

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/apexagent/apex/adb/proto"
)

// fakeADBD is a minimal adbd for tests: a few shell commands, exec and an
// in-memory sync file system. It records every message as a transcript line.
type fakeADBD struct {
	t        *testing.T
	ln       net.Listener
	features []string
	maxData  int

	mu    sync.Mutex
	log   []string
	files map[string][]byte
	conns []net.Conn
}

func startFakeADBD(t *testing.T, maxData int) *fakeADBD {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeADBD{t: t, ln: ln, maxData: maxData, features: []string{"shell_v2", "cmd", "stat_v2", "ls_v2"},
		files: map[string][]byte{"/sdcard/hello.txt": []byte("hello from the device\n")}}
	t.Cleanup(f.stop)
	go f.accept()
	return f
}

func (f *fakeADBD) addr() string { return f.ln.Addr().String() }

func (f *fakeADBD) stop() {
	f.ln.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
}

func (f *fakeADBD) record(dir string, m proto.Message) {
	data := string(m.Data)
	if len(data) > 48 {
		data = data[:48] + fmt.Sprintf("…(%d bytes)", len(m.Data))
	}
	f.mu.Lock()
	f.log = append(f.log, fmt.Sprintf("%s %s %d %d %q", dir, proto.CommandName(m.Command), m.Arg0, m.Arg1, data))
	f.mu.Unlock()
}

func (f *fakeADBD) transcript() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.log, "\n") + "\n"
}

func (f *fakeADBD) accept() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, c)
		f.mu.Unlock()
		go f.serve(c)
	}
}

// fakeStream is the device end of one stream.
type fakeStream struct {
	in     chan []byte // WRTE payloads from the host
	okay   chan struct{}
	local  uint32
	remote uint32
}

func (f *fakeADBD) serve(c net.Conn) {
	defer c.Close()
	var wmu sync.Mutex
	send := func(m proto.Message) {
		wmu.Lock()
		defer wmu.Unlock()
		f.record("<", m)
		proto.WriteMessage(c, m)
	}
	streams := map[uint32]*fakeStream{}
	var smu sync.Mutex
	next := uint32(100)
	for {
		m, err := proto.ReadMessage(c, 0)
		if err != nil {
			smu.Lock()
			for _, s := range streams {
				close(s.in)
			}
			smu.Unlock()
			return
		}
		f.record(">", m)
		switch m.Command {
		case proto.CmdCNXN:
			b := proto.Banner{Kind: "device", Props: map[string]string{"ro.product.name": "fake", "ro.product.model": "Fake_Phone", "ro.product.device": "fake"}, Features: f.features}
			send(proto.Message{Command: proto.CmdCNXN, Arg0: proto.Version, Arg1: uint32(f.maxData), Data: []byte(b.String())})
		case proto.CmdOPEN:
			service := strings.TrimRight(string(m.Data), "\x00")
			if service == "refuse:" {
				send(proto.Message{Command: proto.CmdCLSE, Arg1: m.Arg0})
				continue
			}
			s := &fakeStream{in: make(chan []byte, 64), okay: make(chan struct{}, 1), local: next, remote: m.Arg0}
			next++
			smu.Lock()
			streams[s.local] = s
			smu.Unlock()
			send(proto.Message{Command: proto.CmdOKAY, Arg0: s.local, Arg1: s.remote})
			go func() {
				out := &fakeWriter{f: f, s: s, send: send}
				f.run(service, s, out)
				send(proto.Message{Command: proto.CmdCLSE, Arg0: s.local, Arg1: s.remote})
			}()
		case proto.CmdWRTE:
			smu.Lock()
			s := streams[m.Arg1]
			smu.Unlock()
			if s != nil {
				// OKAY before handing the data on, so the transcript order
				// does not depend on goroutine scheduling.
				send(proto.Message{Command: proto.CmdOKAY, Arg0: s.local, Arg1: s.remote})
				s.in <- m.Data
			}
		case proto.CmdOKAY:
			smu.Lock()
			s := streams[m.Arg1]
			smu.Unlock()
			if s != nil {
				select {
				case s.okay <- struct{}{}:
				default:
				}
			}
		case proto.CmdCLSE:
			smu.Lock()
			if s := streams[m.Arg1]; s != nil {
				delete(streams, m.Arg1)
				close(s.in)
			}
			smu.Unlock()
		}
	}
}

// fakeWriter sends WRTEs of at most maxData and waits for each OKAY.
type fakeWriter struct {
	f    *fakeADBD
	s    *fakeStream
	send func(proto.Message)
}

func (w *fakeWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), w.f.maxData)
		w.send(proto.Message{Command: proto.CmdWRTE, Arg0: w.s.local, Arg1: w.s.remote, Data: append([]byte{}, p[:k]...)})
		<-w.s.okay
		n += k
		p = p[k:]
	}
	return n, nil
}

// streamReader reads the host's WRTE payloads as one byte stream.
type streamReader struct {
	s   *fakeStream
	buf []byte
}

func (r *streamReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		b, ok := <-r.s.in
		if !ok {
			return 0, io.EOF
		}
		r.buf = b
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (f *fakeADBD) run(service string, s *fakeStream, w io.Writer) {
	in := &streamReader{s: s}
	name, arg, _ := strings.Cut(service, ":")
	switch name {
	case "shell,v2,raw":
		out, errOut, code := f.shell(arg, in, true)
		var b []byte
		if len(out) > 0 {
			b = proto.EncodeShell(b, proto.ShellStdout, out)
		}
		if len(errOut) > 0 {
			b = proto.EncodeShell(b, proto.ShellStderr, errOut)
		}
		w.Write(proto.EncodeShell(b, proto.ShellExit, []byte{byte(code)}))
	case "shell":
		out, errOut, _ := f.shell(arg, in, false)
		w.Write(append(out, errOut...))
	case "exec":
		var n int
		if _, err := fmt.Sscanf(arg, "blob %d", &n); err == nil {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(i * 7)
			}
			w.Write(b)
		}
	case "sync":
		f.sync(in, w)
	}
}

func (f *fakeADBD) shell(cmd string, in io.Reader, v2 bool) (stdout, stderr []byte, code int) {
	switch {
	case strings.HasPrefix(cmd, "echo "):
		return []byte(strings.TrimPrefix(cmd, "echo ") + "\n"), nil, 0
	case cmd == "fail":
		return []byte("partial"), []byte("it broke\n"), 3
	case cmd == "cat":
		var buf bytes.Buffer
		if v2 {
			for {
				p, err := proto.ReadShell(in, 1<<20)
				if err != nil || p.ID == proto.ShellCloseStdin {
					break
				}
				buf.Write(p.Data)
			}
		}
		return buf.Bytes(), nil, 0
	}
	return nil, []byte("/system/bin/sh: " + cmd + ": inaccessible or not found\n"), 127
}

func (f *fakeADBD) sync(in io.Reader, w io.Writer) {
	for {
		req, err := proto.ReadSyncRequest(in)
		if err != nil || req.ID == proto.SyncQUIT {
			return
		}
		f.mu.Lock()
		data, ok := f.files[req.Path]
		f.mu.Unlock()
		switch req.ID {
		case proto.SyncSTAT:
			if ok {
				w.Write(proto.AppendStatV1(nil, 0o100644, uint32(len(data)), 1700000000))
			} else {
				w.Write(proto.AppendStatV1(nil, 0, 0, 0))
			}
		case proto.SyncSTA2:
			st := proto.SyncStat{Error: proto.ErrnoNOENT}
			if ok {
				st = proto.SyncStat{Mode: 0o100644, Size: uint64(len(data)), Mtime: 1700000000, Nlink: 1}
			}
			w.Write(proto.AppendStatV2(nil, proto.SyncSTA2, st))
		case proto.SyncLIST, proto.SyncLIS2:
			var b []byte
			for _, name := range []string{".", "..", "hello.txt"} {
				d := proto.SyncDent{Name: name, Stat: proto.SyncStat{Mode: 0o100644, Size: 22, Mtime: 1700000000}}
				if req.ID == proto.SyncLIS2 {
					b = proto.AppendDentV2(b, d)
				} else {
					b = proto.AppendDentV1(b, d)
				}
			}
			if req.ID == proto.SyncLIS2 {
				b = proto.AppendDentV2Done(b)
			} else {
				b = proto.AppendDentV1Done(b)
			}
			w.Write(b)
		case proto.SyncRECV:
			if !ok {
				w.Write(proto.AppendSyncFail(nil, "No such file or directory"))
				continue
			}
			var b []byte
			for len(data) > 0 {
				k := min(len(data), proto.SyncMaxData)
				b = proto.AppendSyncData(b, data[:k])
				data = data[k:]
			}
			w.Write(proto.AppendSyncDone(b, 0))
		case proto.SyncSEND:
			path, _, _ := strings.Cut(req.Path, ",")
			var buf bytes.Buffer
			for {
				p, err := proto.ReadSyncPacket(in, 0)
				if err != nil {
					return
				}
				if p.ID == proto.SyncDONE {
					break
				}
				buf.Write(p.Data)
			}
			f.mu.Lock()
			f.files[path] = buf.Bytes()
			f.mu.Unlock()
			w.Write(proto.AppendSyncOkay(nil))
		}
	}
}
