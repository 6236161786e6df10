// Package plane runs the farm's control plane: an embedded nats-server with
// JetStream, alone or as one member of a cluster, with the farm's assets
// provisioned on it.
package plane

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/api"
	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/internal/httpguard"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Options configure a control-plane member. The zero value is one member
// on 127.0.0.1:4222 with its data in a temporary directory.
type Options struct {
	// Name is the member's server name, unique in a cluster (default
	// "apex-farm-<port>").
	Name string
	// DataDir keeps JetStream's streams and buckets; required.
	DataDir string
	// Listen is the client address (default 127.0.0.1:4222; port 0 picks
	// one). Off loopback it needs Token.
	Listen string
	// Token, when set, turns authentication on: every client (hosts and
	// CLI) gives this token (it is an admin's) or a token made with
	// auth.Store (a user's API token, a host's join token). It may be
	// given as its bcrypt hash (farm.HashToken), so the machine running
	// the plane keeps no usable secret.
	Token string
	// Cluster is this member's route address (host:port) and Routes the
	// other members' (host:port); with Cluster set, the farm's assets are
	// replicated three times.
	Cluster string
	Routes  []string
	// TLS serves the client port over TLS with this certificate and key;
	// clients then trust it (farm.ConnectOptions.CA).
	TLS httpguard.TLS
	// Farm shapes the assets; its Replicas defaults to 3 with Cluster.
	Farm farm.Config
	Log  *slog.Logger
}

// Plane is a running control-plane member.
type Plane struct {
	ns *server.Server
	nc *nats.Conn
	js jetstream.JetStream
	// stop ends what the member serves besides NATS: the farm API and
	// the watch of tokens and projects.
	stop context.CancelFunc
}

// Start starts the member and, once JetStream answers (in a cluster: once a
// quorum of members is up), provisions the farm's assets. Start returns when
// they exist, or with ctx's error.
func Start(ctx context.Context, o Options) (*Plane, error) {
	if o.DataDir == "" {
		return nil, errors.New("plane: no data directory: give --data DIR")
	}
	if o.Listen == "" {
		o.Listen = "127.0.0.1:4222"
	}
	host, portStr, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("plane: --listen %q: %w: give HOST:PORT", o.Listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("plane: --listen %q: port: %w", o.Listen, err)
	}
	if !Loopback(host) && o.Token == "" {
		return nil, fmt.Errorf("plane: listening on %s needs authentication: give --token (hosts and clients pass the same)", o.Listen)
	}
	if o.Name == "" {
		o.Name = "apex-farm-" + portStr
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	sopts := &server.Options{ServerName: o.Name, Host: host, Port: port, JetStream: true, StoreDir: o.DataDir, NoSigs: true}
	if sopts.TLSConfig, err = o.TLS.Config(); err != nil {
		return nil, fmt.Errorf("plane: %w", err)
	}
	sopts.TLS = sopts.TLSConfig != nil
	// Clients log in as farm.User with the token, a user's API token or a
	// join token; the plane's own in-process connection has a random
	// password of its own, since the token may be known here only by its
	// hash.
	var internal string
	var authn *authenticator
	if o.Token != "" {
		internal = rand.Text()
		authn = &authenticator{root: o.Token, internal: internal, fails: httpguard.NewFailures(0, 0, nil)}
		sopts.CustomClientAuthentication = authn
		sopts.AuthTimeout = 10 // seconds: a bcrypt check on a busy machine can pass the default 2s
	}
	if o.Cluster != "" {
		ch, cp, err := net.SplitHostPort(o.Cluster)
		if err != nil {
			return nil, fmt.Errorf("plane: --cluster %q: %w: give HOST:PORT", o.Cluster, err)
		}
		cport, err := strconv.Atoi(cp)
		if err != nil {
			return nil, fmt.Errorf("plane: --cluster %q: port: %w", o.Cluster, err)
		}
		if cport == 0 {
			cport = server.RANDOM_PORT
		}
		sopts.Cluster = server.ClusterOpts{Name: "apex-farm", Host: ch, Port: cport}
		for _, r := range o.Routes {
			if !strings.Contains(r, "://") {
				r = "nats-route://" + r
			}
			u, err := url.Parse(r)
			if err != nil {
				return nil, fmt.Errorf("plane: --routes %q: %w", r, err)
			}
			sopts.Routes = append(sopts.Routes, u)
		}
		if o.Farm.Replicas == 0 {
			o.Farm.Replicas = 3
		}
	}
	ns, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("plane: %w", err)
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ns.SetLoggerV2(natsLog{log}, false, false, false)
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("plane: the NATS server did not start on %s within 10s (is the port taken?)", o.Listen)
	}
	if authn != nil {
		authn.ns.Store(ns)
	}
	life, stop := context.WithCancel(context.Background())
	p := &Plane{ns: ns, stop: stop}
	copts := []nats.Option{nats.Name(o.Name + "-plane"), nats.MaxReconnects(-1)}
	if sopts.TLSConfig != nil {
		// An in-process connection to a server that requires TLS hangs
		// (nats.go v1.55): dial the port over TLS instead, trusting
		// exactly our own certificate.
		copts = append(copts, nats.Secure(pinned(sopts.TLSConfig.Certificates[0].Certificate[0])))
	} else {
		copts = append(copts, nats.InProcessServer(ns))
	}
	if internal != "" {
		copts = append(copts, nats.UserInfo("apex-plane", internal))
	}
	if p.nc, err = nats.Connect(ns.ClientURL(), copts...); err != nil {
		ns.Shutdown()
		return nil, fmt.Errorf("plane: connect in process: %w", err)
	}
	if p.js, err = jetstream.New(p.nc); err != nil {
		p.Close()
		return nil, err
	}
	if err := farm.Provision(ctx, p.js, o.Farm); err != nil {
		p.Close()
		return nil, err
	}
	if authn != nil {
		kv, err := p.js.KeyValue(ctx, farm.BucketAuth)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("plane: open %s: %w", farm.BucketAuth, err)
		}
		authn.kv.Store(&kv)
		if err := authn.watch(life, kv); err != nil {
			p.Close()
			return nil, fmt.Errorf("plane: watch %s: %w", farm.BucketAuth, err)
		}
		st, err := auth.Open(ctx, p.js)
		if err == nil {
			err = st.ProvisionProjects(ctx)
		}
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("plane: the projects' stores: %w", err)
		}
	}
	if err := api.Serve(life, p.js, api.Options{Token: o.Token, Log: log}); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// ClientURL is the address hosts and clients dial (tls:// when the client
