package cli

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
)

// Midscene's own PlaygroundSDK (npm @midscene/playground, remote
// execution) drives apex playground --sim unchanged: the client script
// (test/npm/midscene-playground-client.mjs) says what it checks.
func TestPlaygroundMidsceneClient(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	npm := filepath.Join(filepath.Dir(file), "..", "test", "npm")
	if _, err := os.Stat(filepath.Join(npm, "node_modules", "@midscene", "playground", "package.json")); err != nil {
		t.Skip("@midscene/playground not installed in test/npm (run `make deps-npm`): skipping Midscene's playground client")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed: skipping Midscene's playground client")
	}
	var out, errOut bytes.Buffer
	env := &Env{Out: &out, Err: &errOut, Log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(3*time.Minute))
	defer cancel()
	url, done := servePlayground(t, ctx, env, &PlaygroundOptions{
		Device:  DeviceFlags{Sim: true},
		Port:    0,
		Dir:     t.TempDir(),
		Config:  emptyFile(t),
		Getenv:  func(string) string { return "" },
		OpenURL: func(context.Context, string) error { return nil },
	})
	cmd := exec.CommandContext(ctx, node, filepath.Join(npm, "midscene-playground-client.mjs"), url[:len(url)-1])
	cmd.Dir = npm
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("Midscene's client: %v\nstdout:\n%s\nstderr:\n%s\nplayground:\n%s", err, stdout.String(), stderr.String(), errOut.String())
	}
	t.Logf("Midscene's client: %s", stdout.String())
	cancel()
	<-done
}
