package device

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Target is a device a Host can see, whether or not it can be opened now.
type Target struct {
	// ID is unique across hosts: "<host>/<serial>", e.g. "adb/127.0.0.1:6520".
	ID       string   `json:"id"`
	Host     string   `json:"host"`
	Serial   string   `json:"serial"`
	Platform Platform `json:"platform"`
	State    string   `json:"state"` // "device", "offline", "unauthorized", …
	Model    string   `json:"model,omitempty"`
	Width    int      `json:"width,omitempty"`
	Height   int      `json:"height,omitempty"`
	// Hint says what to do when the device is not usable in its state.
	Hint string `json:"hint,omitempty"`
}

// Ready reports whether the target can be opened.
func (t Target) Ready() bool { return t.State == "device" || t.State == "ready" }

// Host discovers devices of one kind (an adb server, a WebDriverAgent
// endpoint, a simulator) and opens drivers for them. Implementations are safe
// for concurrent use.
type Host interface {
	// Name is the host's prefix in device IDs; unique within a Registry.
	Name() string
	// Targets lists the devices this host sees now.
	Targets(ctx context.Context) ([]Target, error)
	// Open returns a driver for the device with the given serial.
	Open(ctx context.Context, serial string) (Driver, error)
}

// QualifiedID joins a host name and a serial into a device ID.
func QualifiedID(host, serial string) string { return host + "/" + serial }

// Registry finds devices across several hosts.
type Registry struct {
	hosts []Host
}

// NewRegistry returns a registry over hosts; names must be distinct.
func NewRegistry(hosts ...Host) *Registry { return &Registry{hosts: hosts} }

// Add registers another host.
func (r *Registry) Add(h Host) { r.hosts = append(r.hosts, h) }

// Targets lists the devices of every host. A host that fails is reported in
// the joined error, and the others are still listed.
func (r *Registry) Targets(ctx context.Context) ([]Target, error) {
	var all []Target
	var errs []error
	for _, h := range r.hosts {
		ts, err := h.Targets(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("host %s: %w", h.Name(), err))
			continue
		}
		all = append(all, ts...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all, errors.Join(errs...)
}

// AmbiguousError lists the devices a short ID could mean.
type AmbiguousError struct {
	Query      string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	if e.Query == "" {
		return fmt.Sprintf("%d devices are attached: choose one with --device ID (any unique part of it): %s",
			len(e.Candidates), strings.Join(e.Candidates, ", "))
	}
	return fmt.Sprintf("device %q is ambiguous: it matches %s; give more of the ID", e.Query, strings.Join(e.Candidates, ", "))
}

// Resolve finds the one target a user meant. The query may be a full ID, a
// serial, or any unambiguous part of either. An empty query picks the only
// ready device, if there is exactly one.
func (r *Registry) Resolve(ctx context.Context, query string) (Target, error) {
	ts, listErr := r.Targets(ctx)
	if query == "" {
		var ready []Target
		for _, t := range ts {
			if t.Ready() {
				ready = append(ready, t)
			}
		}
		switch len(ready) {
		case 1:
			return ready[0], nil
		case 0:
			if why := notReady(ts); why != "" {
				return Target{}, fmt.Errorf("no device is ready: %s: %w", why, errors.Join(ErrOffline, listErr))
			}
			return Target{}, fmt.Errorf("no device attached: connect one (adb connect HOST:PORT) or pass --sim: %w", errors.Join(ErrNotFound, listErr))
		default:
			return Target{}, &AmbiguousError{Query: query, Candidates: ids(ready)}
		}
	}
	return match(ts, query, listErr)
}

// match tries ever looser rules and stops at the first that matches anything.
func match(ts []Target, query string, listErr error) (Target, error) {
	rules := []func(Target) bool{
		func(t Target) bool { return t.ID == query },
		func(t Target) bool { return t.Serial == query },
		func(t Target) bool { return strings.HasPrefix(t.ID, query) || strings.HasPrefix(t.Serial, query) },
		func(t Target) bool { return strings.Contains(t.ID, query) },
	}
	for _, rule := range rules {
		var hits []Target
		for _, t := range ts {
			if rule(t) {
				hits = append(hits, t)
			}
		}
		switch {
		case len(hits) == 1:
			return hits[0], nil
		case len(hits) > 1:
			return Target{}, &AmbiguousError{Query: query, Candidates: ids(hits)}
		}
	}
	known := "none"
	if len(ts) > 0 {
		known = strings.Join(ids(ts), ", ")
	}
	return Target{}, fmt.Errorf("device %q: %w (known devices: %s)", query, errors.Join(ErrNotFound, listErr), known)
}

// Open resolves a query and opens the device it names.
func (r *Registry) Open(ctx context.Context, query string) (Driver, Target, error) {
	t, err := r.Resolve(ctx, query)
	if err != nil {
		return nil, Target{}, err
	}
	d, err := r.OpenTarget(ctx, t)
	return d, t, err
}

// OpenTarget opens a device Resolve returned, without listing the hosts'
// devices again.
func (r *Registry) OpenTarget(ctx context.Context, t Target) (Driver, error) {
	if !t.Ready() {
		return nil, fmt.Errorf("device %s is %s: %s: %w", t.ID, t.State, t.Hint, ErrOffline)
	}
	for _, h := range r.hosts {
		if h.Name() == t.Host {
			return h.Open(ctx, t.Serial)
		}
	}
	return nil, fmt.Errorf("device %s: host %q not registered: %w", t.ID, t.Host, ErrNotFound)
}

func ids(ts []Target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

// notReady names each attached device that cannot be driven in its state
// (an unauthorized phone, say) with what to do about it.
func notReady(ts []Target) string {
	var why []string
	for _, t := range ts {
		if !t.Ready() {
			w := t.ID + " is " + t.State
			if t.Hint != "" {
				w += ": " + t.Hint
			}
			why = append(why, w)
		}
	}
	return strings.Join(why, "; ")
}

// Booter is a Host that starts and stops devices on demand (simulated
// phones, emulators). Hosts that cannot leave it out; callers find out
// with a type assertion.
type Booter interface {
	Host
	// Boot starts one more device and returns it once it can be opened.
	Boot(ctx context.Context) (Booted, error)
	// Shutdown stops a device this host booted.
	Shutdown(ctx context.Context, serial string) error
}

// Booted is a device a Booter started, with the process serving it, by
// which another process can stop it after this one is gone.
type Booted struct {
	Target Target `json:"target"`
	// PID is the process serving the device (0: none of its own), and
	// Cmdline that process's command line as /proc shows it, so a reused
	// PID is never taken for it.
	PID     int    `json:"pid,omitempty"`
	Cmdline string `json:"cmdline,omitempty"`
}
