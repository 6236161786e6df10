//go:build !apexlite

package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/internal/httpguard"
	"github.com/apexagent/apex/internal/supervise"
	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/ocr"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/server"
	"github.com/spf13/cobra"
)

// PlaygroundOptions are the inputs of `apex playground`.
type PlaygroundOptions struct {
	Device DeviceFlags
	Port   int // first port tried; the next free one is used
	// Host is the address to listen on (default 127.0.0.1). Anywhere but
	// loopback the playground requires a token.
	Host string
	// Token is required of every client when set (default
	// $APEX_PLAYGROUND_TOKEN; generated for a non-loopback Host).
	Token string
	// AllowShell lets script steps run shell commands and raw WDA
	// requests on the device (runAdbShell, runWdaRequest).
	AllowShell bool
	// PreviewTransport locks the live preview (--preview-transport
	// webrtc; see server.ParsePreviewTransport).
	PreviewTransport string
	// AllowWDAAny lets clients open any WebDriverAgent on loopback, not
	// only the configured ones; AllowModelURL any model base URL, not
	// only https or loopback ones.
	AllowWDAAny, AllowModelURL bool
	// TLS serves HTTPS with this certificate and key (--tls-cert,
	// --tls-key).
	TLS    httpguard.TLS
	OCR    string // --ocr: auto, always or off
	NoOpen bool
	Config string // apex.yaml with a model: section
	Dir    string // where tasks are recorded
	// Getenv reads the model settings; default os.Getenv.
	Getenv func(string) string
	// OpenURL shows the playground; default: the system's browser.
	OpenURL func(ctx context.Context, url string) error
	// Serving, when set, is told the URL once the server listens.
	Serving func(url string)
	// Boot bounds the simulated phones the page's Boot buttons (POST
	// /devices/boot) start, each an apex sim process.
	Boot BootCaps
}

// DefaultPlaygroundPort is the first port `apex playground` tries.
const DefaultPlaygroundPort = 5800

// playgroundPorts is how many ports from --port are tried.
const playgroundPorts = 100

// simTargetID names the simulated phone a --sim playground starts.
const simTargetID = "sim"

