// Package engine runs steps for every face: a script's step, a planned
// step of a goal, a playground action and an MCP tool call all go through
// Session.Run, which observes the screen, finds the step's targets, acts
// through the action space, waits for the screen to settle, verifies the
// step's expectation and records what happened — the same record whoever
// asked for the step.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/perceive"
)

// Options configure a Session. The zero value works: rules locate targets,
// OCR is used when the tree cannot be trusted, nothing is recorded.
type Options struct {
	// Space is the action space; nil picks action.ForPlatform of the device.
	Space *action.Space
	// Perception configures how the screen is observed (OCR mode and
	// engine, Scene options, settle and poll timing).
	Perception perceive.Options
	// FindTimeout is how long a step waits for its targets to appear
	// (default 5s); optional steps look once unless they set their own.
	FindTimeout time.Duration
	// FindQuiet ends that wait early: when the screen has stayed the same
	// this long (default 2s; negative: never), shows no progress
	// indicator, has been read whole, and shows nothing close to a
	// missing target (locate.MissingError.Near), it is not going to.
	FindQuiet time.Duration
	// ExpectTimeout is how long an expectation is re-checked before the
	// step fails (default 2s).
	ExpectTimeout time.Duration
	// Recorder keeps each step's record; nil records nothing.
	Recorder Recorder
	Log      *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.FindTimeout <= 0 {
		o.FindTimeout = 5 * time.Second
	}
	if o.ExpectTimeout <= 0 {
		o.ExpectTimeout = 2 * time.Second
	}
	if o.FindQuiet == 0 {
		o.FindQuiet = 2 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Perception.Log == nil {
		o.Perception.Log = o.Log
	}
	o.Perception.Timing = o.Perception.Timing.WithDefaults()
	return o
}

// Session drives one device for one run, task or lease: it knows the
// screen the last step left, so the next step starts from it without
// observing again. A Session runs one step at a time; its methods are not
// safe for concurrent use.
type Session struct {
	opts  Options
	log   *slog.Logger
	raw   device.Driver
	drv   device.Driver // raw, with device time counted
	timed *timedDriver
	p     *perceive.Perceiver
	space *action.Space
	cur   *perceive.Screen // the screen the last step settled on
}

// New returns a Session on d. Close it to stop the OCR engine it may have
// started; d stays open.
func New(d device.Driver, opts *Options) *Session {
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	drv, timed := wrapTimed(d)
	return &Session{opts: o, log: o.Log, raw: d, drv: drv, timed: timed, space: o.Space,
		p: perceive.New(drv, &o.Perception)}
}

// Close stops what the session started (OCR processes).
func (s *Session) Close() { s.p.Close() }

// Driver is the device the session drives, with its time counted.
func (s *Session) Driver() device.Driver { return s.drv }

// Raw is the device as given, for platform extras (a shell, raw WDA).
func (s *Session) Raw() device.Driver { return s.raw }

// Perceiver is how the session observes the screen.
func (s *Session) Perceiver() *perceive.Perceiver { return s.p }

// DeviceTime is the time spent in device calls so far.
func (s *Session) DeviceTime() time.Duration { return s.timed.Spent() }

// Options are the session's options, defaults filled.
func (s *Session) Options() Options { return s.opts }

// Space is the session's action space, read from the device on first use
// when Options.Space is nil.
func (s *Session) Space(ctx context.Context) (*action.Space, error) {
	if s.space == nil {
		info, err := s.drv.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("read device info: %w", err)
		}
		s.space = action.ForPlatform(info.Platform)
	}
	return s.space, nil
}

// Current is the screen the last step left (settled), observing and
// settling when there is none; it has a screenshot.
func (s *Session) Current(ctx context.Context) (*perceive.Screen, error) {
	if s.cur == nil {
		sc, err := s.p.Settle(ctx)
		if err != nil {
			return nil, fmt.Errorf("observe the screen: %w", err)
		}
		s.cur = sc
	}
	if err := s.p.Shoot(ctx, s.cur); err != nil {
		return nil, err
	}
	return s.cur, nil
}

// Settle waits for the screen to settle and makes it the current screen.
func (s *Session) Settle(ctx context.Context) (*perceive.Screen, error) {
	sc, err := s.p.Settle(ctx)
	if err != nil {
		s.cur = nil
		return nil, err
	}
	s.cur = sc
	return sc, nil
}

// Look observes once (perceived, not settled) and makes it the current
// screen.
func (s *Session) Look(ctx context.Context) (*perceive.Screen, error) {
	sc, err := s.p.Look(ctx)
	if err != nil {
		s.cur = nil
		return nil, err
	}
	s.cur = sc
	return sc, nil
}

// Forget drops the current screen: the next step observes afresh (the
// device was driven outside the session).
func (s *Session) Forget() { s.cur = nil }

// Fatal reports whether an error ends a whole run: the device is gone or
// ctx ended.
func Fatal(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, device.ErrOffline)
}
