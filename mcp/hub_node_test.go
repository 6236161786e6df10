package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestNodeClientDeviceHub: a real MCP client on `apex mcp --profile
// device-hub` sees exactly four tools and completes list → open → (taps
// through the apex do --session command device_open returned) →
// screenshot → close; closing exits the app the session launched and
// ends the command's session.
func TestNodeClientDeviceHub(t *testing.T) {
	node, _ := nodeClient(t)
	apex := buildApex(t)
	addr := startApex(t, `^android-1\tadb\t(\S+)`, "sim", "--port-base", "0")
	state := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(npmDir(), "apex-hub-client.mjs"), apex, "mcp", "--profile", "device-hub", "--adb=false", "--connect", addr)
	cmd.Dir = npmDir()
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(), "APEX_RUNS_DIR="+t.TempDir(), "APEX_SESSIONS_DIR="+state)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("MCP client: %v\n%s", err, stderr.String())
	}
	var s struct {
		Tools                                []string
		Device, Command, Launch, Tap, Closed string
		ScreenshotBytes                      int
		AfterClose                           string
	}
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("client summary %q: %v\n%s", out, err, stderr.String())
	}
	if diff := cmp.Diff([]string{"device_close", "device_list", "device_open", "device_screenshot"}, s.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if s.Device != "adbd/"+addr {
		t.Errorf("opened %q; want adbd/%s", s.Device, addr)
	}
	if !strings.HasPrefix(s.Command, apex+" do --session ") || strings.Contains(s.Command, "--device") {
		t.Errorf("command %q; want %s do --session ID, no device flags", s.Command, apex)
	}
	if !strings.Contains(s.Launch, "Launch") || !strings.Contains(s.Tap, `"Network & internet`) {
		t.Errorf("the CLI said %q and %q; want the launch and the tap on Network & internet", s.Launch, s.Tap)
	}
	if s.ScreenshotBytes < 1000 {
		t.Errorf("screenshot of %d bytes", s.ScreenshotBytes)
	}
	if !strings.Contains(s.Closed, "exited com.android.settings") {
		t.Errorf("device_close said %q; want it to exit the app the session launched", s.Closed)
	}
	if !strings.Contains(s.AfterClose, "no such session") {
		t.Errorf("the session's command after close: %q; want it refused", s.AfterClose)
	}
	if left, _ := filepath.Glob(filepath.Join(state, "agent", "*.json")); len(left) != 0 {
		t.Errorf("session records left after close: %v", left)
	}
}
