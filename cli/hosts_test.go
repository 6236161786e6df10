package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apexagent/apex/adb/adbtest"
)

// TestHostsCommand: apex hosts lists the hosts, the caps a session host
// recorded and its sessions, an orphan marked as such.
func TestHostsCommand(t *testing.T) {
	pointAt(t, adbtest.StartServer(t))
	state := t.TempDir()
	// A session whose owner has ended: a process that ran and exited.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	rec := map[string]any{"target": map[string]any{"id": "booted/127.0.0.1:7001", "serial": "127.0.0.1:7001"}, "host": "booted",
		"pid": dead.Process.Pid, "owner": dead.Process.Pid, "started": "2026-01-02T03:04:05Z"}
	write := func(name string, v any) {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(state, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("booted-127.0.0.1_7001.json", rec)
	write("host-booted.json", map[string]any{"host": "booted", "run_cap": 2, "idle_cap": "5m0s", "owner": dead.Process.Pid})

	out := mustRun(t, "hosts", "--state-dir", state)
	for _, want := range []string{"adb server", "WebDriverAgent", "emulator", "booted/127.0.0.1:7001", "orphaned"} {
		if !strings.Contains(out, want) {
			t.Errorf("apex hosts lacks %q:\n%s", want, out)
		}
	}
	if f := row(t, out, "booted"); len(f) < 7 || f[5] != "2" || f[6] != "5m0s" { // the kind is two words
		t.Errorf("booted row = %q; want run cap 2, idle cap 5m0s", f)
	}

	var got struct {
		Hosts    []hostRow `json:"hosts"`
		Sessions []struct {
			Orphaned bool `json:"orphaned"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "--json", "hosts", "--state-dir", state)), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Hosts) != 5 || len(got.Sessions) != 1 || !got.Sessions[0].Orphaned {
		t.Errorf("--json hosts = %+v", got)
	}
}
