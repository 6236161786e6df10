// Package lab runs a set of simulated phones, each serving adbd (Android)
// or WebDriverAgent over HTTP (iOS) on its own loopback TCP port, plus an optional loopback HTTP endpoint that reports
// the apps' state for tests.
package lab

import (
	"context"
	"errors"
	"fmt"
	"github.com/apexagent/apex/internal/supervise"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/apexagent/apex/sim"
	"github.com/apexagent/apex/sim/adbd"
	"github.com/apexagent/apex/sim/wda"
)

// Options configure a lab. The zero value starts one device on a free port
// with the built-in apps and no HTTP endpoint.
type Options struct {
	Android  int      // number of Android devices (0 = 1 unless IOS is set)
	IOS      int      // number of simulated iPhones, served as WebDriverAgent
	AppFiles []string // YAML app specs installed on every device
	Seed     int64    // device i gets Seed+i
	// PortBase is the first adbd port; device i listens on PortBase+i.
	// 0 picks free ports. Ports 5555–5585 are refused: the adb server
	// scans them and would list a device there twice.
	PortBase int
	// WDAPortBase is the first WebDriverAgent port; iPhone i listens on
	// WDAPortBase+i, and its MJPEG server on WDAPortBase+1000+i (8100 and
	// 9100 for the first, WebDriverAgent's own defaults). 0 picks free
	// ports.
	WDAPortBase int
	// StateAddr is where the HTTP state endpoint listens ("" = none,
	// "127.0.0.1:0" = a free port). Only loopback addresses are accepted.
	StateAddr string
	Log       *slog.Logger
	// Encoder is the Android phones' H.264 encoder for `screenrecord`
	// (adbd.Options.Encoder): "" is ffmpeg on PATH, "none" none.
	Encoder string
	// OnSupervise is told of the Android phones' supervised processes
	// (adbd.Options.OnSupervise).
	OnSupervise func(supervise.Event)
	// Prepare, when set, is given each phone (its index in start order)
	// before it answers any client: to restore a saved state, say.
	Prepare func(i int, p *sim.Phone) error
}

// DefaultPortBase is the first port `apex sim` uses.
const DefaultPortBase = 6520

// MaxDevices bounds Options.Android.
const MaxDevices = 256

// Lab is a running set of simulated devices.
type Lab struct {
	log     *slog.Logger
	devices []*Device
	http    *http.Server
	httpURL string
	mu      sync.Mutex
	stopCtx func() bool // guarded by mu
	once    sync.Once
}

// Device is one simulated phone.
type Device struct {
	Serial   string // "127.0.0.1:PORT", as `adb connect` names it
	Addr     string // the adbd or WebDriverAgent TCP address
	Platform string // "android" or "ios"
	URL      string // iOS: the WebDriverAgent base URL, http://127.0.0.1:PORT
	MJPEGURL string // iOS: the MJPEG stream of the screen, http://127.0.0.1:PORT
	Phone    *sim.Phone
	server   *adbd.Server
	wda      *wda.Server
	once     sync.Once
	done     chan struct{} // closed by Stop
}

// Server returns an Android device's adbd (its file system, its phone);
// nil for an iPhone.
func (d *Device) Server() *adbd.Server { return d.server }

// WDA returns an iPhone's WebDriverAgent server; nil for Android.
func (d *Device) WDA() *wda.Server { return d.wda }

// Stop closes the device's listener and every connection: the device
// vanishes, as a phone unplugged (or WebDriverAgent killed).
func (d *Device) Stop() {
	d.once.Do(func() {
		if d.server != nil {
			d.server.Close()
		}
		if d.wda != nil {
			d.wda.Close()
		}
		close(d.done)
	})
}

// Start starts the devices and, when asked, the state endpoint. Cancelling
// ctx closes the lab, as Close does.
func Start(ctx context.Context, opts Options) (*Lab, error) {
	n := opts.Android
	if n == 0 && opts.IOS == 0 {
		n = 1
	}
	if n < 0 || n > MaxDevices {
		return nil, fmt.Errorf("lab: %d devices: use 1 to %d", n, MaxDevices)
	}
	if opts.IOS < 0 || opts.IOS > MaxDevices {
		return nil, fmt.Errorf("lab: %d iPhones: use 0 to %d", opts.IOS, MaxDevices)
	}
	if opts.WDAPortBase < 0 || opts.WDAPortBase+opts.IOS-1 > 65535 {
		return nil, fmt.Errorf("lab: WebDriverAgent port base %d with %d iPhones: use a base from 1024 to %d", opts.WDAPortBase, opts.IOS, 65536-opts.IOS)
	}
	if opts.PortBase < 0 || opts.PortBase+n-1 > 65535 {
		return nil, fmt.Errorf("lab: port base %d with %d devices: use a base from 1024 to %d", opts.PortBase, n, 65536-n)
	}
	if opts.PortBase > 0 && opts.PortBase <= 5585 && opts.PortBase+n-1 >= 5555 {
		return nil, fmt.Errorf("lab: ports %d–%d overlap 5555–5585, which the adb server adopts as emulators (each device would show twice); use --port-base %d", opts.PortBase, opts.PortBase+n-1, DefaultPortBase)
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var apps []*sim.AppSpec
	for _, f := range opts.AppFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("lab: read app spec: %w", err)
		}
		spec, err := sim.ParseApp(data, f)
		if err != nil {
			return nil, fmt.Errorf("lab: %w", err)
		}
		apps = append(apps, spec)
	}
	l := &Lab{log: log}
	for i := range n {
		d, err := startDevice(i, opts, apps, log)
		if err != nil {
			l.Close()
			return nil, err
		}
		l.devices = append(l.devices, d)
	}
	for i := range opts.IOS {
		d, err := startIPhone(i, opts, apps, log)
		if err != nil {
			l.Close()
			return nil, err
		}
		l.devices = append(l.devices, d)
	}
	if opts.StateAddr != "" {
		if err := l.serveState(opts.StateAddr); err != nil {
			l.Close()
			return nil, err
		}
	}
	l.mu.Lock()
	l.stopCtx = context.AfterFunc(ctx, func() { l.Close() })
	l.mu.Unlock()
	return l, nil
}

