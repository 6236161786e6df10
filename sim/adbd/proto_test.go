package adbd

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/adb/proto"
	"github.com/apexagent/apex/sim/adbd/adbdtest"
)

// rawHost is a minimal ADB host for protocol tests.
type rawHost struct {
	t *testing.T
	c net.Conn
}

func dialRaw(t *testing.T, addr string) *rawHost {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawHost{t: t, c: c}
}

func (h *rawHost) send(m proto.Message) {
	h.t.Helper()
	if err := proto.WriteMessage(h.c, m); err != nil {
		h.t.Fatal(err)
	}
}

// recv reads the next message, or fails after 10 s.
func (h *rawHost) recv() proto.Message {
	h.t.Helper()
	h.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	m, err := proto.ReadMessage(h.c, 0)
	if err != nil {
		h.t.Fatalf("read: %v", err)
	}
	return m
}

func (h *rawHost) connect(maxData uint32) proto.Message {
	h.t.Helper()
	h.send(proto.Message{Command: proto.CmdCNXN, Arg0: proto.Version, Arg1: maxData, Data: []byte("host::features=shell_v2,cmd")})
	return h.recv()
}

// lockedLog collects log output for assertions.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestGarbageClosesOnlyThatConnection(t *testing.T) {
	var logs lockedLog
	_, addr := serve(t, newFakePhone(), &Options{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	good := dialRaw(t, addr)
	if m := good.connect(proto.MaxPayload); m.Command != proto.CmdCNXN {
		t.Fatalf("answer to CNXN = %v", m)
	}
	bad := dialRaw(t, addr)
	bad.c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	bad.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := bad.c.Read(make([]byte, 1)); err == nil {
		t.Fatal("connection that sent garbage is still open")
	}
	if !strings.Contains(logs.String(), "adbd: closing connection after a bad message") {
		t.Fatalf("no log line for the garbage: %q", logs.String())
	}
	// The first connection still works.
	good.send(proto.Message{Command: proto.CmdOPEN, Arg0: 1, Data: []byte("exec:echo still here\x00")})
	if m := good.recv(); m.Command != proto.CmdOKAY {
		t.Fatalf("OPEN answer = %v", m)
	}
	if m := good.recv(); m.Command != proto.CmdWRTE || string(m.Data) != "still here\n" {
		t.Fatalf("output = %v %q", m, m.Data)
	}
}

func TestFlowControlAndMaxData(t *testing.T) {
	s, addr := serve(t, newFakePhone(), nil)
	s.FS().WriteFile("/sdcard/big", bytes.Repeat([]byte("x"), 10000), 0o644)
	h := dialRaw(t, addr)
	cnxn := h.connect(4096)
	if cnxn.Arg1 != proto.MaxPayload {
		t.Fatalf("device maxdata = %d", cnxn.Arg1)
	}
	h.send(proto.Message{Command: proto.CmdOPEN, Arg0: 7, Data: []byte("exec:cat /sdcard/big\x00")})
	okay := h.recv()
	if okay.Command != proto.CmdOKAY || okay.Arg1 != 7 {
		t.Fatalf("OPEN answer = %v", okay)
	}
	local := okay.Arg0
	total := 0
	for total < 10000 {
		m := h.recv()
		if m.Command != proto.CmdWRTE || m.Arg0 != local || m.Arg1 != 7 {
			t.Fatalf("got %v; want WRTE(%d, 7)", m, local)
		}
		if len(m.Data) > 4096 {
			t.Fatalf("WRTE of %d bytes beyond the host's maxdata 4096", len(m.Data))
		}
		total += len(m.Data)
		if total == 10000 {
			break
		}
		// Until we OKAY, the device must not send more.
		h.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if extra, err := proto.ReadMessage(h.c, 0); err == nil {
			t.Fatalf("device sent %v before the OKAY for its WRTE", extra)
		}
		h.send(proto.Message{Command: proto.CmdOKAY, Arg0: 7, Arg1: local})
	}
	// The end of the output need not wait for the last OKAY (a real
	// adbd closes as soon as it reads the command's end).
	if m := h.recv(); m.Command != proto.CmdCLSE {
		t.Fatalf("after the output: %v; want CLSE", m)
	}
}

func TestUnknownServiceRefused(t *testing.T) {
	_, addr := serve(t, newFakePhone(), nil)
	h := dialRaw(t, addr)
	h.connect(proto.MaxPayload)
	h.send(proto.Message{Command: proto.CmdOPEN, Arg0: 3, Data: []byte("reboot:bootloader\x00")})
	if m := h.recv(); m.Command != proto.CmdCLSE || m.Arg0 != 0 || m.Arg1 != 3 {
		t.Fatalf("answer to an unknown service = %v; want CLSE(0, 3)", m)
	}
}

func TestAuthModeIsUnauthorized(t *testing.T) {
	adb := adbdtest.Start(t)
	_, addr := serve(t, newFakePhone(), &Options{Auth: true})
	adb.Run("connect", addr)
	if err := adb.WaitState(addr, "unauthorized", 15*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := adb.Run("-s", addr, "shell", "true"); err == nil || !strings.Contains(string(stderr), "unauthorized") {
		t.Fatalf("shell on an unauthorized device: err=%v stderr=%q", err, stderr)
	}
}

func TestCloseEndsEverything(t *testing.T) {
	s, addr := serve(t, newFakePhone(), nil)
	h := dialRaw(t, addr)
	h.connect(proto.MaxPayload)
	h.send(proto.Message{Command: proto.CmdOPEN, Arg0: 1, Data: []byte("shell,v2,raw:sleep 100\x00")})
	if m := h.recv(); m.Command != proto.CmdOKAY {
		t.Fatal(m)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return while a command was running")
	}
	h.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, err := proto.ReadMessage(h.c, 0); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal("connection still open after Close")
			}
			return
		}
	}
}

