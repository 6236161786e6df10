//go:build !apexlite

package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/device/ios"
	"github.com/apexagent/apex/device/lease"
	"github.com/apexagent/apex/internal/httpguard"
	"github.com/apexagent/apex/mcp"
	"github.com/apexagent/apex/ocr"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/sim/lab"
	"github.com/apexagent/apex/store"
	"github.com/spf13/cobra"
)

// MCPOptions are the inputs of `apex mcp`.
type MCPOptions struct {
	Sim bool // --sim: add a simulated phone
	// SimPlatform is "" or "android", or "ios" for --sim=ios (a simulated
	// iPhone served as WebDriverAgent).
	SimPlatform string
	Apps        []string // --app: app specs for the simulated phone
	ADB         bool     // --adb: list the adb server's devices too
	Direct      []string // --connect: adbd addresses driven with no adb server
	HTTP        string   // --http: serve streamable HTTP on this address instead of stdio
	Token       string   // --token (or APEX_MCP_TOKEN): bearer token for HTTP
	Policy      string   // --policy
	Idle        time.Duration
	Config      string // --config: the apex.yaml with the model: section
	OCR         string // --ocr: auto, always or off
	Dir         string // --dir: where act tasks are recorded
	Profile     string // --profile: default, or device-hub (four tools)
	// Boot is --boot: a host "booted" whose simulated phones start on
	// demand (device_open booted/new, or when none is free), each an apex
	// sim process, under a session host with the caps.
	Boot bool
	BootCaps
	// Farm is --farm: offer the farm's devices, each leased while open.
	Farm farmFlags
	// TLS serves HTTPS with this certificate and key (--tls-cert,
	// --tls-key).
	TLS httpguard.TLS
}

func newCmdMCP(env *Env) *cobra.Command {
	opts := &MCPOptions{ADB: true}
	cmd := &cobra.Command{
		Use:         "mcp",
		Annotations: map[string]string{annotBlocks: "until Ctrl-C"},
		Short:       "Serve devices and the action space to LLM agents over MCP",
		Long: `Serve Apex over the Model Context Protocol, so agents in Claude, Cursor,
Codex and other MCP hosts drive phones with no glue code. Tools: device_list,
device_open, device_screenshot, device_close, observe, scene_diff, one tool
per action of the device's platform (tap, input, scroll, …), and act, assert
and query. A device opened by one session is refused to the others until it
is closed, the session ends, or it stays idle for --idle.

By default it speaks MCP on stdin/stdout; --http serves streamable HTTP
instead (a bearer token is required unless bound to loopback). --policy
limits the tools: readonly (observe and screenshots), standard, or full
(adds app_install and shell). See docs/mcp.md for host configuration.`,
		Example: `  apex mcp --sim
  apex mcp --sim=ios
  apex mcp --http 127.0.0.1:7300
  apex mcp --adb=false --connect 127.0.0.1:6520
  apex mcp --farm nats://10.0.0.1:4222
  APEX_MCP_TOKEN=secret apex mcp --http 0.0.0.0:7300 --policy readonly`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Token == "" {
				opts.Token = os.Getenv("APEX_MCP_TOKEN")
			}
			if opts.Farm.URL != "" && !cmd.Flags().Changed("adb") {
				opts.ADB = false // the farm's devices, not this machine's
			}
			return mcpRun(cmd.Context(), env, opts)
		},
	}
	f := cmd.Flags()
	f.VarPF(simFlag{&opts.Sim, &opts.SimPlatform}, "sim", "", "add a simulated phone started in this process; --sim=ios adds a simulated iPhone").NoOptDefVal = "true"
	f.StringArrayVar(&opts.Apps, "app", nil, "with --sim: install this app spec (YAML) too; repeatable")
	f.BoolVar(&opts.ADB, "adb", opts.ADB, "offer the devices of the adb server (--adb=false with --sim: the simulated phone only)")
	f.StringArrayVar(&opts.Direct, "connect", nil, "also drive the adbd at this address directly, with no adb server (a phone from apex sim, or a network device needing no auth); repeatable")
	f.StringVar(&opts.HTTP, "http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:7300) instead of stdio")
	f.StringVar(&opts.Token, "token", "", "bearer token HTTP clients must send (default $APEX_MCP_TOKEN); required beyond loopback")
	f.StringVar(&opts.TLS.CertFile, "tls-cert", "", "with --http: serve HTTPS with this certificate (PEM; with --tls-key)")
	f.StringVar(&opts.TLS.KeyFile, "tls-key", "", "the private key of --tls-cert (PEM)")
	f.StringVar(&opts.Policy, "policy", string(mcp.Standard), "tools offered: readonly, standard or full")
	f.BoolVar(&opts.Boot, "boot", false, "add the host \"booted\": device_open booted/new starts a simulated phone (an apex sim process) under --run-cap and --idle-cap; and the host \"emulator\" (emulator/new) where the Android SDK's emulator has an AVD")
	opts.BootCaps.register(cmd, 0, "with --boot")
	f.StringVar(&opts.Profile, "profile", "default", "tool set: default (every tool the policy allows), or device-hub (device_list, device_open, device_screenshot, device_close; the agent acts through the apex do --session command device_open returns)")
	f.StringVar(&opts.Config, "config", "", configUsage)
	f.StringVar(&opts.Dir, "dir", "", "where act tasks are recorded, each a run with its steps and HTML report (default $"+RunsDirEnv+" or "+DefaultRunsDir+")")
	f.StringVar(&opts.OCR, "ocr", "auto", "read the screen with OCR: auto (only when the UI tree cannot be trusted: stale, system windows only, text in pixels), always, or off")
	f.DurationVar(&opts.Idle, "idle", mcp.DefaultIdleTimeout, "release a device after this long without a tool call")
	f.StringVar(&opts.Farm.URL, "farm", "", "offer this farm's devices (nats://HOST:4222): device_open leases one, device_close releases it; token from $"+FarmTokenEnv)
	opts.Farm.Token = os.Getenv(FarmTokenEnv)
	return cmd
}

