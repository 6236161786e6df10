//go:build !apexlite

package cli

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/api"
	"github.com/apexagent/apex/farm/artifact"
	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/console"
	"github.com/apexagent/apex/farm/host"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/plane"
	"github.com/apexagent/apex/farm/queue"
	"github.com/apexagent/apex/farm/records"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/internal/httpguard"
	"github.com/apexagent/apex/ocr"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/script"
	"github.com/apexagent/apex/server"
	"github.com/apexagent/apex/store"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
)

// farmFlags say how a command reaches the farm's control plane.
type farmFlags struct {
	URL, Token, Creds, CA string
}

func (f *farmFlags) register(cmd *cobra.Command, urlFlag string) {
	cmd.Flags().StringVar(&f.URL, urlFlag, os.Getenv(FarmEnv), "the farm's control plane: nats://HOST:4222, comma-separated for a cluster (default $"+FarmEnv+")")
	cmd.Flags().StringVar(&f.Token, "token", os.Getenv(FarmTokenEnv), "your farm token (apex farm token create; a host's from apex farm join-token; the admin's as given to apex farm serve --token) (default $"+FarmTokenEnv+")")
	cmd.Flags().StringVar(&f.Creds, "creds", "", "NATS credentials file, for a farm on an existing NATS deployment")
	cmd.Flags().StringVar(&f.CA, "tls-ca", os.Getenv(FarmCAEnv), "trust this certificate (PEM) of a farm serving TLS (apex farm serve --tls-cert) (default $"+FarmCAEnv+")")
}

func (f *farmFlags) connect(name string) (*nats.Conn, jetstream.JetStream, error) {
	return farm.Connect(farm.ConnectOptions{URL: f.URL, Token: f.Token, Creds: f.Creds, CA: f.CA, Name: name})
}

// farmClient is a connection to the farm with its queue, leases and
// registry opened.
type farmClient struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	q      *queue.Queue
	leases *lease.Leaser
	reg    *registry.Registry
	// api queues, cancels, leases and reads runs: what acts on a project
	// goes through the control plane's membership check.
	api *api.Client
}

func (f *farmFlags) dial(ctx context.Context, name string) (*farmClient, error) {
	nc, js, err := f.connect(name)
	if err != nil {
		return nil, err
	}
	c := &farmClient{nc: nc, js: js, api: api.NewClient(nc, f.Token, farmActor())}
	// A cluster that lost a member answers again once it has elected
	// new leaders.
	rctx, cancel := context.WithTimeout(ctx, farmWait)
	defer cancel()
	err = farm.Retry(rctx, func(ctx context.Context) (err error) {
		if c.q, err = queue.Open(ctx, js); err == nil {
			if c.leases, err = lease.New(ctx, js); err == nil {
				c.reg, err = registry.Open(ctx, js)
			}
		}
		return err
	})
	if err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

func (c *farmClient) Close() { c.nc.Close() }

// farmWait bounds how long a command keeps trying a control plane that
// does not answer.
const farmWait = 30 * time.Second

func newCmdFarm(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "farm",
		Short: "Run a device farm: a control plane, hosts next to phones, a run queue and leases",
		Long: `A farm shares many phones on many machines among many people.

apex farm serve runs the control plane (NATS with JetStream, embedded), alone
or as one member of a three-node cluster. apex farm host runs next to phones
and dials the control plane (it opens no port). apex farm run queues scripts;
hosts with a free matching device pull them. See docs/farm.md.`,
		Example: `  apex farm serve --data farm-data
  apex farm host --join nats://127.0.0.1:4222 --sim 4
  apex farm run --farm nats://127.0.0.1:4222 --follow examples/settings-toggle.yaml
  apex farm devices --farm nats://127.0.0.1:4222`,
	}
	cmd.AddCommand(newCmdFarmServe(env), newCmdFarmHost(env), newCmdFarmRun(env), newCmdFarmDevices(env),
		newCmdFarmLeases(env), newCmdFarmRuns(env), newCmdFarmLease(env), newCmdFarmCancel(env), newCmdFarmLimit(env),
		newCmdFarmToken(env), newCmdFarmUser(env), newCmdFarmProject(env), newCmdFarmJoinToken(env),
		newCmdFarmReport(env), newCmdFarmRetention(env), newCmdFarmApp(env))
	return cmd
}

// farmServeOptions are the flags of `apex farm serve`.
type farmServeOptions struct {
	Data, Listen, Token, Name string
	Cluster                   string
	Routes                    []string
	HTTP                      string    // --http: the console's address
	NATS                      farmFlags // --nats: use an existing NATS deployment
	Replicas                  int
	LeaseTTL, HeartbeatTTL    time.Duration
	// TLS serves the console and the NATS client port over TLS.
	TLS httpguard.TLS
}

