package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/scene"
)

// Step is the unit the engine runs: an action call, an expectation, or
// both (act, then check the settled screen). Scripts compile their steps
// into these, planners emit them, and the playground and MCP build them
// from the action a client names.
type Step struct {
	// Call is the action to run; zero for a step that only checks.
	Call action.Call
	// Expect is checked on the settled screen after the call (before it,
	// for a step without a call), re-checked until it holds or
	// ExpectTimeout passes.
	Expect *check.Check
	// On, when set, is the screen the caller read the call's targets on
	// (locators by element id refer to its Scene). When the device shows
	// another screen by the time the step starts, the step fails with
	// ErrScreenChanged instead of acting on what the caller did not see.
	On *perceive.Screen
	// Custom runs a step that is not an action of the space (a shell
	// command, a question to the AI runtime, reading an element): it gets
	// the record with Before set and fills what it did. The engine still
	// observes before and settles after, and records it like any step.
	Custom func(ctx context.Context, s *Session, r *Record) error

	// Task and Name say where the step comes from and how its author
	// wrote it (`tap: Search`), for the record.
	Task, Name string
	// Optional steps whose target is absent are skipped, not failed.
	Optional bool
	// FindTimeout bounds the wait for the call's targets (0: the
	// session's; an optional step looks once unless it sets one);
	// ExpectTimeout bounds re-checking Expect (0: the session's).
	FindTimeout, ExpectTimeout time.Duration
	// Message is what a failed expectation tells the reader (a script
	// assert's message); the evidence follows it.
	Message string
}

// ErrScreenChanged is the error of a step whose screen (Step.On) the
// device no longer shows: observe again and decide again.
var ErrScreenChanged = errors.New("the screen changed before the step could act")

func short(fp string) string {
	if len(fp) > 8 {
		return fp[:8]
	}
	return fp
}

// Step statuses.
const (
	Passed  = "passed"
	Failed  = "failed"
	Skipped = "skipped"
)

// Record is what a step leaves, whoever asked for it.
type Record struct {
	Task, Name string
	// Call is the call as run: its locators carry the targets found.
	Call action.Call
	// Action and Params name what was done when it was not a Call (a
	// custom step may set them).
	Action string
	Params json.RawMessage
	Status string // Passed, Failed or Skipped
	Err    error
	// Skipped says why an optional step did not run.
	Skipped string

	Started time.Time
	// Duration is the step's wall time; DeviceTime the part spent in
	// device calls, Waited the part spent waiting between observations on
	// purpose (settling, waiting for a target). The rest is Apex's own.
	Duration, DeviceTime, Waited time.Duration

	// Before is the screen the step acted on (observed when the step
	// found its target, with a screenshot of that moment); After is the
	// screen it settled on.
	Before, After *perceive.Screen
	// Acted reports that the device was driven (the screen must settle).
	Acted bool
	// Point is where the step touched; Element what it touched.
	Point   *device.Point
	Element *scene.Element
	// Expect and Verdict are the expectation and how it was judged.
	Expect  *check.Check
	Verdict *check.Result
	// Result is what a custom step produced (an answer, a command's
	// output), or what an action answered (a setting read back).
	Result any
}

// Recorder keeps step records (a store, a test). Step is called once per
// step from the goroutine running it; ctx is not cancelled by the step's
// own cancellation, so an interrupted run still leaves its record.
type Recorder interface {
	Step(ctx context.Context, r *Record) error
}

// RecorderFunc adapts a function to Recorder.
type RecorderFunc func(ctx context.Context, r *Record) error

// Step calls f.
func (f RecorderFunc) Step(ctx context.Context, r *Record) error { return f(ctx, r) }

// Run runs one step and records it. The record's Err says how it failed;
// Fatal(ctx, r.Err) tells a lost device or an ended context from a
// failed step.
func (s *Session) Run(ctx context.Context, st Step) *Record {
	r := &Record{Task: st.Task, Name: st.Name, Call: st.Call, Expect: st.Expect, Started: time.Now()}
	dev0, wait0 := s.timed.Spent(), s.p.Waited()
	r.Err = s.run(ctx, st, r)
	switch {
	case r.Err != nil:
		r.Status = Failed
	case r.Skipped != "":
		r.Status = Skipped
	default:
		r.Status = Passed
	}
	if r.Action == "" {
		r.Action = r.Call.Name()
	}
	if r.Params == nil && !r.Call.IsZero() {
		r.Params = r.Call.ParamsJSON()
	}
	r.Duration = time.Since(r.Started)
	r.DeviceTime = s.timed.Spent() - dev0
	r.Waited = s.p.Waited() - wait0
	if s.opts.Recorder != nil {
		if err := s.opts.Recorder.Step(context.WithoutCancel(ctx), r); err != nil {
			s.log.Error("engine: record step", "step", r.Name, "err", err)
		}
	}
	return r
}

