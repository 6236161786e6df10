package cli

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/internal/patience"
)

func TestMCPFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "root"}, "readonly, standard or full"},
		{[]string{"--app", "x.yaml"}, "add --sim"},
		{[]string{"--adb=false"}, "leaves no devices"},
		{[]string{"--sim", "--ocr", "sometimes"}, "auto, always or off"},
		{[]string{"--adb=false", "--sim", "--http", "0.0.0.0:0"}, "bearer token is required"},
	} {
		var out, errOut bytes.Buffer
		cmd := newCmdMCP(&Env{Out: &out, Err: &errOut, Log: slog.New(slog.DiscardHandler)})
		cmd.SetArgs(tc.args)
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		err := cmd.ExecuteContext(context.Background())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("apex mcp %s: %v, want an error containing %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

// TestMCPSimIOS: --sim=ios offers a simulated iPhone, which opens and
// observes like any device.
func TestMCPSimIOS(t *testing.T) {
	env := &Env{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Log: slog.New(slog.DiscardHandler)}
	ctx := patience.Context(t, 30*time.Second)
	cmd := newCmdMCP(env)
	if err := cmd.ParseFlags([]string{"--sim=ios", "--adb=false"}); err != nil {
		t.Fatal(err)
	}
	opts := &MCPOptions{ADB: false, Sim: true, SimPlatform: "ios"}
	if got := cmd.Flags().Lookup("sim").Value.String(); got != "ios" {
		t.Errorf("--sim=ios parsed as %q", got)
	}
	hosts, release, err := mcpHosts(ctx, env, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ts, err := device.NewRegistry(hosts...).Targets(ctx)
	if err != nil || len(ts) != 1 || ts[0].Platform != device.IOS || !ts[0].Ready() {
		t.Fatalf("targets of --sim=ios: %+v, %v; want one ready iPhone", ts, err)
	}
	d, _, err := device.NewRegistry(hosts...).Open(ctx, ts[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	src, err := d.Source(ctx)
	if err != nil || !strings.Contains(string(src.Data), "XCUIElementType") {
		t.Errorf("source of the simulated iPhone: %v\n%.200s", err, src.Data)
	}
}
