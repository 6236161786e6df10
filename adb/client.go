package adb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// DefaultPort is where the adb server listens unless told otherwise.
const DefaultPort = 5037

// Options configures a Client. The zero value (or nil) means: the address
// from ADB_SERVER_SOCKET or ANDROID_ADB_SERVER_PORT, else 127.0.0.1:5037,
// and "adb" from PATH to start the server.
type Options struct {
	Addr    string // host:port of the adb server
	ADBPath string // the adb binary used by StartServer
	Log     *slog.Logger
}

// Client talks to an adb server. It is safe for concurrent use: every
// request uses its own connection, as adb itself does.
type Client struct {
	addr    string
	adbPath string
	log     *slog.Logger
	dialer  net.Dialer
}

// NewClient returns a client for the adb server that opts (or the
// environment) names. It fails only on a malformed address.
func NewClient(opts *Options) (*Client, error) {
	if opts == nil {
		opts = &Options{}
	}
	addr := opts.Addr
	if addr == "" {
		var err error
		if addr, err = addrFromEnv(os.Getenv); err != nil {
			return nil, err
		}
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("adb: server address %q: %w (want host:port)", addr, err)
	}
	c := &Client{addr: addr, adbPath: opts.ADBPath, log: opts.Log}
	if c.adbPath == "" {
		c.adbPath = "adb"
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// addrFromEnv reads ADB_SERVER_SOCKET ("tcp:PORT" or "tcp:HOST:PORT") and
// ANDROID_ADB_SERVER_PORT the way adb does; the socket variable wins.
func addrFromEnv(getenv func(string) string) (string, error) {
	if s := getenv("ADB_SERVER_SOCKET"); s != "" {
		rest, ok := strings.CutPrefix(s, "tcp:")
		if !ok {
			return "", fmt.Errorf("adb: ADB_SERVER_SOCKET=%q: only tcp:[HOST:]PORT is supported", s)
		}
		host, port, err := net.SplitHostPort(rest)
		if err != nil {
			host, port = "127.0.0.1", rest
		}
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return "", fmt.Errorf("adb: ADB_SERVER_SOCKET=%q: bad port %q", s, port)
		}
		if host == "" || host == "localhost" {
			host = "127.0.0.1"
		}
		return net.JoinHostPort(host, port), nil
	}
	if p := getenv("ANDROID_ADB_SERVER_PORT"); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return "", fmt.Errorf("adb: ANDROID_ADB_SERVER_PORT=%q is not a port number", p)
		}
		return net.JoinHostPort("127.0.0.1", p), nil
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(DefaultPort)), nil
}

// Addr is the host:port of the server.
func (c *Client) Addr() string { return c.addr }

// dial connects to the server; a refused connection is ErrNoServer.
func (c *Client) dial(ctx context.Context) (*serverConn, error) {
	conn, err := c.dialer.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w at %s: start one with `adb -P %s start-server` (%v)", ErrNoServer, c.addr, c.port(), err)
		}
		return nil, fmt.Errorf("adb: connect to server %s: %w", c.addr, err)
	}
	return &serverConn{Conn: conn, r: bufio.NewReader(conn)}, nil
}

func (c *Client) port() string {
	_, p, _ := net.SplitHostPort(c.addr)
	return p
}

// query sends a host request and returns its length-prefixed reply.
func (c *Client) query(ctx context.Context, req string) (string, error) {
	conn, err := c.dial(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.request(ctx, req); err != nil {
		return "", err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	s, err := readHexString(conn)
	if ctx.Err() != nil {
		return "", fmt.Errorf("adb: %q: %w", req, ctx.Err())
	}
	if err != nil {
		return "", fmt.Errorf("adb: reading reply to %q: %w", req, err)
	}
	c.log.Debug("adb host request", "req", req, "reply", s)
	return s, nil
}

// Version returns the server's internal protocol version (41 for adb 1.0.41).
func (c *Client) Version(ctx context.Context) (int, error) {
	s, err := c.query(ctx, "host:version")
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: host:version reply %q is not hex", ErrProtocol, s)
	}
	return int(v), nil
}

// Devices lists the devices the server knows (host:devices-l).
func (c *Client) Devices(ctx context.Context) ([]DeviceInfo, error) {
	s, err := c.query(ctx, "host:devices-l")
	if err != nil {
		return nil, err
	}
	return ParseDevices(s)
}

// TrackDevices yields the device list each time it changes, starting with
// the current one, until ctx is done or the server goes away (then it
// yields the error once and stops).
func (c *Client) TrackDevices(ctx context.Context) iter.Seq2[[]DeviceInfo, error] {
	return func(yield func([]DeviceInfo, error) bool) {
		conn, err := c.dial(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		defer conn.Close()
		if err := conn.request(ctx, "host:track-devices"); err != nil {
			yield(nil, err)
			return
		}
		stop := context.AfterFunc(ctx, func() { conn.Close() })
		defer stop()
		for {
			s, err := readHexString(conn)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				yield(nil, fmt.Errorf("adb: tracking devices: %w", err))
				return
			}
			devs, err := ParseDevices(s)
			if !yield(devs, err) {
				return
			}
		}
	}
}

// Connect asks the server to connect to an adbd at host:port and returns
// the server's message. The server answers OKAY even when it fails, so the
// message decides.
func (c *Client) Connect(ctx context.Context, addr string) (string, error) {
	s, err := c.query(ctx, "host:connect:"+addr)
	if err != nil {
		return "", err
	}
	low := strings.ToLower(s)
	if !strings.HasPrefix(low, "connected") && !strings.HasPrefix(low, "already connected") {
		return s, fmt.Errorf("adb: connect %s: %s: %w", addr, strings.TrimSpace(s), ErrGone)
	}
	return s, nil
}

// Disconnect drops a TCP device from the server.
func (c *Client) Disconnect(ctx context.Context, addr string) error {
	_, err := c.query(ctx, "host:disconnect:"+addr)
	return err
}

// Features returns the features the server and the device share.
func (c *Client) Features(ctx context.Context, serial string) ([]string, error) {
	s, err := c.query(ctx, "host-serial:"+serial+":features")
	if err != nil {
		return nil, err
	}
	if s = strings.TrimSpace(s); s == "" {
		return nil, nil
	}
	return strings.Split(s, ","), nil
}

// KillServer stops the server (host:kill).
func (c *Client) KillServer(ctx context.Context) error {
	conn, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.request(ctx, "host:kill")
}

// StartServer starts an adb server on this client's port the way adb does
// (`adb -P PORT start-server`, which forks a daemon and waits for it), then
// checks that it answers. A running server is left alone.
func (c *Client) StartServer(ctx context.Context) error {
	if _, err := c.Version(ctx); err == nil {
		return nil
	}
	host, port, _ := net.SplitHostPort(c.addr)
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("adb: cannot start a server for %s: only loopback servers can be started here", c.addr)
	}
	cmd := exec.CommandContext(ctx, c.adbPath, "-P", port, "start-server")
	cmd.Env = append(os.Environ(), "ADB_SERVER_SOCKET=", "ANDROID_ADB_SERVER_PORT="+port)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("adb: %s -P %s start-server: %w: %s (install Debian's adb package or pass the binary path)", c.adbPath, port, err, strings.TrimSpace(string(out)))
	}
	if _, err := c.Version(ctx); err != nil {
		return fmt.Errorf("adb: server started on port %s but does not answer: %w", port, err)
	}
	return nil
}

// Device returns a transport to one device through the server.
func (c *Client) Device(serial string) *ServerTransport {
	return &ServerTransport{c: c, serial: serial}
}
