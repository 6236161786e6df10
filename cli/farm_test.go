package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/farm/api"
	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/host"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/plane"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/sim/adbd/adbdtest"
)

// TestRunOnAFarmDevice: apex run --farm leases a phone a farm host serves
// and runs the script on it through the host; the device is free again
// after, and apex farm devices lists it.
func TestRunOnAFarmDevice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p := farmtest.Start(ctx, t, 1)
	farmtest.WaitDevices(ctx, t, p, 1)
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

// TestPlaygroundOnAFarm: apex playground --farm lists the farm's devices
// on its page, leases the one a session opens, drives it through its host
// and releases it when the session ends.
func TestPlaygroundOnAFarm(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p := farmtest.Start(ctx, t, 0)
	var out, errOut bytes.Buffer
	env := &Env{Out: &out, Err: &errOut, Log: slog.New(slog.DiscardHandler)}
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	url, done := servePlayground(t, pctx, env, &PlaygroundOptions{Device: DeviceFlags{Farm: p.ClientURL()},
		Dir: t.TempDir(), Config: emptyFile(t), Getenv: func(string) string { return "" }, NoOpen: true})
	// A farm without devices: the page says where they come from.
	if _, setup := getJSON(t, "GET", url+"session/setup", nil); !strings.Contains(fmt.Sprint(setup["warnings"]), "no ready device on the farm at "+p.ClientURL()) {
		t.Errorf("setup on an empty farm: %v, want a warning naming the farm", setup["warnings"])
	}
	_, js := p.Conn()
	farmtest.StartHost(ctx, t, js, host.Options{ID: "h1", Sim: 1, RunsDir: t.TempDir()})
	farmtest.WaitDevices(ctx, t, p, 1)

	resp, err := http.Get(url + "session/targets")
	if err != nil {
		t.Fatal(err)
	}
	var ts []map[string]any
	err = json.NewDecoder(resp.Body).Decode(&ts)
	resp.Body.Close()
	if err != nil || len(ts) != 1 || ts[0]["id"] != "farm/h1/sim-1" {
		t.Fatalf("targets = %v (%v), want the farm's phone farm/h1/sim-1", ts, err)
	}
	if code, m := getJSON(t, "POST", url+"session", map[string]string{"deviceId": "farm/h1/sim-1"}); code != 200 {
		t.Fatalf("open the farm's phone: %d %v", code, m)
	}
	held, _, err := run(t, "farm", "leases", "--farm", p.ClientURL())
	if err != nil || !strings.Contains(held, "\nh1/sim-1  ") {
		t.Errorf("apex farm leases while the playground drives the phone: %v\n%s", err, held)
	}
	if code, m := getJSON(t, "POST", url+"interact", map[string]any{"action": "Tap", "params": map[string]any{"locate": "Settings"}}); code != 200 || !strings.Contains(m["scene"].(string), "Network & internet") {
		t.Errorf("tap Settings on the farm's phone: %d %v", code, m)
	}
	getJSON(t, "DELETE", url+"session", nil)
	if free, _, err := run(t, "farm", "leases", "--farm", p.ClientURL()); err != nil || strings.Contains(free, "h1/sim-1") {
		t.Errorf("apex farm leases after the session ended: %v\n%s", err, free)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("playground: %v\n%s", err, errOut.String())
	}
}

// TestFarmUsersAndTokens: with the farm's admin token, apex farm makes a
// user, a project, the user's tester token and a join token; the user's
// token lists devices but may not manage users, and stops working once
// apex farm token revoke revokes it.
func TestFarmUsersAndTokens(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
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
	if _, _, err := run(t, "farm", "token", "revoke", tok, "--farm", url, "--token", tok); err == nil {
		t.Error("a tester revoked a token")
	}
	if out, errOut, err := run(t, "farm", "token", "revoke", "--user", "alice", "--farm", url, "--token", root); err != nil || !strings.Contains(out, "revoked 1 token") {
		t.Fatalf("apex farm token revoke --user alice: %v\n%s%s", err, out, errOut)
	}
	if _, _, err := run(t, "farm", "devices", "--farm", url, "--token", tok); err == nil {
		t.Error("apex farm devices with a revoked token succeeded")
	}
}

