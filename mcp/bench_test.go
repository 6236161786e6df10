package mcp_test

import (
	"context"
	"testing"

	"github.com/apexagent/apex/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkTools measures tool calls through the in-memory transport on a
// simulated phone (sim/lab over adbd on loopback): the MCP round trip plus
// the device work each tool does.
func BenchmarkTools(b *testing.B) {
	for _, bc := range []struct {
		name string
		tool string
		args func(id string) map[string]any
	}{
		{"device_list", "device_list", func(string) map[string]any { return nil }},
		{"observe", "observe", func(id string) map[string]any { return map[string]any{"device": id} }},
		{"tap by id (resolve + fresh check + tap)", "tap", func(id string) map[string]any { return map[string]any{"device": id, "locate": "e1"} }},
		{"device_screenshot 1024", "device_screenshot", func(id string) map[string]any { return map[string]any{"device": id} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			l, hosts := simHosts(b, 1)
			id := simID(l, 0)
			s, err := mcp.New(&mcp.Options{Hosts: hosts})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			st, ct := sdk.NewInMemoryTransports()
			ss, err := s.MCP().Connect(ctx, st, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ss.Close()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "0"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			for _, name := range []string{"device_open", "observe"} {
				if r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{"device": id}}); err != nil || r.IsError {
					b.Fatalf("%s: %v %v", name, err, r)
				}
			}
			args := bc.args(id)
			b.ResetTimer()
			for b.Loop() {
				r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: bc.tool, Arguments: args})
				if err != nil || r.IsError {
					b.Fatalf("%s: %v %v", bc.tool, err, r)
				}
			}
		})
	}
}