func (s *Session) run(ctx context.Context, st Step, r *Record) error {
	if st.On != nil {
		s.cur = st.On
	}
	before, err := s.fresh(ctx)
	if err != nil {
		return err
	}
	if st.On != nil && before != st.On {
		r.Before, r.After = before, before
		s.cur = before
		return fmt.Errorf("%w: the step was planned on screen %s, the device shows %s now", ErrScreenChanged, short(st.On.FP), short(before.FP))
	}
	r.Before = before
	switch {
	case st.Custom != nil:
		err = st.Custom(ctx, s, r)
	case !st.Call.IsZero():
		err = s.Act(ctx, r, nil, st)
	}
	if shotErr := s.p.Shoot(ctx, r.Before); shotErr != nil && err == nil && !Fatal(ctx, shotErr) {
		err = shotErr
	}
	if r.After == nil {
		r.After = r.Before
		if r.Acted && !Fatal(ctx, err) {
			after, serr := s.p.Settle(ctx)
			switch {
			case serr == nil:
				r.After = after
			case err == nil:
				err = fmt.Errorf("observe after the step: %w", serr)
			}
		}
	}
	if err == nil && r.Skipped == "" && st.Expect != nil {
		err = s.expect(ctx, st, r)
	}
	if Fatal(ctx, err) {
		s.cur = nil
		return err
	}
	if shotErr := s.p.Shoot(ctx, r.After); shotErr != nil && err == nil {
		err = shotErr
	}
	s.cur = r.After
	return err
}

// fresh is the screen a step starts from: the screen the last step
// settled on when the device still shows it (one cheap look at the tree
// tells), else a newly settled one. A step never acts on a screen that
// has changed since it was observed.
func (s *Session) fresh(ctx context.Context) (*perceive.Screen, error) {
	if s.cur == nil {
		return s.Current(ctx)
	}
	now, err := s.p.Observe(ctx)
	if err != nil {
		s.cur = nil
		return nil, fmt.Errorf("observe the screen: %w", err)
	}
	if now.FP != s.cur.FP {
		s.cur = nil
	}
	return s.Current(ctx)
}

// Act runs st's call as part of the step r records: it waits from the
// screen on (r.Before when nil) for the call's targets to appear, bounded
// by the step's FindTimeout, then runs the call with its locators
// resolved on the screen where they were found. When on is r.Before, that
// screen becomes r.Before, with a screenshot of the moment. Custom steps
// use it to act (several times, for a scroll until the end).
func (s *Session) Act(ctx context.Context, r *Record, on *perceive.Screen, st Step) error {
	if on == nil {
		on = r.Before
	}
	if r.Call.IsZero() {
		r.Call = st.Call
	}
	seen := on
	refs := findable(st.Call)
	if len(refs) > 0 {
		timeout := s.opts.FindTimeout
		if st.Optional {
			timeout = 0
		}
		if st.FindTimeout > 0 {
			timeout = st.FindTimeout
		}
		var ferr, err error
		seen, ferr, err = s.Find(ctx, on, refs, timeout, st.FindTimeout > 0)
		if on == r.Before {
			r.Before = seen
		}
		if err != nil {
			return err
		}
		// The screenshot of the moment the targets were found, before
		// the action changes the screen.
		if err := s.p.Shoot(ctx, seen); err != nil {
			return err
		}
		if ferr != nil {
			if st.Optional && errors.Is(ferr, action.ErrNotFound) {
				r.Skipped = "optional: " + ferr.Error()
				return nil
			}
			return ferr
		}
	}
	s.p.ActedOn(seen)
	r.Acted = true
	res := &firstOn{scene: seen.Scene, uses: len(refs), observe: s.observeScene}
	env := &action.Env{Driver: s.drv, Resolver: res, Log: s.log}
	err := st.Call.Run(ctx, env)
	if env.Answer != nil {
		r.Result = env.Answer
	}
	if t, ok := st.Call.Target(); ok {
		p := t.Point
		r.Point, r.Element = &p, t.Element
	}
	return err
}

// findable lists the locators a call needs found before it runs: given,
// not deferred to the action, not a point.
func findable(c action.Call) []action.Locator {
	var ls []action.Locator
	for _, ref := range c.Locators() {
		if ref.Deferred || ref.Locator == nil || ref.Locator.Point != nil || ref.Locator.IsZero() {
			continue
		}
		ls = append(ls, *ref.Locator)
	}
	return ls
}