func startDevice(i int, opts Options, apps []*sim.AppSpec, log *slog.Logger) (*Device, error) {
	addr := "127.0.0.1:0"
	if opts.PortBase > 0 {
		addr = "127.0.0.1:" + strconv.Itoa(opts.PortBase+i)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("lab: device %d: listen on %s: %w (is another `apex sim` running? try another --port-base)", i+1, addr, err)
	}
	serial := ln.Addr().String()
	phone, err := sim.NewPhone(sim.Options{Serial: serial, Apps: apps, Seed: opts.Seed + int64(i), Log: log.With("device", serial)})
	if err == nil && opts.Prepare != nil {
		err = opts.Prepare(i, phone)
	}
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("lab: device %d: %w", i+1, err)
	}
	srv := adbd.NewServer(phone, &adbd.Options{Log: log.With("device", serial), Encoder: opts.Encoder, OnSupervise: opts.OnSupervise})
	go func() {
		if err := srv.Serve(ln); err != nil {
			log.Error("lab: device stopped serving", "device", serial, "err", err)
		}
	}()
	return &Device{Serial: serial, Addr: serial, Platform: sim.PlatformAndroid, Phone: phone, server: srv, done: make(chan struct{})}, nil
}

func startIPhone(i int, opts Options, apps []*sim.AppSpec, log *slog.Logger) (*Device, error) {
	addr := "127.0.0.1:0"
	if opts.WDAPortBase > 0 {
		addr = "127.0.0.1:" + strconv.Itoa(opts.WDAPortBase+i)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("lab: iPhone %d: listen on %s: %w (is another `apex sim` running? try another --wda-port-base)", i+1, addr, err)
	}
	serial := ln.Addr().String()
	phone, err := sim.NewPhone(sim.Options{Serial: serial, Platform: sim.PlatformIOS, Apps: apps, Seed: opts.Seed + int64(opts.Android+i),
		Log: log.With("device", serial)})
	if err == nil && opts.Prepare != nil {
		err = opts.Prepare(opts.Android+i, phone)
	}
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("lab: iPhone %d: %w", i+1, err)
	}
	mjpegAddr := "127.0.0.1:0"
	if opts.WDAPortBase > 0 {
		mjpegAddr = "127.0.0.1:" + strconv.Itoa(opts.WDAPortBase+1000+i)
	}
	mln, err := net.Listen("tcp", mjpegAddr)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("lab: iPhone %d: MJPEG server: listen on %s: %w (is another `apex sim` running? try another --wda-port-base)", i+1, mjpegAddr, err)
	}
	srv := wda.NewServer(phone, &wda.Options{Log: log.With("device", serial), MJPEGPort: mln.Addr().(*net.TCPAddr).Port})
	go func() {
		if err := srv.Serve(ln); err != nil {
			log.Error("lab: WebDriverAgent stopped serving", "device", serial, "err", err)
		}
	}()
	go func() {
		if err := srv.ServeMJPEG(mln); err != nil {
			log.Error("lab: the MJPEG server stopped serving", "device", serial, "err", err)
		}
	}()
	return &Device{Serial: serial, Addr: serial, Platform: sim.PlatformIOS, URL: "http://" + serial, MJPEGURL: "http://" + mln.Addr().String(),
		Phone: phone, wda: srv, done: make(chan struct{})}, nil
}

// Devices returns the lab's devices in start order (stopped ones included).
func (l *Lab) Devices() []*Device { return l.devices }

// Device returns the device with the given serial.
func (l *Lab) Device(serial string) (*Device, bool) {
	for _, d := range l.devices {
		if d.Serial == serial {
			return d, true
		}
	}
	return nil, false
}

// StateURL is the base URL of the HTTP state endpoint ("" without one).
func (l *Lab) StateURL() string { return l.httpURL }

// Close stops every device and the state endpoint.
func (l *Lab) Close() error {
	var err error
	l.once.Do(func() {
		l.mu.Lock()
		if l.stopCtx != nil {
			l.stopCtx()
		}
		l.mu.Unlock()
		for _, d := range l.devices {
			d.Stop()
		}
		if l.http != nil {
			if e := l.http.Close(); e != nil && !errors.Is(e, http.ErrServerClosed) {
				err = e
			}
		}
	})
	return err
}