func newCmdFarmServe(env *Env) *cobra.Command {
	o := &farmServeOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the farm's control plane (embedded NATS JetStream, or an existing NATS)",
		Long: `Run the farm's control plane until interrupted: a NATS server with JetStream
keeping the registry, leases, run queue, events, audit log and records,
plus the reaper that finds runs whose host died.

Three members form a cluster with --cluster (this member's route address)
and --routes (the others'); streams and buckets are then replicated three
times, and the farm keeps working while one member is down. With --nats the
farm lives on an existing NATS deployment instead.

Listening off loopback needs --token: the farm's admin token (or its bcrypt
hash, from apex farm token). With it an admin makes users, projects, their
tokens and the hosts' join token (apex farm user|project|token create|join-token).`,
		Example: `  apex farm serve --data farm-data
  apex farm serve --data d1 --listen 10.0.0.1:4222 --token $T --cluster 10.0.0.1:6222 --routes 10.0.0.2:6222,10.0.0.3:6222`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return farmServe(cmd.Context(), env, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.Data, "data", "apex-farm", "directory for the control plane's streams and buckets")
	f.StringVar(&o.Listen, "listen", "127.0.0.1:4222", "client address hosts and clients dial (port 0 picks one)")
	f.StringVar(&o.Token, "token", os.Getenv(FarmTokenEnv), "the farm's admin token or its bcrypt hash; turns authentication on (required off loopback; default $"+FarmTokenEnv+")")
	f.StringVar(&o.Name, "name", "", "this member's name, unique in a cluster (default from --listen)")
	f.StringVar(&o.Cluster, "cluster", "", "this member's cluster route address HOST:PORT (makes it a cluster member)")
	f.StringSliceVar(&o.Routes, "routes", nil, "the other members' route addresses HOST:PORT, comma-separated")
	f.StringVar(&o.HTTP, "http", "", "serve the web console on this address, e.g. 127.0.0.1:7420 (off loopback it needs --token)")
	f.StringVar(&o.NATS.URL, "nats", "", "use this existing NATS (JetStream enabled) instead of embedding one")
	f.StringVar(&o.NATS.Creds, "creds", "", "credentials file for --nats")
	f.IntVar(&o.Replicas, "replicas", 0, "replicas of every stream and bucket (default 1, or 3 with --cluster)")
	f.DurationVar(&o.LeaseTTL, "lease-ttl", 30*time.Second, "how long a lease lives without renewal (whole seconds; holders renew every third)")
	f.DurationVar(&o.HeartbeatTTL, "heartbeat-ttl", 15*time.Second, "how long a host stays registered without a heartbeat (hosts beat every third)")
	f.StringVar(&o.TLS.CertFile, "tls-cert", "", "serve the console (HTTPS) and the NATS client port (tls://) with this certificate (PEM; with --tls-key); clients trust it with --tls-ca")
	f.StringVar(&o.TLS.KeyFile, "tls-key", "", "the private key of --tls-cert (PEM)")
	return cmd
}

func farmServe(ctx context.Context, env *Env, o *farmServeOptions) error {
	cfg := farm.Config{Replicas: o.Replicas, LeaseTTL: o.LeaseTTL, HeartbeatTTL: o.HeartbeatTTL}
	var js jetstream.JetStream
	var url string
	if o.NATS.URL != "" {
		nc, j, err := o.NATS.connect("apex-farm-serve")
		if err != nil {
			return err
		}
		defer nc.Close()
		if err := farm.Provision(ctx, j, cfg); err != nil {
			return err
		}
		// The farm's tokens are not in use on an existing NATS: its
		// credentials say who may do what.
		if err := api.Serve(ctx, j, api.Options{Log: env.Log}); err != nil {
			return err
		}
		js, url = j, o.NATS.URL
	} else {
		p, err := plane.Start(ctx, plane.Options{Name: o.Name, DataDir: o.Data, Listen: o.Listen, Token: o.Token,
			Cluster: o.Cluster, Routes: o.Routes, Farm: cfg, TLS: o.TLS, Log: env.Log})
		if err != nil {
			return err
		}
		defer p.Close()
		_, js = p.Conn()
		url = p.ClientURL()
	}
	leases, err := lease.New(ctx, js)
	if err != nil {
		return err
	}
	q, err := queue.Open(ctx, js)
	if err != nil {
		return err
	}
	recs, err := records.Open(ctx, js)
	if err != nil {
		return err
	}
	go recs.Keep(ctx, time.Minute, env.Log)
	fmt.Fprintf(env.Out, "apex farm: serving on %s (lease TTL %v)\n", url, leases.TTL())
	if o.HTTP != "" {
		addr, err := serveConsole(ctx, js, o.HTTP, o.Token, o.TLS, env)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Out, "apex farm: console on %s://%s/\n", o.TLS.Scheme(), addr)
	}
	fmt.Fprintf(env.Err, "apex farm: hosts join with: apex farm host --join %s --sim N; press Ctrl-C to stop\n", url)
	q.Reaper(ctx, leases, max(leases.TTL()/3, 250*time.Millisecond), func(err error) { env.Log.Warn("reap", "err", err) })
	return nil
}

