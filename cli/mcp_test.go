package cli

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestMCPFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "root"}, "readonly, standard or full"},
		{[]string{"--app", "x.yaml"}, "add --sim"},
		{[]string{"--adb=false"}, "leaves no devices"},
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
