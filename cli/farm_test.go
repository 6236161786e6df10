package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/farm/farmtest"
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
