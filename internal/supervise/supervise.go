// Package supervise keeps a process running: it starts it again with a
// growing backoff each time it ends, reports every start and end as an
// event, and stops it when its context ends. A crash of what it runs can
// never take the caller down.
package supervise

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"syscall"
	"time"
)

// Kind is what happened to a supervised process.
type Kind string

const (
	Started Kind = "started" // a run began
	Exited  Kind = "exited"  // a run ended on its own; another follows after Event.Backoff
	Stopped Kind = "stopped" // the context ended: no more runs
)

// Event is one start or end of a supervised run.
type Event struct {
	Name    string
	Kind    Kind
	Run     int           // 1 for the first run
	Err     error         // Exited: why the run ended (nil: it returned without error)
	Backoff time.Duration // Exited: the wait before the next run
}

func (e Event) String() string {
	switch e.Kind {
	case Exited:
		why := "ended"
		if e.Err != nil {
			why = "crashed: " + e.Err.Error()
		}
		return fmt.Sprintf("%s (run %d) %s; restarting in %v", e.Name, e.Run, why, e.Backoff)
	case Started:
		return fmt.Sprintf("%s (run %d) started", e.Name, e.Run)
	}
	return fmt.Sprintf("%s stopped after %d runs", e.Name, e.Run)
}

// Options configure Run. The zero value restarts after 100ms, doubling up
// to 5s while runs last under 10s.
type Options struct {
	Name       string
	MinBackoff time.Duration // the first wait (default 100ms)
	MaxBackoff time.Duration // the longest wait (default 5s)
	// Stable is how long a run must last for the next wait to start from
	// MinBackoff again (default 10s).
	Stable time.Duration
	// OnEvent, when set, is called with every event, on Run's goroutine.
	OnEvent func(Event)
	Log     *slog.Logger
}

// Run calls run again and again until ctx ends, then returns ctx's error.
// run must return when its ctx ends.
func Run(ctx context.Context, opts Options, run func(ctx context.Context) error) error {
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 100 * time.Millisecond
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(5*time.Second, opts.MinBackoff)
	}
	if opts.Stable <= 0 {
		opts.Stable = 10 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	report := func(e Event) {
		e.Name = opts.Name
		if e.Kind == Exited {
			opts.Log.Warn("supervise: " + e.String())
		} else {
			opts.Log.Debug("supervise: " + e.String())
		}
		if opts.OnEvent != nil {
			opts.OnEvent(e)
		}
	}
	backoff := opts.MinBackoff
	for n := 1; ; n++ {
		report(Event{Kind: Started, Run: n})
		began := time.Now()
		err := run(ctx)
		if ctx.Err() != nil {
			report(Event{Kind: Stopped, Run: n})
			return ctx.Err()
		}
		if time.Since(began) >= opts.Stable {
			backoff = opts.MinBackoff
		}
		report(Event{Kind: Exited, Run: n, Err: err, Backoff: backoff})
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			report(Event{Kind: Stopped, Run: n})
			return ctx.Err()
		}
		backoff = min(2*backoff, opts.MaxBackoff)
	}
}

// Command returns a run func for Run that starts the command newCmd
// builds and waits for it. When ctx ends the command is sent SIGTERM and,
// after grace, killed. newCmd must not start the command.
func Command(newCmd func(ctx context.Context) (*exec.Cmd, error), grace time.Duration) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		cmd, err := newCmd(ctx)
		if err != nil {
			return err
		}
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = grace
		err = cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) && len(exit.Stderr) > 0 {
			err = fmt.Errorf("%w: %s", err, exit.Stderr)
		}
		return err
	}
}