func mcpRun(ctx context.Context, env *Env, opts *MCPOptions) error {
	policy, err := mcp.ParsePolicy(opts.Policy)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	if _, err := perceive.ParseMode(opts.OCR); err != nil {
		return fmt.Errorf("--ocr: %w", err)
	}
	if _, err := mcp.ParseProfile(opts.Profile); err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	if len(opts.Apps) > 0 && !opts.Sim {
		return fmt.Errorf("--app installs apps on the simulated phone only: add --sim")
	}
	if !opts.ADB && !opts.Sim && !opts.Boot && len(opts.Direct) == 0 && opts.Farm.URL == "" {
		return fmt.Errorf("--adb=false leaves no devices: add --sim, --boot, --connect or --farm")
	}
	httpOpts := &mcp.HTTPOptions{Token: opts.Token}
	var ln net.Listener
	if opts.HTTP != "" {
		// Listen first: a refused address fails before any phone starts.
		if ln, err = mcp.ListenHTTP(opts.HTTP, httpOpts); err != nil {
			return err
		}
		defer ln.Close()
		if ln, err = opts.TLS.Listen(ln); err != nil {
			return err
		}
		if opts.Token != "" && len(opts.Token) < minTokenLen {
			fmt.Fprintf(env.Err, "apex mcp: warning: the token has %d characters; anyone who guesses it drives the phones: use %d or more random ones\n", len(opts.Token), minTokenLen)
		}
	} else if opts.TLS.On() {
		return fmt.Errorf("--tls-cert and --tls-key serve HTTPS: add --http ADDRESS")
	}
	hosts, release, err := mcpHosts(ctx, env, opts)
	if err != nil {
		return err
	}
	defer release()
	if opts.Boot {
		b, err := newSimBooter(ctx, env, opts.BootCaps, device.Android)
		if err != nil {
			return err
		}
		defer b.Close()
		hosts = append(hosts, b.Hosts()...)
		// Android emulators boot too (device_open emulator/new) where
		// the SDK has one with an AVD; elsewhere they are left out.
		if eh, err := emulatorHost(ctx, env, opts.BootCaps); err == nil {
			defer eh.Close()
			hosts = append(hosts, eh)
		} else {
			env.Log.Info("apex mcp --boot: no emulators", "why", err)
		}
	}
	engine := ocr.NewLazy(&ocr.TesseractOptions{Log: env.Log})
	defer engine.Close()
	dir := opts.Dir
	if dir == "" {
		dir = defaultRunsDir()
	}
	// An MCP host may start apex mcp anywhere (even in /): without a
	// writable runs directory it serves, unrecorded, and says so.
	runs, err := openRuns(env, dir)
	if err != nil {
		fmt.Fprintf(env.Err, "apex mcp: act tasks are not recorded: open the runs directory %s: %v (--dir or $%s picks another)\n", dir, err, RunsDirEnv)
		runs = nil
	} else {
		defer runs.Close()
	}
	srv, err := newMCPServer(env, hosts, policy, opts, engine, runs)
	if err != nil {
		return err
	}
	if ln == nil {
		return srv.Run(ctx)
	}
	fmt.Fprintf(env.Err, "apex mcp: serving MCP over HTTP on %s://%s/mcp (policy %s)\n", opts.TLS.Scheme(), ln.Addr(), policy)
	return srv.ServeHTTP(ctx, ln, httpOpts)
}

