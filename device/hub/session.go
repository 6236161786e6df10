package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/device"
)

// ErrRunCap is the error of a Boot past the session host's run cap.
var ErrRunCap = errors.New("run cap reached")

// SessionOptions configure a SessionHost.
type SessionOptions struct {
	// RunCap is how many sessions may run at once (0: no cap).
	RunCap int
	// IdleCap stops a session no driver has had open for this long (0:
	// never).
	IdleCap time.Duration
	// StateDir records the sessions this host started, one file each, so
	// the next process stops those a crashed one left running.
	StateDir string
	Log      *slog.Logger
}

// Session is one device a SessionHost booted.
type Session struct {
	device.Booted
	Host string `json:"host"`
	// Owner is the process that started the session.
	Owner    int       `json:"owner"`
	Started  time.Time `json:"started"`
	LastUsed time.Time `json:"last_used"`
	// Open counts the drivers open on it now.
	Open int `json:"open"`
}

// SessionHost wraps a Booter whose devices are billed sessions: it refuses
// to boot past RunCap, stops sessions left unused for IdleCap, records each
// session it starts in StateDir and, when it starts, stops the sessions a
// crashed process recorded there. It never touches a session it did not
// start, nor one a live process started. Safe for concurrent use.
type SessionHost struct {
	b    device.Booter
	opts SessionOptions
	log  *slog.Logger

	mu       sync.Mutex
	sessions map[string]*Session // by serial
	stop     chan struct{}
	done     chan struct{}
}

var _ device.Booter = (*SessionHost)(nil)

// NewSessionHost wraps b. It first stops the orphans in opts.StateDir:
// sessions of a host of b's name whose owner process is gone. Close stops
// every session it started.
func NewSessionHost(ctx context.Context, b device.Booter, opts SessionOptions) (*SessionHost, error) {
	if opts.StateDir == "" {
		return nil, errors.New("hub: a session host needs a state directory to record its sessions in")
	}
	if err := os.MkdirAll(opts.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("hub: state directory: %w", err)
	}
	h := &SessionHost{b: b, opts: opts, log: opts.Log, sessions: map[string]*Session{}, stop: make(chan struct{}), done: make(chan struct{})}
	if h.log == nil {
		h.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := h.stopOrphans(ctx); err != nil {
		return nil, err
	}
	caps := HostCaps{Host: b.Name(), RunCap: opts.RunCap, IdleCap: opts.IdleCap.String(), Owner: os.Getpid()}
	if err := writeJSON(filepath.Join(opts.StateDir, "host-"+fileName(b.Name())+".json"), caps); err != nil {
		return nil, err
	}
	go h.idleLoop()
	return h, nil
}

// Name is the wrapped host's name.
func (h *SessionHost) Name() string { return h.b.Name() }

// Targets lists the wrapped host's devices.
func (h *SessionHost) Targets(ctx context.Context) ([]device.Target, error) { return h.b.Targets(ctx) }

// Caps are the host's run and idle caps.
func (h *SessionHost) Caps() (run int, idle time.Duration) { return h.opts.RunCap, h.opts.IdleCap }

// Sessions lists the sessions running now, oldest first.
func (h *SessionHost) Sessions() []Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Session, 0, len(h.sessions))
	for _, s := range h.sessions {
		if s.Target.Serial != "" { // not a place held while booting
			out = append(out, *s)
		}
	}
	slices.SortFunc(out, func(a, b Session) int { return a.Started.Compare(b.Started) })
	return out
}

// Boot starts a session unless RunCap sessions run.
func (h *SessionHost) Boot(ctx context.Context) (device.Booted, error) {
	h.mu.Lock()
	if n := len(h.sessions); h.opts.RunCap > 0 && n >= h.opts.RunCap {
		var ids []string
		for s := range h.sessions {
			ids = append(ids, s)
		}
		h.mu.Unlock()
		slices.Sort(ids)
		return device.Booted{}, fmt.Errorf("hub: host %s: %w: %d of %d sessions run (%s): close one first, or raise the run cap",
			h.Name(), ErrRunCap, n, h.opts.RunCap, strings.Join(ids, ", "))
	}
	// Hold a place while booting, so two Boots cannot both pass the cap.
	placeholder := fmt.Sprintf("booting-%d", time.Now().UnixNano())
	h.sessions[placeholder] = &Session{Started: time.Now()}
	h.mu.Unlock()
	b, err := h.b.Boot(ctx)
	h.mu.Lock()
	delete(h.sessions, placeholder)
	h.mu.Unlock()
	if err != nil {
		return b, err
	}
	now := time.Now()
	s := &Session{Booted: b, Host: h.Name(), Owner: os.Getpid(), Started: now, LastUsed: now}
	if err := h.record(s); err != nil {
		_ = h.b.Shutdown(context.WithoutCancel(ctx), b.Target.Serial)
		return device.Booted{}, err
	}
	h.mu.Lock()
	h.sessions[b.Target.Serial] = s
	h.mu.Unlock()
	h.log.Info("session started", "host", h.Name(), "device", b.Target.ID, "pid", b.PID)
	return b, nil
}

// Open opens a session's device; the session counts as in use until the
// driver is closed.
func (h *SessionHost) Open(ctx context.Context, serial string) (device.Driver, error) {
	d, err := h.b.Open(ctx, serial)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	s := h.sessions[serial]
	if s != nil {
		s.Open++
	}
	h.mu.Unlock()
	if s == nil {
		return d, nil
	}
	return &usedDriver{Driver: d, close: func() {
		h.mu.Lock()
		s.Open--
		s.LastUsed = time.Now()
		h.mu.Unlock()
	}}, nil
}

