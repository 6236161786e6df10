package cli

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/mcp"
	"github.com/apexagent/apex/ocr"
)

// TestMCPFarm: apex mcp --farm offers the farm's phones to a real MCP
// client; device_open leases one (anyone else is refused it), its tools
// drive it through its host, and device_close releases the lease.
func TestMCPFarm(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p := farmtest.Start(ctx, t, 1)
	leases := farmtest.Leases(ctx, t, p)
	env := &Env{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Log: slog.New(slog.DiscardHandler)}
	cmd := newCmdMCP(env)
	if err := cmd.ParseFlags([]string{"--farm", p.ClientURL()}); err != nil {
		t.Fatal(err)
	}
	opts := &MCPOptions{OCR: "off", Idle: time.Minute, Policy: "standard", Dir: t.TempDir()}
	opts.Farm.URL = cmd.Flags().Lookup("farm").Value.String()
	hosts, release, err := mcpHosts(ctx, env, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	engine := ocr.NewLazy(nil)
	defer engine.Close()
	srv, err := newMCPServer(env, hosts, mcp.Standard, opts, engine, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "farm-test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()
	call := func(name string, args map[string]any) string {
		t.Helper()
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var text strings.Builder
		for _, c := range r.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		if r.IsError {
			t.Fatalf("%s(%v) failed: %s", name, args, text.String())
		}
		return text.String()
	}
	const id = "farm/h1/sim-1"
	for ctx.Err() == nil { // the host registers its phone at start
		if strings.Contains(call("device_list", nil), id) {
			break
		}
	}
	call("device_open", map[string]any{"device": id})
	rec, held, err := leases.Current(ctx, "h1/sim-1")
	if err != nil || !held || !strings.Contains(rec.Holder, "(mcp)") {
		t.Fatalf("the farm lease after device_open: %+v held=%v %v; want held by apex mcp", rec, held, err)
	}
	if _, err := leases.Acquire(ctx, lease.Record{Resource: "h1/sim-1", Holder: "someone else"}); err == nil {
		t.Error("someone else leased the phone MCP holds")
	}
	if obs := call("observe", map[string]any{"device": id}); !strings.Contains(obs, "Settings") {
		t.Errorf("observe through the farm does not show the launcher:\n%.400s", obs)
	}
	call("device_close", map[string]any{"device": id})
	if _, held, err := leases.Current(ctx, "h1/sim-1"); err != nil || held {
		t.Errorf("the farm lease after device_close: held=%v %v; want released", held, err)
	}
}
