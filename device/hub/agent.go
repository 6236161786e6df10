package hub

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/internal/lazy"
)

// AgentSession is a device an agent opened (MCP's device-hub profile),
// recorded so that `apex do --session ID`, another process, drives that
// device with no target flags while the opener holds its lease.
type AgentSession struct {
	ID      string        `json:"id"`
	Target  device.Target `json:"target"`
	Connect Connect       `json:"connect"`
	// Owner is the process holding the device's lease.
	Owner  int       `json:"owner"`
	Opened time.Time `json:"opened"`
	// Apps are the apps launched in the session, which closing it exits.
	Apps []string `json:"apps,omitempty"`
}

// Connect is how another process reaches a session's device: through the
// adb server by serial ("adb"), straight to an adbd at an address
// ("adbd"), or to WebDriverAgent at a URL ("wda").
type Connect struct {
	Kind string `json:"kind"`
	Addr string `json:"addr"`
}

// ConnectFor is how to reach t from another process.
func ConnectFor(t device.Target) Connect {
	switch {
	case t.Platform == device.IOS:
		u := t.Serial
		if !strings.Contains(u, "://") {
			u = "http://" + u
		}
		return Connect{Kind: "wda", Addr: u}
	case t.Host == "adb":
		return Connect{Kind: "adb", Addr: t.Serial}
	}
	return Connect{Kind: "adbd", Addr: t.Serial}
}

// AgentDir is where agent sessions are recorded: agent/ in the state
// directory.
func AgentDir() string { return filepath.Join(DefaultStateDir(), "agent") }

// ErrSessionEnded is the error of a session that is not recorded, or whose
// owner is gone.
var ErrSessionEnded = errors.New("no such session")

var sessionIDRe = lazy.Regexp(`^[a-f0-9]{12}$`)

// NewAgentSession records a session for t owned by this process.
func NewAgentSession(dir string, t device.Target) (AgentSession, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return AgentSession{}, err
	}
	s := AgentSession{ID: hex.EncodeToString(b[:]), Target: t, Connect: ConnectFor(t), Owner: os.Getpid(), Opened: time.Now()}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return AgentSession{}, fmt.Errorf("hub: session directory: %w", err)
	}
	return s, writeJSON(agentPath(dir, s.ID), s)
}

func agentPath(dir, id string) string { return filepath.Join(dir, id+".json") }

// LoadAgentSession reads session id; ErrSessionEnded when it is not
// recorded or its owner has ended.
func LoadAgentSession(dir, id string) (AgentSession, error) {
	if !sessionIDRe().MatchString(id) {
		return AgentSession{}, fmt.Errorf("session %q: %w: a session id is the 12 hex digits device_open printed", id, ErrSessionEnded)
	}
	b, err := os.ReadFile(agentPath(dir, id))
	if errors.Is(err, os.ErrNotExist) {
		return AgentSession{}, fmt.Errorf("session %s: %w: it was closed (device_close) or never opened here; open a device again with device_open", id, ErrSessionEnded)
	}
	if err != nil {
		return AgentSession{}, err
	}
	var s AgentSession
	if err := json.Unmarshal(b, &s); err != nil {
		return AgentSession{}, fmt.Errorf("session %s: %w", id, err)
	}
	if !alive(s.Owner) {
		return AgentSession{}, fmt.Errorf("session %s: %w: the process that opened it (pid %d) has ended; open a device again with device_open", id, ErrSessionEnded, s.Owner)
	}
	return s, nil
}

// AddAgentApp records an app launched in session id.
func AddAgentApp(dir, id, app string) error {
	s, err := LoadAgentSession(dir, id)
	if err != nil {
		return err
	}
	if slices.Contains(s.Apps, app) {
		return nil
	}
	s.Apps = append(s.Apps, app)
	return writeJSON(agentPath(dir, id), s)
}

// EndAgentSession forgets session id and returns it as last recorded.
func EndAgentSession(dir, id string) (AgentSession, error) {
	s, err := LoadAgentSession(dir, id)
	if rerr := os.Remove(agentPath(dir, id)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		return s, rerr
	}
	return s, err
}