func newCmdPlayground(env *Env) *cobra.Command {
	opts := &PlaygroundOptions{}
	cmd := &cobra.Command{
		Use:         "playground",
		Annotations: map[string]string{annotBlocks: "until Ctrl-C"},
		Short:       "Serve the playground API: a device session, manual actions, goals and a live preview",
		Long: `Serve the playground on 127.0.0.1, from the first free port at --port on, and
print its URL (opened in the browser unless --no-open). The web page at / shows
the live screen (click to tap, drag to swipe, type), runs goals or single script
steps with streamed progress, cancel and a report each, records manual actions
as a script that apex run replays, and edits the model settings.

The same is a REST API (GET /api lists it; docs/playground.md describes it):
device sessions (GET /session/setup, POST /session), manual actions
(POST /interact), tasks (POST /execute with a goal, a step or an action,
answered at the task's end with its result, record and report; progress on
GET /events and GET /task-progress/ID; POST /cancel/ID), the preview
(GET /screenshot, GET /mjpeg), the recorder (/recorder/*), model settings
(GET/POST /config, POST /config/test) and contexts from report steps.

With --sim or --device the session is opened at start. Goals use the model
configured in apex.yaml (or APEX_MODEL_*), the page's model settings, or the
offline rule planner. Beyond loopback (--host) every client needs the token.
Ctrl-C stops the server and releases the device.`,

		Example: `  apex playground --sim
  apex playground --device emulator-5554 --port 6000 --no-open
  apex playground --sim --host 0.0.0.0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return playgroundRun(cmd.Context(), env, opts)
		},
	}
	opts.Device.Register(cmd)
	f := cmd.Flags()
	f.IntVar(&opts.Port, "port", DefaultPlaygroundPort, "first port to try; the next free one is used (0: any free port)")
	f.BoolVar(&opts.NoOpen, "no-open", false, "do not open the browser")
	f.StringVar(&opts.Host, "host", "127.0.0.1", "address to listen on; anywhere but loopback requires a token")
	f.StringVar(&opts.Token, "token", "", "token every client must present (default $"+PlaygroundTokenEnv+"; generated when --host is not loopback)")
	f.StringVar(&opts.OCR, "ocr", "auto", "read the screen with OCR: auto (only when the UI tree cannot be trusted: stale, system windows only, text in pixels), always, or off")
	f.StringVar(&opts.PreviewTransport, "preview-transport", "auto", "the live preview: auto (H.264 over a WebSocket, else MJPEG) or webrtc")
	f.BoolVar(&opts.AllowShell, "allow-shell", false, "let script steps sent to /execute run shell commands on the device (runAdbShell, runWdaRequest)")
	f.BoolVar(&opts.AllowWDAAny, "allow-wda-any", false, "let clients open any WebDriverAgent URL on loopback (default: only those of --device, apex.yaml's wda: and $APEX_WDA_URLS)")
	f.BoolVar(&opts.AllowModelURL, "allow-model-url", false, "let clients set a model base URL that is neither https nor on loopback")
	f.StringVar(&opts.Config, "config", "", configUsage)
	f.StringVar(&opts.Dir, "dir", "", "where tasks are recorded (default $"+RunsDirEnv+" or "+DefaultRunsDir+")")
	f.StringVar(&opts.TLS.CertFile, "tls-cert", "", "serve HTTPS with this certificate (PEM; with --tls-key)")
	f.StringVar(&opts.TLS.KeyFile, "tls-key", "", "the private key of --tls-cert (PEM)")
	opts.Boot.register(cmd, defaultBootCap, "phones booted from the page (POST /devices/boot)")
	return cmd
}

// defaultBootCap is how many phones of a platform the playground boots at
// most unless --run-cap says otherwise.
const defaultBootCap = 4

func playgroundRun(ctx context.Context, env *Env, opts *PlaygroundOptions) error {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	transport, err := server.ParsePreviewTransport(opts.PreviewTransport)
	if err != nil {
		return err
	}
	dir := opts.Dir
	if dir == "" {
		dir = defaultRunsDir()
	}
	st, err := openRuns(env, dir)
	if err != nil {
		return fmt.Errorf("open the runs directory %s: %w", dir, err)
	}
	defer st.Close()
	cache, err := agent.OpenCache(ctx, "", st)
	if err != nil {
		return err
	}
	host := opts.Host
	if host == "" {
		host = "127.0.0.1"
	}
	token := playgroundToken(host, opts.Token, getenv)
	if token != "" && len(token) < minTokenLen {
		fmt.Fprintf(env.Err, "apex: warning: the playground token has %d characters; anyone who guesses it drives the phone: use %d or more random ones (or let apex playground generate one)\n", len(token), minTokenLen)
	}
	ocrMode, err := perceive.ParseMode(opts.OCR)
	if err != nil {
		return fmt.Errorf("--ocr: %w", err)
	}
	// One Tesseract, started when a screen first needs it, serves the
	// session's manual actions and every task.
	engine := ocr.NewLazy(&ocr.TesseractOptions{Log: env.Log})
	defer engine.Close()
	// The --sim phone keeps its state here across its restarts, and
	// across sessions opened on it again.
	simState, err := os.MkdirTemp("", "apex-playground-sim")
	if err != nil {
		return err
	}
	defer os.RemoveAll(simState)
	booter, err := newSimBooter(ctx, env, opts.Boot, device.Android, device.IOS)
	if err != nil {
		return err
	}
	// With --farm the page lists the farm's devices through one
	// connection for the playground's life.
	var farm device.Host
	if opts.Device.Farm != "" {
		c, err := dialFarm(ctx, &opts.Device)
		if err != nil {
			booter.Close()
			return err
		}
		defer c.Close()
		farm = &farmDevices{c: c, command: "apex playground"}
	}
	// Deferred before the server's Close, so it runs after it: the
	// session lets go of a booted phone before the phone stops.
	defer booter.Close()
	ln, err := listenFrom(host, opts.Port, playgroundPorts)
	if err != nil {
		return err
	}
	tl, err := opts.TLS.Listen(ln)
	if err != nil {
		ln.Close()
		return err
	}
	ln = tl
	var srv *server.Server // the simulated phone's crashes go to its /events
	srv, err = server.New(server.Options{
		Open: func(ctx context.Context, id string) (device.Driver, device.Target, func(), error) {
			if err := checkClientWDA(id, opts.Device, opts.AllowWDAAny); err != nil {
				return nil, device.Target{}, nil, err
			}
			return playgroundOpen(ctx, env, opts.Device, booter, filepath.Join(simState, "phone.json"), id, srv.Supervised)
		},
		Targets: func(ctx context.Context) ([]device.Target, error) {
			return playgroundTargets(ctx, env, opts.Device, booter, farm)
		},
		NoTargets: playgroundNoTargets(opts.Device),
		// Never blocked: a machine with neither adb nor WebDriverAgent
		// still boots simulated phones.
		Booter: booter,
		NewAgent: func(m server.ModelSettings, onEvent func(event.Event)) (agent.AI, error) {
			cfg, err := playgroundModel(env, opts.Config, getenv, m)
			if err != nil {
				return nil, err
			}
			return agentFor(env, cfg, cache, onEvent, ocrMode, engine)
		},
		TestModel: func(ctx context.Context, m server.ModelSettings) ([]server.ModelCheck, error) {
			cfg, err := playgroundModel(env, opts.Config, getenv, m)
			if err != nil {
				return nil, err
			}
			if !cfg.Configured() {
				return nil, errors.New("no model configured: give a model name (and its base URL and API key), or set APEX_MODEL_NAME")
			}
			return playgroundChecks(ctx, cfg)
		},
		Perception:       perceive.Options{Mode: ocrMode, Engine: engine},
		Store:            st,
		Log:              env.Log,
		Token:            token,
		AllowShell:       opts.AllowShell,
		PreviewTransport: transport,
		AllowModelURL:    opts.AllowModelURL,
	})
	if err != nil {
		ln.Close()
		return err
	}
	defer srv.Close()
	hs := httpguard.NewServer(srv.Handler(), nil)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	url, anyInterface := playgroundURL(opts.TLS.Scheme(), ln.Addr(), token)
	if opts.Device.Sim || opts.Device.ID != "" {
		if _, err := srv.Connect(ctx, ""); err != nil {
			fmt.Fprintf(env.Err, "apex: %v\n", err)
		}
	}
	fmt.Fprintf(env.Out, "Apex playground: %s\n", url)
	if anyInterface {
		fmt.Fprintf(env.Out, "Listening on every interface: from another machine, use this one's address in that URL.\n")
	}
	if opts.Serving != nil {
		opts.Serving(url)
	}
	if !opts.NoOpen {
		open := opts.OpenURL
		if open == nil {
			open = openInBrowser
		}
		if err := open(ctx, url); err != nil {
			fmt.Fprintf(env.Err, "apex: could not open a browser (%v); open %s\n", err, url)
		}
	}

	select {
	case err = <-served:
	case <-ctx.Done():
	}
	// Ending the session and the event streams first lets Shutdown find
	// every connection idle.
	srv.Close()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil {
		hs.Close()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving the playground: %w", err)
	}
	return nil
}

// playgroundModel is the model settings of apex.yaml and the environment
// with the playground's on top.
func playgroundModel(env *Env, file string, getenv func(string) string, m server.ModelSettings) (*llm.Config, error) {
	cfg, err := loadModelConfig(env, file, getenv)
	if err != nil {
		return nil, fmt.Errorf("model config: %w", err)
	}
	if m.Empty() {
		return cfg, nil
	}
	if err := cfg.Override(llm.Endpoint{Provider: m.Provider, BaseURL: m.BaseURL, Model: m.Model, APIKey: m.APIKey}, "playground"); err != nil {
		return nil, err
	}
	return cfg, nil
}

func playgroundChecks(ctx context.Context, cfg *llm.Config) ([]server.ModelCheck, error) {
	results, _, err := checkModels(ctx, cfg, nil, false)
	if err != nil {
		return nil, err
	}
	out := make([]server.ModelCheck, len(results))
	for i, r := range results {
		out[i] = server.ModelCheck{Roles: r.Roles, Provider: r.Provider, Model: r.Model, BaseURL: r.BaseURL,
			OK: r.OK, LatencyMS: r.LatencyMS, Answer: r.Answer, Error: r.Error}
	}
	return out, nil
}

// listenFrom listens on host at the first free port of port, port+1, …
// (n ports); port 0 takes any free port.
func listenFrom(host string, port, n int) (net.Listener, error) {
	if port == 0 {
		return net.Listen("tcp", net.JoinHostPort(host, "0"))
	}
	var last error
	for p := port; p < port+n && p <= 65535; p++ {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err == nil {
			return ln, nil
		}
		last = err
		if !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
	}
	if last != nil && !errors.Is(last, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listen on %s: %w: pass another --host (default 127.0.0.1)", host, last)
	}
	return nil, fmt.Errorf("no free port from %d to %d on %s (%v): pass --port", port, port+n-1, host, last)
}

// minTokenLen is the length under which a token a user gives is warned
// about: 16 bytes of randomness, as a generated one has more.
const minTokenLen = 16

// PlaygroundTokenEnv holds the playground's token when --token is not given.
const PlaygroundTokenEnv = "APEX_PLAYGROUND_TOKEN"

// playgroundToken is the token the playground requires: --token, else
// $APEX_PLAYGROUND_TOKEN, else, on a host other than loopback, a random
// one (nobody else on the network may drive the phone); on loopback none.
func playgroundToken(host, flag string, getenv func(string) string) string {
	if flag != "" {
		return flag
	}
	if t := getenv(PlaygroundTokenEnv); t != "" {
		return t
	}
	if httpguard.Loopback(host) {
		return ""
	}
	var b [24]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// playgroundURL is the address to print and open: with the token, which
// signs the browser in, and for an unspecified address (0.0.0.0, ::) this
// machine's loopback, since no browser can open 0.0.0.0 everywhere.
func playgroundURL(scheme string, addr net.Addr, token string) (u string, anyInterface bool) {
	host := addr.String()
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		host, anyInterface = net.JoinHostPort("127.0.0.1", strconv.Itoa(ta.Port)), true
	}
	u = scheme + "://" + host + "/"
	if token != "" {
		u += "?token=" + url.QueryEscape(token)
	}
	return u, anyInterface
}

// playgroundOpen opens the session's device: the one the client chose (a
// phone the page booted, say), else the one the flags name.
func playgroundOpen(ctx context.Context, env *Env, flags DeviceFlags, booter *simBooter, simState, id string, supervised func(supervise.Event)) (device.Driver, device.Target, func(), error) {
	if booter.Owns(id) {
		// This process's own phone: no lease, as with --sim.
		d, t, err := device.NewRegistry(booter.Hosts()...).Open(ctx, id)
		if err != nil {
			return nil, t, nil, err
		}
		return d, t, func() { d.Close() }, nil
	}
	if flags.Sim {
		if id != "" && id != simTargetID {
			return nil, device.Target{}, nil, fmt.Errorf("this playground drives a simulated phone (%q), not %q: restart it without --sim", simTargetID, id)
		}
		if flags.SimPlatform != "ios" {
			// Its own process: a crash of the phone cannot end the server.
			return openSimProcess(ctx, env, &flags, simState, supervised)
		}
	} else if id != "" {
		flags.ID = id
	}
	return openDevice(ctx, env, &flags)
}

// playgroundNoTargets is what the page says when no device is listed: ""
// (the server's own advice) but on a farm.
func playgroundNoTargets(f DeviceFlags) string {
	if f.Farm == "" {
		return ""
	}
	return "no ready device on the farm at " + f.Farm + ": apex farm devices --farm " + f.Farm + " lists them with their state, or boot a simulated phone here (POST /devices/boot)"
}

// playgroundTargets lists the devices a session can open: with --sim the
// simulated phone (started when the session opens), with --farm the
// farm's ready devices (farm, leased when the session opens), else every
// host's; and the phones booted from the page.
func playgroundTargets(ctx context.Context, env *Env, flags DeviceFlags, booter *simBooter, farm device.Host) ([]device.Target, error) {
	reg := device.NewRegistry(booter.Hosts()...)
	switch {
	case farm != nil:
		reg.Add(farm)
	case !flags.Sim:
		hosts, err := deviceHosts(env)
		if err != nil {
			return nil, err
		}
		for _, h := range hosts {
			reg.Add(h)
		}
	}
	ts, err := reg.Targets(ctx)
	if flags.Sim {
		p := device.Android
		if flags.SimPlatform == "ios" {
			p = device.IOS
		}
		ts = append([]device.Target{{ID: simTargetID, Host: "sim", Platform: p, State: "device", Model: "simulated phone"}}, ts...)
	}
	return ts, err
}
