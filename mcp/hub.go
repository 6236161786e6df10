package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/hub"
	devlease "github.com/apexagent/apex/device/lease"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Profile is a tool set.
type Profile string

// DeviceHub offers four tools only — device_list, device_open,
// device_screenshot, device_close — so a conversation that never opens a
// device pays for four tool definitions in its prompt. device_open answers
// with the apex command line bound to the session (apex do --session ID),
// through which the agent acts.
const DeviceHub Profile = "device-hub"

// ParseProfile reads a profile name; "" and "default" are every tool.
func ParseProfile(s string) (Profile, error) {
	switch s {
	case "", "default":
		return "", nil
	case string(DeviceHub):
		return DeviceHub, nil
	}
	return "", fmt.Errorf("unknown profile %q: use default or %s", s, DeviceHub)
}

func (s *Server) initProfile() error {
	if s.opts.Profile != "" && s.opts.Profile != DeviceHub {
		return fmt.Errorf("mcp: unknown profile %q", s.opts.Profile)
	}
	if s.opts.AgentDir == "" {
		s.opts.AgentDir = hub.AgentDir()
	}
	if s.opts.Command == "" {
		exe, err := os.Executable()
		if err != nil {
			exe = "apex"
		}
		s.opts.Command = exe
	}
	return nil
}

func (s *Server) instructions() string {
	if s.opts.Profile != DeviceHub {
		return instructions
	}
	return `Apex drives phones (Android, iPhone, simulated). device_list lists them;
device_open leases one (given no device, the only free one, or a newly
booted one where a host boots them) and answers with the shell command that acts on it
(apex do --session ID ACTION …) and the actions it has; device_screenshot
shows the screen; device_close exits the apps the session launched and
releases the device.`
}

// agentBinding is a lease's device-hub session.
type agentBinding struct {
	id     string
	dir    string
	once   sync.Once
	exited []string // apps exited when the session ended
}

// hubOpened binds a session to the lease (once) and tells the agent how
// to drive it.
func (s *Server) hubOpened(l *lease, fresh bool) (*sdk.CallToolResult, any, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.agent == nil {
		as, err := hub.NewAgentSession(s.opts.AgentDir, l.target)
		if err != nil {
			return nil, nil, err
		}
		l.agent = &agentBinding{id: as.ID, dir: s.opts.AgentDir}
	}
	t := l.target
	cmd := quoteArg(s.opts.Command) + " do --session " + l.agent.id
	var b strings.Builder
	if fresh {
		fmt.Fprintf(&b, "opened %s", t.ID)
	} else {
		fmt.Fprintf(&b, "%s is already open in this session", t.ID)
	}
	fmt.Fprintf(&b, " (%s %s", t.Platform, t.Model)
	if t.Width > 0 {
		fmt.Fprintf(&b, ", %dx%d", t.Width, t.Height)
	}
	fmt.Fprintf(&b, ") as session %s.\n", l.agent.id)
	fmt.Fprintf(&b, "Act on it with this command (no device flags: the session names the device):\n  %s ACTION [--param k=v]... [--params JSON]\n", cmd)
	fmt.Fprintf(&b, "e.g.  %s Tap --param locate=Settings\n      %s Launch --param app=com.android.settings\n", cmd, cmd)
	fmt.Fprintf(&b, "Actions: %s.\n", strings.Join(l.space.Names(), ", "))
	fmt.Fprintf(&b, "Params of each: %s do --list. See the screen with device_screenshot device=%q; end with device_close device=%q.\n", quoteArg(s.opts.Command), t.ID, t.ID)
	return text(b.String()), nil, nil
}

// endAgent ends the lease's device-hub session: the apps it launched are
// exited and its record removed, so its command stops working.
func (l *lease) endAgent() {
	a := l.agent
	if a == nil {
		return
	}
	a.once.Do(func() {
		as, err := hub.EndAgentSession(a.dir, a.id)
		if err != nil || l.driver == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for _, app := range as.Apps {
			if l.driver.TerminateApp(ctx, app) == nil {
				a.exited = append(a.exited, app)
			}
		}
	})
}

// quoteArg quotes a command-line word for a POSIX shell when it needs it.
func quoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[](){};<>|&~#") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// bootIfAsked boots a device when query is "HOST/new" for a host that
// boots devices, or "*/new" for the first such host (a session host's
// caps apply), and returns its id.
func (s *Server) bootIfAsked(ctx context.Context, query string) (string, bool, error) {
	name, ok := strings.CutSuffix(query, "/new")
	if !ok {
		return "", false, nil
	}
	for _, h := range s.opts.Hosts {
		b, ok := h.(device.Booter)
		if !ok || h.Name() != name && name != "*" {
			continue
		}
		booted, err := b.Boot(ctx)
		if err != nil {
			return "", false, fmt.Errorf("boot a device on %s: %w", name, err)
		}
		return booted.Target.ID, true, nil
	}
	return "", false, nil
}

// noneFree reports whether opening "any device" failed because none is
// ready or every one is leased.
func noneFree(err error) bool {
	return errors.Is(err, device.ErrNotFound) || errors.Is(err, device.ErrOffline) || errors.Is(err, errInUse) || errors.Is(err, devlease.ErrInUse)
}
