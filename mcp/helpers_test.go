package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/mcp"
	"github.com/apexagent/apex/sim/lab"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// simHosts starts n simulated phones and returns a host over them.
func simHosts(t testing.TB, n int) (*lab.Lab, []device.Host) {
	t.Helper()
	return simHostsWith(t, lab.Options{Android: n, Seed: noPopupSeed})
}

// noPopupSeed starts the Shop without its sale popup, which opens after a
// delay and would take a Back or a tap meant for the shop on a busy
// machine; tests about the popup choose their seed.
const noPopupSeed = 2

// simHostsWith starts the lab opts describes and returns a host over it.
func simHostsWith(t testing.TB, opts lab.Options) (*lab.Lab, []device.Host) {
	t.Helper()
	l, err := lab.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var addrs []string
	for _, d := range l.Devices() {
		addrs = append(addrs, d.Addr)
	}
	return l, []device.Host{android.NewDirectHost("sim", addrs, nil)}
}

// simID is the device id of lab device i.
func simID(l *lab.Lab, i int) string { return device.QualifiedID("sim", l.Devices()[i].Serial) }

// clock is a settable clock for idle timeouts.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// newServer builds a server and closes it when the test ends.
func newServer(t *testing.T, opts *mcp.Options) *mcp.Server {
	t.Helper()
	s, err := mcp.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// session is one MCP client session connected in memory.
type session struct {
	t  *testing.T
	cs *sdk.ClientSession
}

func connect(t *testing.T, s *mcp.Server) *session {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return &session{t: t, cs: cs}
}

// call calls a tool and returns its result, failing on protocol errors.
func (c *session) call(name string, args map[string]any) *sdk.CallToolResult {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: %v", name, err)
	}
	return r
}

// ok calls a tool that must succeed and returns its text.
func (c *session) ok(name string, args map[string]any) string {
	c.t.Helper()
	r := c.call(name, args)
	if r.IsError {
		c.t.Fatalf("%s(%v) failed: %s", name, args, textOf(r))
	}
	return textOf(r)
}

// fails calls a tool that must fail and returns its error text.
func (c *session) fails(name string, args map[string]any) string {
	c.t.Helper()
	r := c.call(name, args)
	if !r.IsError {
		c.t.Fatalf("%s(%v) succeeded, want an error: %s", name, args, textOf(r))
	}
	return textOf(r)
}

func (c *session) toolNames() []string {
	c.t.Helper()
	r, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		c.t.Fatal(err)
	}
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func (c *session) tool(name string) *sdk.Tool {
	c.t.Helper()
	r, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, tl := range r.Tools {
		if tl.Name == name {
			return tl
		}
	}
	c.t.Fatalf("no tool %s", name)
	return nil
}

func textOf(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// schemaOf returns a tool's input schema as a generic map.
func schemaOf(t *testing.T, tl *sdk.Tool) map[string]any {
	t.Helper()
	b, err := json.Marshal(tl.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// openWhenReleased opens a device another session held until it ended:
// the server releases it when it sees the session end, so it waits for that.
func (c *session) openWhenReleased(id string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		r := c.call("device_open", map[string]any{"device": id})
		if !r.IsError {
			return
		}
		if !strings.Contains(textOf(r), "in use by another session") {
			c.t.Fatalf("device_open after the owner left: %s", textOf(r))
		}
		select {
		case <-ctx.Done():
			c.t.Fatal("the device was not released when its session ended")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// openSim starts one simulated phone, a server over it with opts (Hosts
// filled in), and a session that has opened the phone.
func openSim(t *testing.T, opts mcp.Options) (*lab.Lab, string, *session) {
	t.Helper()
	l, hosts := simHosts(t, 1)
	id := simID(l, 0)
	opts.Hosts = hosts
	c := connect(t, newServer(t, &opts))
	c.ok("device_open", map[string]any{"device": id})
	return l, id, c
}
