package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/plane"
	"github.com/apexagent/apex/farm/registry"
)

// TestRunOnAFarmDevice: apex run --farm leases a phone a farm host serves
// and runs the script on it through the host; the device is free again
// after, and apex farm devices lists it.
func TestRunOnAFarmDevice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := farmtest.Start(ctx, t, 1)
	_, js := p.Conn()
	reg, err := registry.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil { // the host registers its phone at start
		if devs, _ := reg.Devices(ctx); len(devs) == 1 {
			break
		}
	}
	file := filepath.Join(t.TempDir(), "wifi.yaml")
	os.WriteFile(file, []byte("android:\n  launch: com.apex.settings\ntasks:\n  - name: wifi\n    flow:\n      - tap: Network & internet\n      - assert: {checked: {id: wifi}}\n"), 0o644)
	out, errOut, err := run(t, "run", "--farm", p.ClientURL(), "--device", "h1/sim-1", "--report-dir", t.TempDir(), file)
	if err != nil {
		t.Fatalf("apex run --farm: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	if !strings.Contains(out+errOut, "PASS") {
		t.Errorf("apex run --farm did not pass:\n%s%s", out, errOut)
	}
	out, _, err = run(t, "farm", "devices", "--farm", p.ClientURL())
	if err != nil || !strings.Contains(out, "h1/sim-1") {
		t.Fatalf("apex farm devices: %v\n%s", err, out)
	}
	if line := strings.Split(out, "\n")[1]; strings.Contains(line, "apex run") {
		t.Errorf("the device is still held after apex run ended: %s", line)
	}
}

// TestFarmUsersAndTokens: with the farm's admin token, apex farm makes a
// user, a project, the user's tester token and a join token; the user's
// token lists devices but may not manage users.
func TestFarmUsersAndTokens(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const root = "the-farm-admin-token"
	p, err := plane.Start(ctx, plane.Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Token: root})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	url := p.ClientURL()
	for _, args := range [][]string{
		{"farm", "user", "add", "alice"},
		{"farm", "project", "add", "shop"},
		{"farm", "project", "member", "add", "shop", "alice"},
	} {
		if out, errOut, err := run(t, append(args, "--farm", url, "--token", root)...); err != nil {
			t.Fatalf("apex %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		}
	}
	out, _, err := run(t, "farm", "project", "list", "--farm", url, "--token", root)
	if err != nil || !strings.Contains(out, "shop") || !strings.Contains(out, "alice") {
		t.Errorf("apex farm project list: %v\n%s", err, out)
	}
	tok, errOut, err := run(t, "farm", "token", "create", "--user", "alice", "--role", "tester", "--farm", url, "--token", root)
	if err != nil || !strings.HasPrefix(tok, "apexu_") {
		t.Fatalf("apex farm token create: %v\n%s%s", err, tok, errOut)
	}
	tok = strings.TrimSpace(tok)
	join, _, err := run(t, "farm", "join-token", "--farm", url, "--token", root)
	if err != nil || !strings.HasPrefix(join, "apexj_") {
		t.Fatalf("apex farm join-token: %v\n%s", err, join)
	}
	if out, errOut, err := run(t, "farm", "devices", "--farm", url, "--token", tok); err != nil {
		t.Errorf("apex farm devices with alice's token: %v\n%s%s", err, out, errOut)
	}
	if _, _, err := run(t, "farm", "user", "list", "--farm", url, "--token", tok); err == nil {
		t.Error("apex farm user list with a tester's token succeeded")
	}
}