// Shutdown stops a session and forgets it.
func (h *SessionHost) Shutdown(ctx context.Context, serial string) error {
	h.mu.Lock()
	s, ok := h.sessions[serial]
	delete(h.sessions, serial)
	h.mu.Unlock()
	if !ok {
		return fmt.Errorf("hub: host %s started no session %s: %w", h.Name(), serial, device.ErrNotFound)
	}
	err := h.b.Shutdown(ctx, serial)
	if rerr := os.Remove(h.recordPath(s)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	h.log.Info("session stopped", "host", h.Name(), "device", s.Target.ID)
	return err
}

// Close stops every session this host started.
func (h *SessionHost) Close() error {
	select {
	case <-h.stop:
		return nil
	default:
	}
	close(h.stop)
	<-h.done
	var errs []error
	for _, s := range h.Sessions() {
		errs = append(errs, h.Shutdown(context.Background(), s.Target.Serial))
	}
	return errors.Join(errs...)
}

// idleLoop stops sessions no driver has used for IdleCap.
func (h *SessionHost) idleLoop() {
	defer close(h.done)
	if h.opts.IdleCap <= 0 {
		<-h.stop
		return
	}
	t := time.NewTicker(max(h.opts.IdleCap/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case now := <-t.C:
			var idle []string
			h.mu.Lock()
			for serial, s := range h.sessions {
				if s.Target.Serial != "" && s.Open == 0 && now.Sub(s.LastUsed) >= h.opts.IdleCap {
					idle = append(idle, serial)
				}
			}
			h.mu.Unlock()
			for _, serial := range idle {
				h.log.Info("session idle past the cap: stopping it", "host", h.Name(), "serial", serial, "idle_cap", h.opts.IdleCap)
				if err := h.Shutdown(context.Background(), serial); err != nil {
					h.log.Warn("stopping an idle session", "serial", serial, "err", err)
				}
			}
		}
	}
}

// HostCaps are the caps a session host runs with, as it records them in
// its state directory.
type HostCaps struct {
	Host    string `json:"host"`
	RunCap  int    `json:"run_cap"`
	IdleCap string `json:"idle_cap"`
	Owner   int    `json:"owner"`
}

// DefaultStateDir is where session hosts record their sessions unless told
// otherwise: $APEX_SESSIONS_DIR, or apex/sessions in the user's state
// directory.
func DefaultStateDir() string {
	if d := os.Getenv("APEX_SESSIONS_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "apex", "sessions")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "apex", "sessions")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("apex-sessions-%d", os.Getuid()))
}

// ReadHostCaps reads the caps of the session hosts recorded in dir.
func ReadHostCaps(dir string) ([]HostCaps, error) {
	files, err := filepath.Glob(filepath.Join(dir, "host-*.json"))
	if err != nil {
		return nil, err
	}
	var out []HostCaps
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var c HostCaps
		if json.Unmarshal(b, &c) == nil && c.Host != "" {
			out = append(out, c)
		}
	}
	return out, nil
}

func fileName(s string) string { return strings.NewReplacer("/", "_", ":", "_").Replace(s) }

func (h *SessionHost) recordPath(s *Session) string {
	return filepath.Join(h.opts.StateDir, fileName(s.Host+"-"+s.Target.Serial)+".json")
}

func (h *SessionHost) record(s *Session) error {
	if err := writeJSON(h.recordPath(s), s); err != nil {
		return fmt.Errorf("hub: record session: %w", err)
	}
	return nil
}

// writeJSON replaces the file at p with v, whole or not at all.
func writeJSON(p string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// ReadSessions reads the sessions recorded in a state directory, with
// whether their owner still runs.
func ReadSessions(dir string) ([]Session, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasPrefix(filepath.Base(f), "host-") })
	var out []Session
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var s Session
		if json.Unmarshal(b, &s) != nil || s.Target.Serial == "" {
			continue
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Session) int { return a.Started.Compare(b.Started) })
	return out, nil
}

// OwnerAlive reports whether the process that started s still runs.
func (s Session) OwnerAlive() bool { return alive(s.Owner) }

// stopOrphans stops the sessions of this host's name recorded by a process
// that is gone, and forgets them. Sessions of other hosts and of live
// processes are left alone, and so is a process whose command line is not
// the one recorded (its PID was reused).
func (h *SessionHost) stopOrphans(ctx context.Context) error {
	recs, err := ReadSessions(h.opts.StateDir)
	if err != nil {
		return err
	}
	for _, s := range recs {
		if s.Host != h.Name() || (s.Owner != os.Getpid() && s.OwnerAlive()) {
			continue
		}
		h.log.Info("stopping an orphaned session", "host", s.Host, "device", s.Target.ID, "pid", s.PID, "owner", s.Owner)
		if err := stopProcess(ctx, s.PID, s.Cmdline, 5*time.Second); err != nil {
			return fmt.Errorf("hub: stop the orphaned session %s (pid %d): %w", s.Target.ID, s.PID, err)
		}
		if err := os.Remove(h.recordPath(&s)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// usedDriver marks its session in use until Close.
type usedDriver struct {
	device.Driver
	once  sync.Once
	close func()
}

// Unwrap lets callers find the wrapped driver's extensions.
func (d *usedDriver) Unwrap() device.Driver { return d.Driver }

func (d *usedDriver) Close() error {
	err := d.Driver.Close()
	d.once.Do(d.close)
	return err
}
