package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/adb/proto"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/sim/lab"
)

// syncBuffer is a bytes.Buffer safe for the command's goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runSim runs `apex sim args…` until the devices are up, then returns its
// output, the lab and a stop function that waits for the command's end.
func runSim(t *testing.T, args ...string) (string, *lab.Lab, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	root := NewRoot(&out, &errOut)
	root.SetArgs(args)
	labs := make(chan *lab.Lab, 1)
	done := make(chan error, 1)
	simReady = func(l *lab.Lab) { labs <- l }
	t.Cleanup(func() { simReady = nil })
	go func() { done <- root.ExecuteContext(ctx) }()
	select {
	case l := <-labs:
		return out.String(), l, func() error { cancel(); return <-done }
	case err := <-done:
		cancel()
		t.Fatalf("apex %s ended early: %v\n%s", strings.Join(args, " "), err, errOut.String())
	case <-time.After(patience.Of(30 * time.Second)):
		cancel()
		t.Fatalf("apex sim did not start within %v", patience.Of(30*time.Second))
	}
	return "", nil, nil
}

func TestSimPrintsDevicesAndServes(t *testing.T) {
	out, l, stop := runSim(t, "sim", "--android", "2", "--port-base", "0", "--state-addr", "127.0.0.1:0")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("output = %q; want two device lines and the state line", out)
	}
	for i, d := range l.Devices() {
		f := strings.Split(lines[i], "\t")
		if len(f) < 4 || f[1] != "adb" || f[2] != d.Addr || f[3] != "adb connect "+d.Addr {
			t.Fatalf("line %d = %q; want id, adb, %s, the connect command", i, lines[i], d.Addr)
		}
		handshake(t, d.Addr)
	}
	if !strings.HasPrefix(lines[2], "state\thttp\thttp://127.0.0.1:") {
		t.Fatalf("state line = %q", lines[2])
	}
	if err := stop(); err != nil {
		t.Fatalf("apex sim after Ctrl-C: %v", err)
	}
	if _, err := net.DialTimeout("tcp", l.Devices()[0].Addr, time.Second); err == nil {
		t.Fatal("device still accepts connections after the command ended")
	}
}

func TestSimJSON(t *testing.T) {
	out, l, stop := runSim(t, "--json", "sim", "--port-base", "0")
	defer stop()
	var v struct {
		Devices []lab.DeviceInfo `json:"devices"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Devices) != 1 || v.Devices[0].Addr != l.Devices()[0].Addr || v.Devices[0].Protocol != "adb" {
		t.Fatalf("apex --json sim = %q (%v)", out, err)
	}
}

func TestSimRejectsEmulatorPorts(t *testing.T) {
	_, _, err := run(t, "sim", "--port-base", "5555")
	if err == nil || !strings.Contains(err.Error(), "5555") {
		t.Fatalf("apex sim --port-base 5555 err = %v; want one explaining the emulator range", err)
	}
}

// handshake checks that addr answers CNXN with a device banner.
func handshake(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	proto.WriteMessage(c, proto.Message{Command: proto.CmdCNXN, Arg0: proto.Version, Arg1: proto.MaxPayload, Data: []byte("host::features=shell_v2")})
	m, err := proto.ReadMessage(c, 0)
	if err != nil || m.Command != proto.CmdCNXN {
		t.Fatalf("%s: CNXN answer %v, %v", addr, m, err)
	}
	b, err := proto.ParseBanner(string(m.Data))
	if err != nil || b.Kind != "device" || b.Props["ro.product.model"] == "" {
		t.Fatalf("%s: banner %q (%v)", addr, m.Data, err)
	}
}