// farmHostOptions are the flags of `apex farm host`.
type farmHostOptions struct {
	Join    farmFlags
	ID      string
	Sim     int
	SimMax  int
	SimIdle time.Duration
	Labels  []string
	ADB     bool
	RunsDir string
	// AppCache and AppCacheBytes place and bound the cache of apps.
	AppCache      string
	AppCacheBytes int64
	// PreviewTransport locks the phones' live previews ("webrtc"; see
	// server.ParsePreviewTransport).
	PreviewTransport string
}

func newCmdFarmHost(env *Env) *cobra.Command {
	o := &farmHostOptions{}
	cmd := &cobra.Command{
		Use:   "host",
		Short: "Serve this machine's phones to a farm: register them and run the queued scripts they match",
		Long: `Serve phones to a farm until interrupted. The host dials the control plane
(it opens no port), registers itself and its devices with labels (platform,
model, os, screen, host and every --label) and a heartbeat, and pulls the
queued runs its free devices match. Before each run the apps it names are
reset (pm clear); a simulated phone starts afresh from its spec.`,
		Example: `  apex farm host --join nats://10.0.0.1:4222 --token $T --sim 8 --label pool=ci
  apex farm host --join nats://10.0.0.1:4222 --token $T --sim 2 --sim-max 8
  apex farm host --join nats://10.0.0.1:4222 --token $T --adb --label lab=berlin`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return farmHost(cmd.Context(), env, o) },
	}
	o.Join.register(cmd, "join")
	f := cmd.Flags()
	f.StringVar(&o.ID, "id", "", "this host's name in the farm (default: the machine's host name)")
	f.IntVar(&o.Sim, "sim", 0, "serve N simulated phones")
	f.IntVar(&o.SimMax, "sim-max", 0, "with --sim: boot more simulated phones, up to this many, while queued runs wait for a free one")
	f.DurationVar(&o.SimIdle, "sim-idle", 30*time.Second, "with --sim-max: shut down a phone booted past --sim once idle this long")
	f.StringArrayVar(&o.Labels, "label", nil, "add a label key=value to every device (repeatable)")
	f.BoolVar(&o.ADB, "adb", false, "serve the ready devices of the adb server and WebDriverAgent (see apex devices)")
	f.StringVar(&o.AppCache, "app-cache", "", "where fetched apps are cached by hash (default RUNS_DIR/app-cache)")
	f.Int64Var(&o.AppCacheBytes, "app-cache-bytes", artifact.DefaultCacheBytes, "bound of the app cache; the least recently used apps go first")
	f.StringVar(&o.RunsDir, "runs-dir", "", "where runs are recorded here before upload (default $"+RunsDirEnv+" or "+DefaultRunsDir+")")
	f.StringVar(&o.PreviewTransport, "preview-transport", "auto", "the live preview through the front door: auto (H.264 over a WebSocket, else MJPEG) or webrtc (the screen flows from this host to the viewer)")
	return cmd
}

