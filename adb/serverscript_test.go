package adb

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/adb/proto"
)

// scriptedServer plays an adb server from a script: each request text maps
// to the raw bytes to answer. It records the bytes both ways per connection.
type scriptedServer struct {
	ln     net.Listener
	script map[string]string
	mu     sync.Mutex
	log    []string
	conns  int
}

func startScripted(t *testing.T, script map[string]string) *scriptedServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scriptedServer{ln: ln, script: script}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns++
			n := s.conns
			s.mu.Unlock()
			s.serve(c, n) // one at a time keeps the transcript ordered
		}
	}()
	return s
}

func (s *scriptedServer) note(format string, args ...any) {
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func (s *scriptedServer) serve(c net.Conn, n int) {
	defer c.Close()
	for {
		var h [4]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			return
		}
		var size int
		fmt.Sscanf(string(h[:]), "%04x", &size)
		body := make([]byte, size)
		io.ReadFull(c, body)
		s.note("conn %d > %q", n, string(h[:])+string(body))
		reply, ok := s.script[string(body)]
		if !ok {
			reply = "FAIL" + fmt.Sprintf("%04x", len("unknown host service")) + "unknown host service"
		}
		s.note("conn %d < %q", n, reply)
		c.Write([]byte(reply))
		if !strings.HasPrefix(reply, "OKAY") || !strings.HasPrefix(string(body), "host:transport") {
			return // a host query, a failure, or a service: one exchange
		}
	}
}

func hexed(s string) string { return fmt.Sprintf("%04x%s", len(s), s) }

// TestServerTranscript pins the bytes the client sends for each host
// service and how it reads the replies.
func TestServerTranscript(t *testing.T) {
	devices := "emulator-5554          device product:sdk_gphone64 model:sdk_gphone64_x86_64 device:emu64x transport_id:1\n" +
		"R58M123                unauthorized usb:1-1 transport_id:2\n" +
		"0123456789ABCDEF       no permissions (missing udev rules? user is in the plugdev group); see [http://developer.android.com/tools/device.html] usb:1-2 transport_id:3\n" +
		"127.0.0.1:6520         offline transport_id:4\n"
	shellOut := string(proto.EncodeShell(proto.EncodeShell(nil, proto.ShellStdout, []byte("Physical size: 1080x2400\n")), proto.ShellExit, []byte{0}))
	s := startScripted(t, map[string]string{
		"host:version":                        "OKAY" + hexed("0029"),
		"host:devices-l":                      "OKAY" + hexed(devices),
		"host:connect:127.0.0.1:6520":         "OKAY" + hexed("connected to 127.0.0.1:6520"),
		"host:connect:127.0.0.1:9":            "OKAY" + hexed("failed to connect to '127.0.0.1:9': Connection refused"),
		"host:disconnect:127.0.0.1:6520":      "OKAY" + hexed("disconnected 127.0.0.1:6520"),
		"host-serial:127.0.0.1:6520:features": "OKAY" + hexed("shell_v2,cmd,stat_v2"),
		"host:transport:127.0.0.1:6520":       "OKAY",
		"shell,v2,raw:wm size":                "OKAY" + shellOut,
		"exec:screencap -p":                   "OKAY\x89PNG",
		"host:transport:gone":                 "FAIL" + hexed("device 'gone' not found"),
	})
	c, err := NewClient(&Options{Addr: s.ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out strings.Builder
	show := func(op string, v any, err error) {
		j, _ := json.Marshal(v)
		fmt.Fprintf(&out, "%s: %s err=%v\n", op, j, err)
	}
	v, err := c.Version(ctx)
	show("version", v, err)
	devs, err := c.Devices(ctx)
	show("devices", devs, err)
	for _, d := range devs {
		fmt.Fprintf(&out, "  hint %s: %s\n", d.Serial, d.Hint())
	}
	msg, err := c.Connect(ctx, "127.0.0.1:6520")
	show("connect", msg, err)
	msg, err = c.Connect(ctx, "127.0.0.1:9")
	show("connect refused", msg, err)
	show("disconnect", nil, c.Disconnect(ctx, "127.0.0.1:6520"))
	dev := c.Device("127.0.0.1:6520")
	b, err := Shell(ctx, dev, "wm size")
	show("shell", string(b), err)
	b, err = Exec(ctx, dev, "screencap -p")
	show("exec", string(b), err)
	_, err = Shell(ctx, c.Device("gone"), "true")
	show("shell on unknown device", nil, err)
	fmt.Fprintf(&out, "  is ErrGone: %v\n", errorsIs(err, ErrGone))
	golden(t, "server.golden", out.String()+"--- wire\n"+strings.Join(s.log, "\n")+"\n")
}
