// Package mcp serves Apex's devices and action space to LLM agents over the
// Model Context Protocol: device tools, observation, one tool per action of
// the action space, and the AI tools act, assert and query.
package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/store"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Policy limits what the server exposes.
type Policy string

const (
	// ReadOnly exposes the device tools, observe, scene_diff and screenshots:
	// nothing that changes the device.
	ReadOnly Policy = "readonly"
	// Standard adds the action tools and act, assert and query.
	Standard Policy = "standard"
	// Full adds app_install and shell.
	Full Policy = "full"
)

// ParsePolicy reads a policy name.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case ReadOnly, Standard, Full:
		return p, nil
	case "":
		return Standard, nil
	}
	return "", fmt.Errorf("policy %q: use readonly, standard or full", s)
}

func (p Policy) allows(need Policy) bool {
	rank := map[Policy]int{ReadOnly: 0, Standard: 1, Full: 2}
	return rank[p] >= rank[need]
}

// DefaultIdleTimeout is how long a device lease lasts without a tool call.
const DefaultIdleTimeout = 30 * time.Minute

// Options configure a Server. A nil *Options means the defaults.
type Options struct {
	// Hosts are where devices come from (adb server, simulated phones, …).
	Hosts []device.Host
	// Spaces are the action spaces the action tools derive from, one per
	// platform; nil means Android's and iOS's.
	Spaces []*action.Space
	// AI answers act, assert and query; nil makes them say what is missing.
	AI agent.AI
	// Policy limits the tools; empty means Standard.
	Policy Policy
	// IdleTimeout ends a lease after this long without a tool call on its
	// device; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// LockDir, when set, is the device/lease directory: a leased device
	// is leased across processes too, so servers and other faces (apex
	// act, run, …) sharing the directory refuse it (apex mcp uses
	// lease.DefaultDir). Empty leases devices within this server only.
	LockDir string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Perception is how leased devices are observed: when OCR reads
	// pixels (perceive.Auto: when the tree cannot be trusted), the OCR
	// engine (an *ocr.Lazy shares one Tesseract between leases; nil starts
	// one per lease on first need), Scene options and timing.
	Perception perceive.Options
	// Runs, when set, records each act task as a run: its steps with
	// screenshots, its events and an HTML report the answer points to.
	Runs *store.Store
	// Log receives debug records; nil discards.
	Log *slog.Logger
	// Version is reported to clients.
	Version string
	// Profile chooses the tool set: "" for every tool the policy allows,
	// DeviceHub for the four device tools only (hub.go).
	Profile Profile
	// AgentDir is where the device-hub profile records its sessions for
	// `apex do --session` (default hub.AgentDir()); Command is the apex
	// command line that device_open tells the agent to run (default this
	// executable).
	AgentDir string
	Command  string
}

// Server is Apex's MCP server. One Server serves any number of sessions
// (stdio has one, HTTP one per client); devices are leased to the session
// that opened them. It is safe for concurrent use.
type Server struct {
	opts   Options
	reg    *device.Registry
	srv    *sdk.Server
	spaces []*action.Space
	tools  []actionTool

	mu      sync.Mutex
	leases  map[string]*lease // by device ID
	watched map[*sdk.ServerSession]bool
	closed  bool
}

// New builds a server. It fails when an action's tool name clashes with a
// built-in tool, so a new action can never silently shadow one.
func New(opts *Options) (*Server, error) {
	s := &Server{leases: map[string]*lease{}, watched: map[*sdk.ServerSession]bool{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Policy == "" {
		s.opts.Policy = Standard
	}
	if _, err := ParsePolicy(string(s.opts.Policy)); err != nil {
		return nil, err
	}
	if s.opts.IdleTimeout <= 0 {
		s.opts.IdleTimeout = DefaultIdleTimeout
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	if s.opts.Log == nil {
		s.opts.Log = slog.New(slog.DiscardHandler)
	}
	if s.opts.Version == "" {
		s.opts.Version = "dev"
	}
	s.spaces = s.opts.Spaces
	if len(s.spaces) == 0 {
		s.spaces = []*action.Space{action.ForPlatform(device.Android), action.ForPlatform(device.IOS)}
	}
	s.reg = device.NewRegistry(s.opts.Hosts...)
	if err := s.initProfile(); err != nil {
		return nil, err
	}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "apex", Title: "Apex phone automation", Version: s.opts.Version},
		&sdk.ServerOptions{Instructions: s.instructions(), Logger: s.opts.Log, Capabilities: &sdk.ServerCapabilities{}})
	s.addDeviceTools()
	if s.opts.Profile == DeviceHub {
		return s, nil
	}
	s.addObserveTools()
	if s.opts.Policy.allows(Standard) {
		if err := s.addActionTools(); err != nil {
			return nil, err
		}
		s.addAITools()
	}
	if s.opts.Policy.allows(Full) {
		s.addAdminTools()
	}
	return s, nil
}

const instructions = `Apex drives phones (Android, iPhone, simulated). Start with device_list,
then device_open a device: it is leased to this session until device_close.
Every tool takes that device. observe returns the screen as a list of elements
with ids (e1, e2, …); action tools such as tap accept an id from the last
observation, the element's text, or a short description. Observe again after
acting: ids change when the screen does.`

// MCP returns the underlying SDK server, e.g. to connect a custom transport.
func (s *Server) MCP() *sdk.Server { return s.srv }

// Run serves one session over stdin and stdout until the client leaves or
// ctx ends, then releases every device. A malformed line is answered with
// a JSON-RPC error, and the session goes on (lineTransport).
func (s *Server) Run(ctx context.Context) error {
	defer s.Close()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go s.sweepEvery(ctx)
	return s.srv.Run(ctx, &lineTransport{in: os.Stdin, out: os.Stdout})
}

// sweepEvery ends idle leases now and then until ctx ends, so an idle
// process does not hold its devices' locks forever.
func (s *Server) sweepEvery(ctx context.Context) {
	tick := time.NewTicker(max(s.opts.IdleTimeout/10, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			s.Sweep()
		case <-ctx.Done():
			return
		}
	}
}

// Close releases every lease and closes the drivers.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	ls := s.leases
	s.leases = map[string]*lease{}
	s.mu.Unlock()
	for _, l := range ls {
		l.close()
	}
	return nil
}