func farmHost(ctx context.Context, env *Env, o *farmHostOptions) error {
	labels, err := registry.ParseLabels(o.Labels...)
	if err != nil {
		return fmt.Errorf("--label: %w", err)
	}
	transport, err := server.ParsePreviewTransport(o.PreviewTransport)
	if err != nil {
		return err
	}
	nc, js, err := o.Join.connect("apex-farm-host " + o.ID)
	if err != nil {
		return err
	}
	defer nc.Close()
	if o.SimMax > 0 && o.SimMax < o.Sim {
		return fmt.Errorf("--sim-max %d is under --sim %d: give at least as many", o.SimMax, o.Sim)
	}
	// A join token may name the projects whose runs its host takes.
	var projects []string
	if strings.HasPrefix(o.Join.Token, "apexj_") {
		st, err := auth.Open(ctx, js)
		if err != nil {
			return err
		}
		p, err := st.Verify(ctx, o.Join.Token)
		if err != nil {
			return fmt.Errorf("--token: %w (make a join token with apex farm join-token)", err)
		}
		projects = p.Projects
	}
	ho := host.Options{ID: o.ID, Labels: labels, Projects: projects, Sim: o.Sim, SimMax: o.SimMax, SimIdle: o.SimIdle, RunsDir: o.RunsDir, Log: env.Log,
		AppCache: o.AppCache, AppCacheBytes: o.AppCacheBytes,
		Load: func(data []byte, name string) (*script.Script, error) {
			return script.Load(data, name, &script.Options{Action: knownAction})
		}}
	if ho.RunsDir == "" {
		ho.RunsDir = defaultRunsDir()
	}
	if o.ADB {
		if ho.Devices, err = deviceHosts(env); err != nil {
			return err
		}
	}
	pst, err := openRuns(env, filepath.Join(ho.RunsDir, "playground"))
	if err != nil {
		return fmt.Errorf("open the playground's runs directory: %w", err)
	}
	defer pst.Close()
	engine := ocr.NewLazy(&ocr.TesseractOptions{Log: env.Log})
	defer engine.Close()
	if ho.Playground, err = farmPlayground(ctx, env, pst, engine, transport); err != nil {
		return err
	}
	// Said once the phones are registered: apex farm devices lists them
	// from then on.
	ho.Ready = func() {
		fmt.Fprintf(env.Err, "apex farm host: serving its phones to %s; press Ctrl-C to stop\n", o.Join.URL)
	}
	return host.Run(ctx, js, ho)
}

// farmPlayground builds the playground of each device a host serves, which
// the console's front door proxies to for the device's lease holder. Its
// model settings come from apex.yaml and the environment, as apex
// playground's do.
func farmPlayground(ctx context.Context, env *Env, st *store.Store, engine ocr.Engine, transport string) (func(registry.Device, host.OpenFunc) http.Handler, error) {
	cache, err := agent.OpenCache(ctx, "", st)
	if err != nil {
		return nil, err
	}
	return func(dev registry.Device, open host.OpenFunc) http.Handler {
		srv, err := server.New(server.Options{
			Open:    open,
			Targets: func(context.Context) ([]device.Target, error) { return []device.Target{dev.Target()}, nil },
			NewAgent: func(m server.ModelSettings, onEvent func(event.Event)) (agent.AI, error) {
				cfg, err := playgroundModel(env, "", os.Getenv, m)
				if err != nil {
					return nil, err
				}
				return agentFor(env, cfg, cache, onEvent, perceive.Auto, engine)
			},
			Perception:       perceive.Options{Mode: perceive.Auto, Engine: engine},
			Store:            st,
			Log:              env.Log.With("device", dev.ID),
			PreviewTransport: transport,
		})
		if err != nil {
			// server.New fails only without Open or NewAgent.
			panic(err)
		}
		context.AfterFunc(ctx, func() { srv.Close() })
		return srv.Handler()
	}, nil
}

// serveConsole serves the web console on addr until ctx ends; it returns
// the address it listens on.
func serveConsole(ctx context.Context, js jetstream.JetStream, addr, token string, tlsFiles httpguard.TLS, env *Env) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--http %q: %w: give HOST:PORT", addr, err)
	}
	if !plane.Loopback(host) && token == "" {
		return "", fmt.Errorf("--http %s: a console off loopback needs --token", addr)
	}
	c, err := console.New(ctx, js, console.Options{Token: token, Log: env.Log})
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("--http: %w", err)
	}
	if ln, err = tlsFiles.Listen(ln); err != nil {
		return "", err
	}
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	context.AfterFunc(ctx, func() { srv.Close() })
	return ln.Addr().String(), nil
}

func newCmdFarmToken(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Make the farm's admin token and its hash (give the hash to apex farm serve --token)",
		Long: `Print a new random token and its bcrypt hash. Start the control plane with the
hash (apex farm serve --token '$2a$…'), so the machine it runs on keeps no
usable secret, and keep the token for admins ($APEX_FARM_TOKEN): with it,
make users (apex farm user add), their tokens (apex farm token create --user
U --role R) and the hosts' join token (apex farm join-token).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			t := rand.Text()
			h, err := farm.HashToken(t)
			if err != nil {
				return err
			}
			if env.JSON {
				return env.PrintJSON(map[string]string{"token": t, "hash": h})
			}
			fmt.Fprintf(env.Out, "token\t%s\nhash\t%s\n", t, h)
			return nil
		},
	}
	cmd.AddCommand(newCmdFarmTokenCreate(env), newCmdFarmTokenRevoke(env))
	return cmd
}
