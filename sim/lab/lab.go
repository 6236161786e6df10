// Package lab runs a set of simulated phones, each serving adbd on its own
// loopback TCP port, plus an optional loopback HTTP endpoint that reports
// the apps' state for tests.
package lab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/apexagent/apex/sim"
	"github.com/apexagent/apex/sim/adbd"
)

// Options configure a lab. The zero value starts one device on a free port
// with the built-in apps and no HTTP endpoint.
type Options struct {
	Android  int      // number of Android devices (0 = 1)
	AppFiles []string // YAML app specs installed on every device
	Seed     int64    // device i gets Seed+i
	// PortBase is the first adbd port; device i listens on PortBase+i.
	// 0 picks free ports. Ports 5555–5585 are refused: the adb server
	// scans them and would list a device there twice.
	PortBase int
	// StateAddr is where the HTTP state endpoint listens ("" = none,
	// "127.0.0.1:0" = a free port). Only loopback addresses are accepted.
	StateAddr string
	Log       *slog.Logger
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

// Device is one simulated Android phone.
type Device struct {
	Serial string // "127.0.0.1:PORT", as `adb connect` names it
	Addr   string // the adbd TCP address
	Phone  *sim.Phone
	server *adbd.Server
	once   sync.Once
	done   chan struct{} // closed by Stop
}

// Server returns the device's adbd (its file system, its phone).
func (d *Device) Server() *adbd.Server { return d.server }

// Stop closes the device's listener and every connection: the device
// vanishes, as a phone unplugged.
func (d *Device) Stop() {
	d.once.Do(func() {
		d.server.Close()
		close(d.done)
	})
}

// Start starts the devices and, when asked, the state endpoint. Cancelling
// ctx closes the lab, as Close does.
func Start(ctx context.Context, opts Options) (*Lab, error) {
	n := opts.Android
	if n == 0 {
		n = 1
	}
	if n < 0 || n > MaxDevices {
		return nil, fmt.Errorf("lab: %d devices: use 1 to %d", n, MaxDevices)
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
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("lab: device %d: %w", i+1, err)
	}
	srv := adbd.NewServer(phone, &adbd.Options{Log: log.With("device", serial)})
	go func() {
		if err := srv.Serve(ln); err != nil {
			log.Error("lab: device stopped serving", "device", serial, "err", err)
		}
	}()
	return &Device{Serial: serial, Addr: serial, Phone: phone, server: srv, done: make(chan struct{})}, nil
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