// port speaks TLS).
func (p *Plane) ClientURL() string { return p.ns.ClientURL() }

// Conn is the member's own in-process connection.
func (p *Plane) Conn() (*nats.Conn, jetstream.JetStream) { return p.nc, p.js }

// Close stops the member.
func (p *Plane) Close() {
	p.stop()
	if p.nc != nil {
		p.nc.Close()
	}
	p.ns.Shutdown()
	p.ns.WaitForShutdown()
}

// Loopback reports whether host names this machine only.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// natsLog hands the server's printf-style log lines to slog.
type natsLog struct{ l *slog.Logger }

func (n natsLog) Noticef(f string, v ...any) { n.l.Info(fmt.Sprintf(f, v...)) }
func (n natsLog) Warnf(f string, v ...any)   { n.l.Warn(fmt.Sprintf(f, v...)) }
func (n natsLog) Fatalf(f string, v ...any)  { n.l.Error(fmt.Sprintf(f, v...)) }
func (n natsLog) Errorf(f string, v ...any) {
	line := fmt.Sprintf(f, v...)
	if strings.Contains(line, `Subscription Violation - Subject "_INBOX.`) {
		// An apex from before each token had its own inbox asks with
		// answers to the shared one, which users may not read: its
		// requests time out on its side with no word why. This is where
		// the why is seen, once per connection (one inbox each).
		n.l.Warn("a client was refused the shared inbox _INBOX: it is an apex older than this control plane (each token now has its own inbox): upgrade apex on that machine", "nats", line)
		return
	}
	n.l.Error(line)
}
func (n natsLog) Debugf(f string, v ...any) { n.l.Debug(fmt.Sprintf(f, v...)) }
func (n natsLog) Tracef(f string, v ...any) { n.l.Debug(fmt.Sprintf(f, v...)) }

// pinned is a TLS client configuration that trusts the one certificate
// der, whatever names it carries.
func pinned(der []byte) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 || !bytes.Equal(raw[0], der) {
				return errors.New("plane: the client port presents another certificate than ours")
			}
			return nil
		}}
}
