package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/script"
)

// A script is a tree: tasks hold steps, and runFlow, if and repeat hold
// steps of their own. The runner walks it; every step it reaches (a leaf,
// or the check of a condition) is one engine step, recorded under a name
// that shows where in the tree it ran:
//
//	runFlow login › input: "demo" into {"id":"username"}
//	if: "Summer Sale: 20% off" shows            (its result: the branch taken)
//	then › tap: {"desc":"Close"}
//	repeat 2/3 › tap: +

// sep joins the levels of a step's name in the call tree.
const sep = " › "

// scope holds the values a step's text may refer to: its own (stored by
// steps, a flow's parameters) and those around it.
type scope struct {
	vals   map[string]string
	parent *scope
}

func newScope(parent *scope) *scope { return &scope{vals: map[string]string{}, parent: parent} }

func (s *scope) lookup(name string) (string, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.vals[name]; ok {
			return v, true
		}
	}
	return "", false
}

// frame is where in the call tree a step runs.
type frame struct {
	task string
	path string // the names of the levels above, each followed by sep
	sc   *scope
}

func (f frame) in(level string) frame {
	f.path += level + sep
	return f
}

// failure is a step that failed, with where it is in the call tree.
type failure struct {
	name string
	pos  script.Pos
	err  error
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// where names the failed step of err for a reason: its place in the tree
// and in its file; st is the step of the task it happened under.
func where(err error, st script.Step) string {
	var f *failure
	if errors.As(err, &f) {
		return fmt.Sprintf("%s) at %s", f.name, posString(f.pos))
	}
	return fmt.Sprintf("%s) at %s", StepName(st), posString(st.Pos))
}

// block runs steps in order; after a failure it records the rest as
// skipped and returns it.
func (r *run) block(ctx context.Context, f frame, steps []script.Step) error {
	for i, st := range steps {
		err := r.node(ctx, f, st)
		if err == nil {
			continue
		}
		why := "an earlier step of the task failed"
		if fatal(ctx, err) {
			why = "the run stopped before this step"
		}
		for _, rest := range steps[i+1:] {
			r.skip(ctx, f, rest, why)
		}
		return err
	}
	return nil
}

// node runs one step of the tree, with the values it refers to put in.
func (r *run) node(ctx context.Context, f frame, st script.Step) error {
	st, err := st.Expand(f.sc.lookup)
	if err != nil {
		return r.leaf(ctx, f, st, err)
	}
	switch st.Kind {
	case script.If:
		holds, err := r.cond(ctx, f, st, st.Cond, StepName(st), false)
		if err != nil {
			return err
		}
		if holds {
			return r.block(ctx, f.in("then"), st.Body)
		}
		return r.block(ctx, f.in("else"), st.Else)
	case script.Repeat:
		return r.repeat(ctx, f, st)
	case script.RunFlow:
		return r.runFlow(ctx, f, st)
	}
	return r.leaf(ctx, f, st, nil)
}

// leaf runs a step on the engine and keeps the value it stores; a step
// whose text could not be completed (broken) still leaves its record.
func (r *run) leaf(ctx context.Context, f frame, st script.Step, broken error) error {
	es, err := r.compile(st)
	if broken == nil {
		broken = r.overBudget()
	}
	if broken != nil {
		err = broken
	}
	if err != nil {
		// A step that cannot run here still leaves a record of the screen
		// it would have started from.
		es = engine.Step{Custom: func(context.Context, *engine.Session, *engine.Record) error { return err }}
	}
	es.Task, es.Name = f.task, f.path+StepName(st)
	rec := r.sess.Run(ctx, es)
	if rec.Err != nil {
		return &failure{name: es.Name, pos: st.Pos, err: rec.Err}
	}
	if name := storesAs(st); name != "" && rec.Status == engine.Passed {
		if m, ok := rec.Result.(map[string]any); ok {
			f.sc.vals[name] = valueText(m["value"])
		}
	}
	return nil
}

// ErrStepBudget fails the step that would pass Options.MaxSteps.
var ErrStepBudget = errors.New("the run reached its step budget")

// overBudget is the error of a step that would pass Options.MaxSteps: the
// run records it as failed, and the repeats around it end.
func (r *run) overBudget() error {
	if r.opts.MaxSteps > 0 && r.n >= r.opts.MaxSteps {
		return fmt.Errorf("%w of %d steps (a repeat inside a repeat?): repeat fewer times, or run the script with apex run", ErrStepBudget, r.opts.MaxSteps)
	}
	return nil
}

// storesAs is the value a step stores its result under, "" when none.
func storesAs(st script.Step) string {
	switch st.Kind {
	case script.Read:
		return st.As
	case script.AIQuery, script.AIBoolean, script.AINumber, script.AIString, script.AIAsk:
		return st.Name
	}
	return ""
}

// valueText is a stored result as text: a string as it is, a number as
// written, anything else as JSON.
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// cond checks a condition as a step of its own (recorded with the verdict
// and the branch). must makes a condition that does not hold a failure
// (the last check of a repeat until).
func (r *run) cond(ctx context.Context, f frame, st script.Step, c *script.Cond, name string, must bool) (bool, error) {
	var holds bool
	over := r.overBudget()
	es := engine.Step{Task: f.task, Name: f.path + name, Custom: func(ctx context.Context, s *engine.Session, rec *engine.Record) error {
		if over != nil {
			return over
		}
		var evidence string
		if c.Platform != "" {
			p := r.space.Platform()
			holds, evidence = p == c.Platform, "the device is "+p
		} else {
			chk, err := condCheck(c)
			if err != nil {
				return fmt.Errorf("%s: %w", posString(st.Pos), err)
			}
			last, res, err := s.Await(ctx, *chk, rec.Before, rec.Before, c.Timeout)
			rec.Expect, rec.Verdict, rec.After = chk, &res, last
			if err != nil {
				return err
			}
			holds, evidence = res.Holds(), res.Evidence
		}
		branch := map[bool]string{true: "then", false: "else"}[holds]
		rec.Result = map[string]any{"holds": holds, "branch": branch, "evidence": evidence}
		// The record's name says what was decided: the branch taken, or
		// whether the loop goes on.
		if st.Kind == script.If {
			rec.Name += " → " + branch
		} else {
			rec.Name += map[bool]string{true: " → done", false: " → again"}[holds]
		}
		if must && !holds {
			return fmt.Errorf("%s is still not true: %s", condString(c), evidence)
		}
		return nil
	}}
	rec := r.sess.Run(ctx, es)
	if rec.Err != nil {
		return false, &failure{name: es.Name, pos: st.Pos, err: rec.Err}
	}
	return holds, nil
}

// repeat runs its body times times, or until its condition holds (checked
// before each time and after the last), at most max times.
func (r *run) repeat(ctx context.Context, f frame, st script.Step) error {
	if st.Cond == nil {
		for i := 1; i <= st.Times; i++ {
			if err := r.block(ctx, f.in(fmt.Sprintf("repeat %d/%d", i, st.Times)), st.Body); err != nil {
				return err
			}
		}
		return nil
	}
	for i := 1; ; i++ {
		last := i > st.Max
		name := fmt.Sprintf("repeat until: %s (check %d)", condString(st.Cond), i)
		if last {
			name = fmt.Sprintf("repeat until: %s (check %d, after max %d)", condString(st.Cond), i, st.Max)
		}
		holds, err := r.cond(ctx, f, st, st.Cond, name, last)
		if err != nil || holds {
			return err
		}
		if err := r.block(ctx, f.in(fmt.Sprintf("repeat %d", i)), st.Body); err != nil {
			return err
		}
	}
}

// runFlow runs a flow's tasks in order. A flow file sees its parameters
// only (as the loader checked), an inline flow its caller's values too;
// the values the flow stores are its caller's afterwards.
func (r *run) runFlow(ctx context.Context, f frame, st script.Step) error {
	fl := st.Flow
	var parent *scope
	if fl.File == "" {
		parent = f.sc
	}
	sc := newScope(parent)
	for _, p := range fl.Params {
		if !p.Required && p.Value != "" {
			sc.vals[p.Name] = p.Value
		}
	}
	for _, w := range st.With {
		sc.vals[w.Name] = w.Value
	}
	child := frame{task: f.task, path: f.path + "runFlow " + fl.Name + sep, sc: sc}
	var err error
	for ti, t := range fl.Tasks {
		tf := child
		if t.Name != "" {
			tf = tf.in(t.Name)
		}
		e := r.block(ctx, tf, t.Steps)
		if e == nil || (t.ContinueOnError && !fatal(ctx, e)) {
			continue
		}
		err = e
		for _, rest := range fl.Tasks[ti+1:] {
			rf := child.in(rest.Name)
			for _, s := range rest.Steps {
				r.skip(ctx, rf, s, "an earlier step of the flow failed")
			}
		}
		break
	}
	for _, name := range fl.Stores {
		if v, ok := sc.vals[name]; ok {
			f.sc.vals[name] = v
		}
	}
	return err
}

// condCheck is a condition's check in the engine's check language.
func condCheck(c *script.Cond) (*check.Check, error) {
	var loc action.Locator
	if len(c.Target) > 0 {
		if err := json.Unmarshal(c.Target, &loc); err != nil {
			return nil, fmt.Errorf("condition target %s: %w", c.Target, err)
		}
	}
	return assertCheck(c.Assert, loc)
}

// condString renders a condition in a few words.
func condString(c *script.Cond) string {
	if c.Platform != "" {
		return "platform is " + c.Platform
	}
	chk, err := condCheck(c)
	if err != nil {
		return c.Assert.Op + " " + targetString(c.Target)
	}
	return chk.String()
}

// countSteps is how many steps a run of steps records, for progress:
// a repeat's body as often as it is sure to run, an if's then branch.
func countSteps(steps []script.Step) int {
	n := 0
	for _, st := range steps {
		switch st.Kind {
		case script.If:
			n += 1 + countSteps(st.Body)
		case script.Repeat:
			if st.Cond != nil {
				n += 1 + countSteps(st.Body)
			} else {
				n += st.Times * countSteps(st.Body)
			}
		case script.RunFlow:
			for _, t := range st.Flow.Tasks {
				n += countSteps(t.Steps)
			}
		default:
			n++
		}
	}
	return n
}