// TestFarmRunFollowRunsAndReport: apex farm run --follow streams a run's
// states and steps until it ends and exits 0 only when it passed; apex
// farm runs filters by project, and apex farm report downloads the record.
func TestFarmRunFollowRunsAndReport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p := farmtest.Start(ctx, t, 1)
	dir := t.TempDir()
	pass := filepath.Join(dir, "pass.yaml")
	os.WriteFile(pass, []byte("android:\n  launch: com.apex.settings\ntasks:\n  - name: wifi\n    flow:\n      - tap: Network & internet\n      - assert: {checked: {id: wifi}}\n"), 0o644)
	fail := filepath.Join(dir, "fail.yaml")
	os.WriteFile(fail, []byte("android:\n  launch: com.apex.settings\ntasks:\n  - name: nowhere\n    flow:\n      - assert: {exists: No such screen}\n"), 0o644)

	farmtest.WaitDevices(ctx, t, p, 1)
	if _, _, err := run(t, "farm", "run", "--farm", p.ClientURL(), "--device", "nope", pass); err == nil || !strings.Contains(err.Error(), "apex farm devices") {
		t.Errorf("--device naming no device: %v, want an error pointing at apex farm devices", err)
	}
	out, errOut, err := run(t, "farm", "run", "--farm", p.ClientURL(), "--project", "shop", "--device", "sim-1", "--follow", pass)
	if err != nil {
		t.Fatalf("apex farm run --follow (passing): %v\n%s%s", err, out, errOut)
	}
	id, _, _ := strings.Cut(out, "\t")
	for _, want := range []string{id + "\tqueued\tpass.yaml", id + "\tleased\tpass.yaml on h1/sim-1", id + "\trunning\t", "\tstep 1/3 launch", "\tstep 3/3 assert", id + "\tpassed\tpass.yaml"} {
		if !strings.Contains(out, want) {
			t.Errorf("--follow printed no %q:\n%s", want, out)
		}
	}
	if strings.Contains(errOut, "no device on the farm matches") {
		t.Errorf("a run a device can take warned that none matches:\n%s", errOut)
	}
	// Labels no device has: the run is queued, and the user told at once.
	out, errOut, err = run(t, "farm", "run", "--farm", p.ClientURL(), "--labels", "model=Pixel_99", pass)
	if err != nil || !strings.Contains(out, "\tqueued\tpass.yaml") || !strings.Contains(errOut, "no device on the farm matches model=Pixel_99,platform=android in project default (1 registered") {
		t.Errorf("apex farm run --labels model=Pixel_99: %v\n%s%s\nwant it queued and a warning that no device matches", err, out, errOut)
	}
	if id, _, ok := strings.Cut(out, "\t"); ok {
		run(t, "farm", "cancel", "--farm", p.ClientURL(), id)
	}
	out, errOut, err = run(t, "farm", "run", "--farm", p.ClientURL(), "--project", "bank", "--follow", fail)
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Code != 1 || !strings.Contains(out, "\tfailed\tfail.yaml") {
		t.Errorf("apex farm run --follow (failing): %v, want exit 1 with the failed state\n%s%s", err, out, errOut)
	}
	if strings.Contains(errOut, "no device on the farm matches") {
		t.Errorf("a run without labels on a farm with a free phone warned that none matches:\n%s", errOut)
	}

	out, _, err = run(t, "farm", "runs", "--farm", p.ClientURL(), "--project", "shop")
	if err != nil || !strings.Contains(out, id) || strings.Contains(out, "bank") {
		t.Errorf("apex farm runs --project shop: %v\n%s", err, out)
	}
	rec := filepath.Join(dir, "record")
	out, _, err = run(t, "farm", "report", "--farm", p.ClientURL(), id, "--out", rec)
	if err != nil {
		t.Fatalf("apex farm report: %v\n%s", err, out)
	}
	if page, err := os.ReadFile(filepath.Join(rec, "report.html")); err != nil || !strings.Contains(string(page), "wifi") {
		t.Errorf("the downloaded report: %v\n%.200s", err, page)
	}
	if _, _, err := run(t, "farm", "report", "--farm", p.ClientURL(), "r-none"); err == nil || !strings.Contains(err.Error(), "apex farm runs") {
		t.Errorf("apex farm report of an unknown run: %v, want an error pointing at apex farm runs", err)
	}
}

