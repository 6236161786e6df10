package mcp_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/hub"
	"github.com/apexagent/apex/mcp"
	"github.com/apexagent/apex/sim/lab"
	"github.com/google/go-cmp/cmp"
)

// TestDeviceHubProfile: four tools only; device_open binds a session the
// apex do --session command can find, and device_close exits the apps
// launched in it and ends it.
func TestDeviceHubProfile(t *testing.T) {
	dir := t.TempDir()
	l, id, c := openSimWith(t, mcp.Options{Profile: mcp.DeviceHub, AgentDir: dir, Command: "/opt/apex bin/apex"})
	if diff := cmp.Diff([]string{"device_close", "device_list", "device_open", "device_screenshot"}, c.toolNames()); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	opened := c.ok("device_open", map[string]any{"device": id})
	m := regexp.MustCompile(`'/opt/apex bin/apex' do --session ([a-f0-9]{12}) ACTION`).FindStringSubmatch(opened)
	if m == nil {
		t.Fatalf("device_open gave no session command:\n%s", opened)
	}
	s, err := hub.LoadAgentSession(dir, m[1])
	if err != nil {
		t.Fatal(err)
	}
	if s.Target.ID != id || s.Connect != (hub.Connect{Kind: "adbd", Addr: l.Devices()[0].Serial}) {
		t.Errorf("session %+v; want %s reached at its adbd", s, id)
	}
	// What apex do --session does when it launches an app.
	phone := l.Devices()[0].Phone
	if err := phone.Launch("com.android.settings"); err != nil {
		t.Fatal(err)
	}
	if err := hub.AddAgentApp(dir, s.ID, "com.android.settings"); err != nil {
		t.Fatal(err)
	}
	if got := c.ok("device_close", map[string]any{"device": id}); !regexp.MustCompile(`exited com\.android\.settings`).MatchString(got) {
		t.Errorf("device_close = %q; want it to exit the launched app", got)
	}
	if fg, _ := phone.Foreground(); fg == "com.android.settings" {
		t.Error("the app the session launched still runs")
	}
	if _, err := hub.LoadAgentSession(dir, s.ID); !errors.Is(err, hub.ErrSessionEnded) {
		t.Errorf("the session after device_close: %v; want ErrSessionEnded", err)
	}
}

// openSimWith is openSim without opening the phone.
func openSimWith(t *testing.T, opts mcp.Options) (*lab.Lab, string, *session) {
	t.Helper()
	l, hosts := simHosts(t, 1)
	opts.Hosts = hosts
	return l, simID(l, 0), connect(t, newServer(t, &opts))
}

// TestDeviceHubBoots: device_open HOST/new boots a phone (an apex sim
// process) on a session host, whose run cap refuses the next.
func TestDeviceHubBoots(t *testing.T) {
	ph, err := hub.NewProcessHost("booted", hub.ProcessOptions{Command: []string{buildApex(t), "sim", "--android", "1", "--port-base", "0"}})
	if err != nil {
		t.Fatal(err)
	}
	sh, err := hub.NewSessionHost(context.Background(), ph, hub.SessionOptions{RunCap: 1, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	srv := newServer(t, &mcp.Options{Hosts: []device.Host{sh}, Profile: mcp.DeviceHub, AgentDir: t.TempDir()})
	a, b := connect(t, srv), connect(t, srv)
	if list := a.ok("device_list", nil); !strings.Contains(list, "booted/new") {
		t.Errorf("device_list does not offer to boot:\n%s", list)
	}
	opened := a.ok("device_open", map[string]any{"device": "booted/new"})
	if !regexp.MustCompile(`^opened booted/127\.0\.0\.1:\d+ `).MatchString(opened) {
		t.Errorf("device_open booted/new = %q", opened)
	}
	if len(sh.Sessions()) != 1 {
		t.Errorf("%d sessions; want the one booted", len(sh.Sessions()))
	}
	if got := b.fails("device_open", map[string]any{"device": "booted/new"}); !strings.Contains(got, "run cap") {
		t.Errorf("a second boot past run cap 1: %q", got)
	}
}

// TestDeviceHubBootsWhenNoneFree: on the device-hub profile, device_open
// with no device boots one when none is free — none at all, then only
// one another session holds — up to the session host's run cap.
func TestDeviceHubBootsWhenNoneFree(t *testing.T) {
	ph, err := hub.NewProcessHost("booted", hub.ProcessOptions{Command: []string{buildApex(t), "sim", "--android", "1", "--port-base", "0"}})
	if err != nil {
		t.Fatal(err)
	}
	sh, err := hub.NewSessionHost(context.Background(), ph, hub.SessionOptions{RunCap: 2, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	srv := newServer(t, &mcp.Options{Hosts: []device.Host{sh}, Profile: mcp.DeviceHub, AgentDir: t.TempDir()})
	a, b := connect(t, srv), connect(t, srv)
	opened := regexp.MustCompile(`^opened (booted/127\.0\.0\.1:\d+) `)
	first := opened.FindStringSubmatch(a.ok("device_open", map[string]any{"device": ""}))
	if first == nil {
		t.Fatalf("device_open with no device and none attached did not boot one")
	}
	second := opened.FindStringSubmatch(b.ok("device_open", map[string]any{"device": ""}))
	if second == nil || second[1] == first[1] {
		t.Fatalf("device_open while the only phone is another session's = %v; want a new phone beside %s", second, first[1])
	}
	if n := len(sh.Sessions()); n != 2 {
		t.Errorf("%d sessions; want the two booted", n)
	}
}