// Find polls until every locator resolves on one screen. Only "not found"
// keeps it waiting, and only while the screen may still change (see
// Options.FindQuiet) unless full asks for the whole timeout (a step that
// set its own); ambiguity fails at once. It returns the last screen seen,
// why the locators were not all found, and an error when the screen could
// not be observed.
func (s *Session) Find(ctx context.Context, first *perceive.Screen, ls []action.Locator, timeout time.Duration, full bool) (*perceive.Screen, error, error) {
	var ferr error
	all := func(sc *perceive.Screen) error {
		for _, l := range ls {
			if _, err := locate.Find(sc.Scene, l); err != nil {
				return err
			}
		}
		return nil
	}
	var stillFP string
	var stillSince time.Time
	seen, _, err := s.p.Poll(ctx, first, timeout, func(sc *perceive.Screen) bool {
		ferr = all(sc)
		if ferr == nil || !errors.Is(ferr, action.ErrNotFound) {
			return true
		}
		if sc.FP != stillFP {
			stillFP, stillSince = sc.FP, time.Now()
			return false
		}
		if full || s.opts.FindQuiet < 0 || time.Since(stillSince) < s.opts.FindQuiet || busy(sc.Scene) {
			return false
		}
		// The screen kept still: read all of it (once), then stop
		// unless it shows something close to what is missing.
		if s.p.ReadAll(ctx, sc) {
			if ferr = all(sc); ferr == nil || !errors.Is(ferr, action.ErrNotFound) {
				return true
			}
		}
		var miss *locate.MissingError
		return !errors.As(ferr, &miss) || !miss.Near()
	})
	if err != nil {
		return seen, nil, err
	}
	if errors.Is(ferr, action.ErrNotFound) && s.p.ReadAll(ctx, seen) {
		ferr = all(seen)
	}
	return seen, ferr, nil
}

// busy reports whether a screen shows a progress indicator: it is still
// working towards another screen, however still it looks.
func busy(s *scene.Scene) bool {
	for _, e := range s.Elements {
		if e.Type == scene.TypeProgress {
			return true
		}
	}
	return false
}

// observeScene observes once, perceived, for resolvers that look again
// (a Scroll until something shows).
func (s *Session) observeScene(ctx context.Context) (*scene.Scene, error) {
	sc, err := s.p.Look(ctx)
	if err != nil {
		return nil, err
	}
	return sc.Scene, nil
}

// firstOn resolves the call's first uses locators on the screen the step
// found them on, and every later one (a deferred locator, resolved by the
// action after it has moved the screen) on a fresh observation.
type firstOn struct {
	scene   *scene.Scene
	uses    int
	observe func(context.Context) (*scene.Scene, error)
}

func (f *firstOn) Resolve(ctx context.Context, l action.Locator) (action.Target, error) {
	sc := f.scene
	if f.uses > 0 && l.Point == nil {
		f.uses--
	} else if l.Point == nil || sc == nil {
		var err error
		if sc, err = f.observe(ctx); err != nil {
			return action.Target{}, fmt.Errorf("observe the screen to find %s: %w", l, err)
		}
	}
	return locate.New(sc).Resolve(ctx, l)
}

// expect re-checks the step's expectation on fresh observations until it
// holds or ExpectTimeout passes. A step without a call is checked from
// the screen it started on, and that screen is its record's Before.
func (s *Session) expect(ctx context.Context, st Step, r *Record) error {
	timeout := s.opts.ExpectTimeout
	if st.ExpectTimeout > 0 {
		timeout = st.ExpectTimeout
	}
	last, res, err := s.Await(ctx, *st.Expect, r.Before, r.After, timeout)
	r.After, r.Verdict = last, &res
	if st.Call.IsZero() && st.Custom == nil {
		r.Before = last
	}
	if err != nil {
		return err
	}
	switch {
	case res.Holds():
		return nil
	case st.Message != "":
		return fmt.Errorf("%s (%s)", st.Message, res.Evidence)
	}
	return fmt.Errorf("expected %s: %s", st.Expect, res.Evidence)
}

// Await re-checks c on fresh observations, starting from the screen from,
// until it holds or timeout passes (0: one look). before is the screen
// the check compares with (layoutChanged). It returns the last screen
// seen and its verdict; the error is about observing.
func (s *Session) Await(ctx context.Context, c check.Check, before, from *perceive.Screen, timeout time.Duration) (*perceive.Screen, check.Result, error) {
	var res check.Result
	last, _, err := s.p.Poll(ctx, from, timeout, func(sc *perceive.Screen) bool {
		res = s.judge(ctx, c, before, sc)
		return res.Holds()
	})
	return last, res, err
}

// judge decides c on sc, from the screen before the step. A text or number
// check of an element whose text the tree does not give (a canvas, an
// image of a label) reads the element's pixels first, unless OCR is off.
func (s *Session) judge(ctx context.Context, c check.Check, before, sc *perceive.Screen) check.Result {
	var pixels check.TextReader
	if s.p.Mode() != perceive.Off {
		pixels = check.TextReaderFunc(func(ctx context.Context, el scene.Element) (string, error) {
			return s.p.RegionText(ctx, sc, el)
		})
	}
	read, err := check.ReadText(ctx, c, sc.Scene, pixels)
	if err != nil {
		return check.Result{Evidence: err.Error()}
	}
	return c.Eval(before.Scene, read)
}