// TestFarmRunInstallsAnUploadedApp: an APK uploaded once is installed by
// the host (fetched into its cache, pushed and installed with pm install
// through the adb client) before a run that names it; without it the
// same script fails, for the phone does not know the app.
func TestFarmRunInstallsAnUploadedApp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	p := farmtest.Start(ctx, t, 1)
	dir := t.TempDir()
	apk := filepath.Join(dir, "notes.apk")
	os.WriteFile(apk, adbdtest.APK(t, "com.acme.notes", "Acme Notes"), 0o644)
	script := filepath.Join(dir, "notes.yaml")
	os.WriteFile(script, []byte("android:\n  launch: com.acme.notes\ntasks:\n  - name: opens\n    flow:\n      - assert: {exists: Acme Notes is installed.}\n"), 0o644)

	out, _, err := run(t, "farm", "app", "upload", "--farm", p.ClientURL(), "--project", "shop", apk)
	if err != nil || !strings.Contains(out, "\tnotes.apk\tstored apk in project shop") {
		t.Fatalf("apex farm app upload: %v\n%s", err, out)
	}
	hash, _, _ := strings.Cut(out, "\t")
	out, _, err = run(t, "farm", "app", "upload", "--farm", p.ClientURL(), "--project", "shop", "--name", "notes", apk)
	if err != nil || !strings.HasPrefix(out, hash+"\tnotes\talready stored") {
		t.Errorf("the same APK again: %v\n%s", err, out)
	}
	out, _, err = run(t, "farm", "app", "list", "--farm", p.ClientURL(), "--project", "shop")
	if err != nil || strings.Count(out, hash[:12]) != 2 {
		t.Errorf("apex farm app list: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		name string
		app  []string
		pass bool
	}{
		{"by name", []string{"--app", "notes.apk"}, true},
		{"by hash", []string{"--app", hash}, true},
		{"without", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"farm", "run", "--farm", p.ClientURL(), "--project", "shop", "--follow"}, tc.app...)
			out, errOut, err := run(t, append(args, script)...)
			if tc.pass && err != nil || !tc.pass && err == nil {
				t.Errorf("apex farm run %v: %v, want pass %v\n%s%s", tc.app, err, tc.pass, out, errOut)
			}
		})
	}
	if _, _, err := run(t, "farm", "run", "--farm", p.ClientURL(), "--project", "bank", "--app", "notes.apk", script); err == nil || !strings.Contains(err.Error(), "apex farm app upload --project bank") || !strings.Contains(err.Error(), "upload them again") {
		t.Errorf("--app with another project's name: %v, want an error pointing at apex farm app upload --project bank", err)
	}
}