// mcpHosts are the device hosts opts ask for; release stops the simulated
// phone, if any.
func mcpHosts(ctx context.Context, env *Env, opts *MCPOptions) ([]device.Host, func(), error) {
	var hosts []device.Host
	if len(opts.Direct) > 0 {
		hosts = append(hosts, android.NewDirectHost("adbd", opts.Direct, &android.Options{Log: env.Log}))
	}
	if opts.ADB {
		hs, err := deviceHosts(env)
		if err != nil {
			return nil, nil, err
		}
		hosts = append(hosts, hs...)
	}
	closeFarm := func() {}
	if opts.Farm.URL != "" {
		c, err := opts.Farm.dial(ctx, "apex mcp")
		if err != nil {
			return nil, nil, err
		}
		hosts, closeFarm = append(hosts, &farmDevices{c: c, command: "mcp"}), c.Close
	}
	if !opts.Sim {
		return hosts, closeFarm, nil
	}
	lo := lab.Options{Android: 1, AppFiles: opts.Apps, Log: env.Log}
	if opts.SimPlatform == "ios" {
		lo.Android, lo.IOS = 0, 1
	}
	l, err := lab.Start(ctx, lo)
	if err != nil {
		closeFarm()
		return nil, nil, fmt.Errorf("starting the simulated phone: %w", err)
	}
	var addrs, urls []string
	for _, d := range l.Devices() {
		if d.Platform == "ios" {
			urls = append(urls, d.URL)
		} else {
			addrs = append(addrs, d.Addr)
		}
	}
	if len(urls) > 0 {
		h, err := ios.NewHost(urls, &ios.HostOptions{Name: "sim", Log: env.Log, Driver: &ios.Options{Log: env.Log, Timeout: simCallTimeout}})
		if err != nil {
			l.Close()
			closeFarm()
			return nil, nil, err
		}
		hosts = append(hosts, h)
	} else {
		hosts = append(hosts, android.NewDirectHost("sim", addrs, &android.Options{Log: env.Log, Timeout: simCallTimeout}))
	}
	return hosts, func() { l.Close(); closeFarm() }, nil
}

func newMCPServer(env *Env, hosts []device.Host, policy mcp.Policy, opts *MCPOptions, engine ocr.Engine, runs *store.Store) (*mcp.Server, error) {
	mode, _ := perceive.ParseMode(opts.OCR) // checked in mcpRun
	profile, _ := mcp.ParseProfile(opts.Profile)
	ai, err := mcpAI(env, opts.Config, engine, mode)
	if err != nil {
		return nil, err
	}
	// The lease directory makes leases hold across processes: each MCP
	// host (Claude, Cursor, …) starts its own apex mcp, and apex act, run,
	// do and playground lease devices in the same directory.
	return mcp.New(&mcp.Options{Hosts: hosts, Policy: policy, IdleTimeout: opts.Idle, LockDir: lease.DefaultDir(),
		Log: env.Log, Version: readBuildInfo().Version, AI: ai, Perception: perceive.Options{Mode: mode, Engine: engine}, Runs: runs, Profile: profile})
}

// mcpAI is the AI runtime behind act, assert and query: the models of the
// config file and environment, or the offline rule planner without them.
func mcpAI(env *Env, file string, engine ocr.Engine, mode perceive.Mode) (agent.AI, error) {
	cfg, err := loadModelConfig(env, file, nil)
	if err != nil {
		return nil, err
	}
	ac := agent.Config{Log: env.Log, Perception: perceive.Options{Engine: engine, Mode: mode}}
	if cfg.Configured() {
		ac.LLM = cfg
	}
	rt, err := agent.New(ac)
	if err != nil {
		return nil, err
	}
	return rt, nil
}