// FuzzServeConn feeds arbitrary bytes after a valid handshake: the device
// must never panic or hang, whatever it is sent.
func FuzzServeConn(f *testing.F) {
	open := func(svc string) []byte {
		return proto.Message{Command: proto.CmdOPEN, Arg0: 1, Data: []byte(svc + "\x00")}.Encode(nil)
	}
	f.Add(open("shell:echo hi"))
	f.Add(append(open("sync:"), proto.Message{Command: proto.CmdWRTE, Arg0: 1, Arg1: 1, Data: proto.AppendSyncRequest(nil, proto.SyncLIST, "/sdcard")}.Encode(nil)...))
	f.Add(proto.Message{Command: proto.CmdWRTE, Arg0: 5, Arg1: 99, Data: []byte("x")}.Encode(nil))
	f.Add([]byte("\x00\x01garbage"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s := NewServer(newFakePhone(), nil)
		defer s.Close()
		host, dev := net.Pipe()
		s.ServeConn(dev)
		go func() {
			for { // drain what the device says
				if _, err := proto.ReadMessage(host, 0); err != nil {
					return
				}
			}
		}()
		host.SetWriteDeadline(time.Now().Add(2 * time.Second))
		proto.WriteMessage(host, proto.Message{Command: proto.CmdCNXN, Arg0: proto.Version, Arg1: 4096, Data: []byte("host::")})
		host.Write(in)
		host.Close()
	})
}

// FuzzSyncService sends arbitrary bytes on a sync: stream.
func FuzzSyncService(f *testing.F) {
	f.Add(proto.AppendSyncRequest(proto.AppendSyncRequest(nil, proto.SyncSTA2, "/sdcard"), proto.SyncQUIT, ""))
	f.Add(proto.AppendSyncDone(proto.AppendSyncData(proto.AppendSyncRequest(nil, proto.SyncSEND, "/sdcard/f,33188"), []byte("abc")), 1))
	f.Add(proto.AppendSyncRequest(nil, proto.SyncRECV, "/nope"))
	f.Add([]byte("SEND\x05\x00\x00\x00/x,1xDATA\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s := NewServer(newFakePhone(), nil)
		defer s.Close()
		host, dev := net.Pipe()
		s.ServeConn(dev)
		go func() {
			for {
				m, err := proto.ReadMessage(host, 0)
				if err != nil {
					return
				}
				if m.Command == proto.CmdWRTE {
					proto.WriteMessage(host, proto.Message{Command: proto.CmdOKAY, Arg0: m.Arg1, Arg1: m.Arg0})
				}
			}
		}()
		host.SetWriteDeadline(time.Now().Add(2 * time.Second))
		proto.WriteMessage(host, proto.Message{Command: proto.CmdCNXN, Arg0: proto.Version, Arg1: 4096, Data: []byte("host::")})
		proto.WriteMessage(host, proto.Message{Command: proto.CmdOPEN, Arg0: 1, Data: []byte("sync:\x00")})
		for len(in) > 0 {
			n := min(len(in), 4096)
			proto.WriteMessage(host, proto.Message{Command: proto.CmdWRTE, Arg0: 1, Arg1: 1, Data: in[:n]})
			in = in[n:]
		}
		host.Close()
	})
}

func FuzzParseAPKManifest(f *testing.F) {
	f.Add([]byte(`<manifest package="a.b"><application android:label="A"/></manifest>`))
	f.Add(axmlSample())
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) >= 2 && in[0] == 3 && in[1] == 0 {
			parseAXML(in)
		} else {
			parseTextManifest(in)
		}
	})
}