// TestFarmProjectMembership: with a tester's token of project A, apex farm
// run, cancel and report, apex farm app upload and list, and apex run
// --farm work in A and are refused in project B, each saying which
// project and what role it needs; apex farm runs lists A's runs only, and
// apex farm devices and leases name who holds A's phone but not B's.
func TestFarmProjectMembership(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	const root = "the-farm-admin-token"
	p := farmtest.StartToken(ctx, t, root, 0)
	_, js := p.Conn()
	for _, proj := range []string{"A", "B"} {
		farmtest.StartHost(ctx, t, js, host.Options{ID: "h" + proj, Sim: 1, RunsDir: t.TempDir(), Labels: map[string]string{"project": proj}})
	}
	farmtest.WaitDevices(ctx, t, p, 2)
	tok := farmtest.Users(ctx, t, p, []string{"A", "B"}, farmtest.Member{User: "alice", Role: auth.Tester, Projects: []string{"A"}})["alice"]
	file := filepath.Join(t.TempDir(), "wifi.yaml")
	os.WriteFile(file, []byte("android:\n  launch: com.apex.settings\ntasks:\n  - name: wifi\n    flow:\n      - tap: Network & internet\n"), 0o644)
	apk := filepath.Join(t.TempDir(), "notes.apk")
	os.WriteFile(apk, adbdtest.APK(t, "com.acme.notes", "Acme Notes"), 0o644)
	farmArgs := []string{"--farm", p.ClientURL(), "--token", tok}
	// One run of each project, queued and finished by the admin.
	ids := map[string]string{}
	for _, proj := range []string{"A", "B"} {
		out, errOut, err := run(t, "farm", "run", "--farm", p.ClientURL(), "--token", root, "--project", proj, "--follow", file)
		if err != nil {
			t.Fatalf("the admin's run in %s: %v\n%s%s", proj, err, out, errOut)
		}
		ids[proj], _, _ = strings.Cut(out, "\t")
	}
	tests := []struct {
		name string
		args func(proj string) []string
		role string
	}{
		{"queue", func(proj string) []string { return []string{"farm", "run", "--project", proj, file} }, "tester"},
		{"cancel", func(proj string) []string { return []string{"farm", "cancel", ids[proj]} }, "tester"},
		{"read", func(proj string) []string {
			return []string{"farm", "report", ids[proj], "--out", filepath.Join(t.TempDir(), proj)}
		}, "viewer"},
		{"lease", func(proj string) []string {
			// A's phone may still run the run queued above.
			return []string{"run", "--device", "h" + proj + "/sim-1", "--wait-device", "1m", "--report-dir", t.TempDir(), file}
		}, "tester"},
		{"upload an app", func(proj string) []string { return []string{"farm", "app", "upload", "--project", proj, apk} }, "tester"},
		{"list the apps", func(proj string) []string { return []string{"farm", "app", "list", "--project", proj} }, "viewer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			farmArgs := farmArgs
			if tt.args("A")[0] == "run" { // apex run takes the token from the environment only
				t.Setenv(FarmTokenEnv, tok)
				farmArgs = farmArgs[:2]
			}
			out, errOut, err := run(t, append(tt.args("A"), farmArgs...)...)
			// Canceling an ended run fails for that reason, not for the project.
			if err != nil && !(tt.name == "cancel" && strings.Contains(err.Error(), "already ended")) {
				t.Errorf("in project A: %v\n%s%s", err, out, errOut)
			}
			out, errOut, err = run(t, append(tt.args("B"), farmArgs...)...)
			if err == nil {
				t.Fatalf("in project B: done, want refused\n%s%s", out, errOut)
			}
			// apex run reports a script's device error with the script.
			if said := err.Error() + out + errOut; !strings.Contains(said, "project B") || !strings.Contains(said, tt.role) {
				t.Errorf("in project B: %v, want a refusal naming project B and the role %s\n%s%s", err, tt.role, out, errOut)
			}
		})
	}
	out, _, err := run(t, append([]string{"farm", "runs"}, farmArgs...)...)
	if err != nil || !strings.Contains(out, ids["A"]) || strings.Contains(out, ids["B"]) {
		t.Errorf("apex farm runs lists A's runs only: %v\n%s", err, out)
	}
	ls, err := lease.New(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	for _, proj := range []string{"A", "B"} {
		if _, err := ls.Take(ctx, lease.Record{Resource: "h" + proj + "/sim-1", Holder: "holder-of-" + proj, Project: proj}); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range []string{"devices", "leases"} {
		for _, json := range []bool{false, true} {
			args := append([]string{"farm", cmd}, farmArgs...)
			if json {
				args = append(args, "--json")
			}
			out, errOut, err := run(t, args...)
			if err != nil || !strings.Contains(out, "holder-of-A") || strings.Contains(out, "holder-of-B") || !strings.Contains(out, api.Hidden) {
				t.Errorf("apex %s: %v, want A's holder named and B's hidden\n%s%s", strings.Join(args[:2], " "), err, out, errOut)
			}
		}
	}
	for _, args := range [][]string{{"farm", "limit", "A", "1"}, {"farm", "retention", "A", "--max-count", "1"}} {
		if _, _, err := run(t, append(args, farmArgs...)...); err == nil || !strings.Contains(err.Error(), "needs an admin token") {
			t.Errorf("apex %s with a tester's token: %v, want refused for want of an admin token", strings.Join(args, " "), err)
		}
	}
}
