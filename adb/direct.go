package adb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/adb/proto"
)

// HostFeatures are the features this client advertises in its CNXN banner,
// the same set adb 29 knows.
var HostFeatures = []string{
	"shell_v2", "cmd", "stat_v2", "ls_v2", "fixed_push_mkdir", "apex", "abb",
	"fixed_push_symlink_timestamp", "abb_exec", "remount_shell",
}

// DirectOptions configures a Direct transport; nil means defaults.
type DirectOptions struct {
	Log *slog.Logger
	// WriteTimeout bounds one socket write; a device that accepts nothing for
	// that long is treated as gone. 0 means 10 s.
	WriteTimeout time.Duration
}

// Direct speaks the device protocol to an adbd over TCP, with no adb
// server. One TCP connection carries every stream, multiplexed; when it
// drops, the next Open dials again (once — retry policy is the caller's).
// Devices that demand AUTH are refused: use the adb server for them.
type Direct struct {
	addr string
	log  *slog.Logger
	wto  time.Duration

	mu     sync.Mutex
	conn   *directConn
	closed bool
}

var _ Transport = (*Direct)(nil)

// Dial connects to the adbd at addr (host:port) and completes the CNXN
// handshake within ctx.
func Dial(ctx context.Context, addr string, opts *DirectOptions) (*Direct, error) {
	if opts == nil {
		opts = &DirectOptions{}
	}
	d := &Direct{addr: addr, log: opts.Log, wto: opts.WriteTimeout}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.wto <= 0 {
		d.wto = 10 * time.Second
	}
	if _, err := d.connection(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// Serial is the device's address.
func (d *Direct) Serial() string { return d.addr }

// connection returns the live connection, dialling a new one if the last
// one died.
func (d *Direct) connection(ctx context.Context) (*directConn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("adb: direct transport to %s is closed", d.addr)
	}
	if d.conn != nil && !d.conn.dead() {
		return d.conn, nil
	}
	c, err := dialDirect(ctx, d.addr, d.wto, d.log)
	if err != nil {
		return nil, err
	}
	d.conn = c
	return c, nil
}

// Open opens a service stream on the device.
func (d *Direct) Open(ctx context.Context, service string) (Stream, error) {
	c, err := d.connection(ctx)
	if err != nil {
		return nil, err
	}
	return c.open(ctx, service)
}

// Banner returns the device's CNXN banner (product, model, features).
func (d *Direct) Banner(ctx context.Context) (proto.Banner, error) {
	c, err := d.connection(ctx)
	if err != nil {
		return proto.Banner{}, err
	}
	return c.banner, nil
}

// Features lists the features both the device and this client support.
func (d *Direct) Features(ctx context.Context) ([]string, error) {
	b, err := d.Banner(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range b.Features {
		if slices.Contains(HostFeatures, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// Close drops the connection; streams on it fail and later Opens error.
func (d *Direct) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.conn != nil {
		d.conn.fail(errors.New("transport closed"))
	}
	return nil
}

// dialDirect connects and performs the CNXN handshake.
func dialDirect(ctx context.Context, addr string, wto time.Duration, log *slog.Logger) (*directConn, error) {
	var dialer net.Dialer
	nc, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: connect to adbd at %s: %v", ErrGone, addr, err)
	}
	c := &directConn{nc: nc, r: bufio.NewReader(nc), addr: addr, wto: wto, log: log, streams: map[uint32]*directStream{},
		nextID: 1, maxData: proto.MaxPayload, done: make(chan struct{})}
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	err = c.handshake()
	stopped := stop()
	if err != nil || !stopped {
		nc.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("adb: handshake with %s: %w", addr, ctx.Err())
		}
		return nil, err
	}
	go c.readLoop()
	return c, nil
}

func (c *directConn) handshake() error {
	hello := proto.Message{Command: proto.CmdCNXN, Arg0: proto.Version, Arg1: proto.MaxPayload,
		Data: []byte("host::features=" + strings.Join(HostFeatures, ","))}
	if err := proto.WriteMessage(c.nc, hello); err != nil {
		return fmt.Errorf("%w: handshake with %s: %v", ErrGone, c.addr, err)
	}
	for {
		m, err := proto.ReadMessage(c.r, proto.MaxPayload)
		if err != nil {
			return fmt.Errorf("%w: handshake with %s: %v", ErrGone, c.addr, err)
		}
		switch m.Command {
		case proto.CmdCNXN:
			b, err := proto.ParseBanner(string(m.Data))
			if err != nil {
				return fmt.Errorf("adb: handshake with %s: %w", c.addr, err)
			}
			c.banner = b
			if m.Arg1 > 0 && int(m.Arg1) < c.maxData {
				c.maxData = int(m.Arg1)
			}
			return nil
		case proto.CmdAUTH:
			return fmt.Errorf("%w: adbd at %s asks for key authentication, which direct mode does not do: `adb connect %s` and use the adb server instead", ErrUnauthorized, c.addr, c.addr)
		case proto.CmdSTLS:
			return fmt.Errorf("adb: adbd at %s wants TLS (wireless debugging): use the adb server to pair and connect", c.addr)
		}
	}
}
