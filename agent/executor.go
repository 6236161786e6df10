package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/scene"
)

// execution is the acted event's payload: the one action-space call a step
// became, and how its target was found.
type execution struct {
	Step        int             `json:"step_id"`
	Attempt     int             `json:"attempt"`
	Action      string          `json:"action"`
	Params      json.RawMessage `json:"params,omitempty"`
	Key         string          `json:"idempotency_key"`
	Via         string          `json:"via"` // rule, cache, model, none
	Element     *scene.Element  `json:"element,omitempty"`
	Fingerprint string          `json:"fingerprint"`
	Ms          int64           `json:"ms"`
	Error       string          `json:"error,omitempty"`
	// Choice is the model's pick among the candidates of an ambiguous
	// target, and what it chose from.
	Choice *choice `json:"choice,omitempty"`
	err    error
	// check is the state the step must leave (its expected state, or the
	// field reading what was typed); rec is the engine's record of the
	// step, with the check's verdict.
	check *check.Check
	rec   *engine.Record
}

// executor turns a step into one call of the action space and runs it
// through the task's step engine. It never decides whether a step should
// be done: the orchestrator does.
type executor struct {
	space *action.Space
	obs   *observer
	model *roleModel // nil: rules only
	cache *Cache
	bus   *bus
}

// stepText renders a step for keys, caches, summaries and prompts: its
// call, Tap(locate: "Sign in"), or the check a step without one makes.
func stepText(st Step) string {
	switch {
	case !st.Call.IsZero():
		return st.Call.String()
	case st.Wait:
		return "wait for " + st.Expected.String()
	}
	return "check " + st.Expected.String()
}

// idempotencyKey names the effect a step intends within a task: retries of
// the step carry the same key, so a late effect is never applied twice.
func idempotencyKey(taskID string, st Step) string {
	h := sha256.Sum256([]byte(taskID + "\x00" + strconv.Itoa(st.ID) + "\x00" + stepText(st)))
	return hex.EncodeToString(h[:8])
}

// resolveOpts are how recovery changes the executor's strategy.
type resolveOpts struct {
	noCache  bool
	progress string // the compressed context, for the model
}

// execute runs the step once on screen sc.
func (x *executor) execute(ctx context.Context, taskID string, st Step, attempt int, sc *scene.Scene, ro resolveOpts, timeout time.Duration) execution {
	ex := execution{Step: st.ID, Attempt: attempt, Action: st.Call.Name(), Key: idempotencyKey(taskID, st), Via: "none", Fingerprint: sc.Fingerprint()}
	start := time.Now()
	err := x.run(ctx, &ex, st, sc, ro, timeout)
	ex.Ms = time.Since(start).Milliseconds()
	if err != nil {
		ex.Error, ex.err = err.Error(), err
	}
	return ex
}

func (x *executor) run(ctx context.Context, ex *execution, st Step, sc *scene.Scene, ro resolveOpts, timeout time.Duration) error {
	call, sc, err := x.resolve(ctx, ex, st, sc, ro)
	if err != nil {
		return err
	}
	ex.Action, ex.Params = call.Name(), call.ParamsJSON()
	ex.check = st.Expected
	if ex.check == nil {
		ex.check = fieldCheck(ex.Element, typed(call))
	}
	ex.rec = x.obs.run(ctx, stepText(st), call, ex.check, timeout, sc)
	if ex.rec.Verdict != nil && !engine.Fatal(ctx, ex.rec.Err) {
		return nil // it acted; weighing the verdict is the validator's part
	}
	return ex.rec.Err
}

// resolve fills the locator params of a copy of the step's call (the step
// keeps them as planned, for retries): the whole call from the replay cache
// when the screen matches, each locator by rule when it resolves in the
// Scene (or, when the tree names no such thing, in the Scene with the whole
// screenshot read), the call by the model otherwise. It returns the call
// and the Scene its locators refer to.
func (x *executor) resolve(ctx context.Context, ex *execution, st Step, sc *scene.Scene, ro resolveOpts) (action.Call, *scene.Scene, error) {
	call := st.Call.Clone()
	if !needsScreen(call) {
		ex.Via = "rule"
		return call, sc, nil
	}
	if !ro.noCache {
		if ce, ok := x.cache.get(stepText(st), ex.Fingerprint); ok {
			if el, ok := sc.Element(elemID(ce.Element)); ok && sameElement(el, ce.Element) {
				if cached, err := x.space.DecodeCall(ce.Action, ce.Params); err == nil {
					ex.Element, ex.Via = &el, "cache"
					return cached, sc, nil
				}
			}
			x.bus.publish(ctx, event.RoleExecutor, event.RoleOrchestrator, "cache_mismatch",
				map[string]any{"step_id": st.ID, "step": stepText(st), "cached": ce.Element}, event.StatusInfo, 0)
			x.cache.drop(stepText(st), ex.Fingerprint)
		}
	}
	if l, ok := stepLocator(st); ok && setsState(st) && l.ID == "" && l.Point == nil {
		// On and off name a switch: only the control labelled so will do.
		sw, err := switchTarget(sc, l)
		if err == nil {
			ref := call.Locators()[0]
			if err := call.SetLocator(ref.Name, action.Locator{ID: sw.ID}); err != nil {
				return call, sc, err
			}
			ex.Element, ex.Via = &sw, "rule"
			return call, sc, nil
		}
		if x.model == nil || errors.Is(err, errMentionedOnly) {
			// A row that mentions the switch is not it: the planner goes
			// there, not the executor.
			return call, sc, err
		}
		mc, err := x.byModel(ctx, ex, st, sc, err, ro.progress)
		return mc, sc, err
	}
	found, rerr := ruleTargets(call, sc)
	if errors.Is(rerr, action.ErrNotFound) && x.model == nil {
		// A label drawn inside an image or a custom view: the trust
		// checks had no reason to read the pixels, this miss does. (With
		// a model, the model is asked instead: reading the whole screen
		// first would slow every step it resolves.)
		if read, ok := x.obs.readAll(ctx, sc); ok {
			if f, err := ruleTargets(call, read); err == nil {
				sc, found, rerr = read, f, nil
			}
		}
	}
	if rerr == nil {
		for i, f := range found {
			if err := call.SetLocator(f.field, action.Locator{ID: f.el.ID}); err != nil {
				return call, sc, err
			}
			if i == 0 {
				ex.Element = &f.el
			}
		}
		ex.Via = "rule"
		return call, sc, nil
	}
	if x.model == nil {
		return call, sc, rerr
	}
	mc, err := x.byModel(ctx, ex, st, sc, rerr, ro.progress)
	return mc, sc, err
}

// needsScreen reports whether the executor has locators of call to find
// before it runs: any but deferred ones (the action finds those) and
// points (they are where to act already), and a focused field left out.
func needsScreen(call action.Call) bool {
	for _, r := range call.Locators() {
		if wanted(r) {
			return true
		}
	}
	return false
}

func wanted(r action.LocatorRef) bool {
	if r.Deferred {
		return false
	}
	if r.Locator == nil {
		return r.Focused
	}
	return r.Locator.Point == nil
}

// found is an element a locator param names.
type found struct {
	field string
	el    scene.Element
}

// ruleTargets finds the elements of call's locator params without a
// model. A focused field left out is the focused text field, or the only
// one.
func ruleTargets(call action.Call, sc *scene.Scene) ([]found, error) {
	refs := call.Locators()
	var out []found
	for _, r := range refs {
		if !wanted(r) {
			continue
		}
		var el scene.Element
		var err error
		if r.Locator == nil {
			el, err = focusedField(sc)
		} else {
			el, err = ruleTarget(sc, *r.Locator)
		}
		if err != nil {
			if len(refs) > 1 {
				err = fmt.Errorf("%s: %w", r.Name, err)
			}
			return nil, err
		}
		out = append(out, found{r.Name, el})
	}
	return out, nil
}

// focusedField is the text field typing goes to: the focused one, or the
// only one.
func focusedField(sc *scene.Scene) (scene.Element, error) {
	var inputs []scene.Element
	for _, e := range sc.Elements {
		if e.Flags.Editable && e.Flags.Focused {
			return e, nil
		}
		if e.Flags.Editable {
			inputs = append(inputs, e)
		}
	}
	if len(inputs) == 1 {
		return inputs[0], nil
	}
	return scene.Element{}, fmt.Errorf("no field is focused and %d fields are on screen: say which one to type into: %w", len(inputs), action.ErrNotFound)
}

// ruleTarget finds one locator in sc; of several matches it takes the one
// that reads exactly as the locator says, or the only control. It never
// picks by position: otherwise the error is an *locate.AmbiguousError
// listing the candidates, cleaned of duplicates and OCR noise.
func ruleTarget(sc *scene.Scene, l action.Locator) (scene.Element, error) {
	e, err := locate.Find(sc, l)
	var amb *locate.AmbiguousError
	if !errors.As(err, &amb) {
		return e, err
	}
	cands := candidates(amb.Candidates)
	if len(cands) == 1 {
		return cands[0], nil
	}
	words := locatorWords(l)
	var exact, controls []scene.Element
	for _, c := range cands {
		if exactly(c, words) {
			exact = append(exact, c)
		}
		if c.Control() {
			controls = append(controls, c)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0], nil
	case len(controls) == 1:
		return controls[0], nil
	}
	clean := *amb
	clean.Candidates = cands
	return scene.Element{}, &clean
}

// locatorWords is what a locator says to find, in words: its prompt, text,
// description or id.
func locatorWords(l action.Locator) string {
	for _, w := range []string{l.Prompt, l.Text, l.Desc, l.ID} {
		if w != "" {
			return w
		}
	}
	return ""
}

// stepLocator is the first locator the step's call gives (as planned,
// unresolved): what recovery looks for, scrolls to or must not dismiss.
func stepLocator(st Step) (action.Locator, bool) {
	for _, r := range st.Call.Locators() {
		if r.Locator != nil && !r.Locator.IsZero() {
			return *r.Locator, true
		}
	}
	return action.Locator{}, false
}

// stepTarget is stepLocator in words; "" when the call names no element.
func stepTarget(st Step) string {
	l, _ := stepLocator(st)
	return locatorWords(l)
}

func elemID(e *scene.Element) string {
	if e == nil {
		return ""
	}
	return e.ID
}

func sameElement(a scene.Element, b *scene.Element) bool {
	return b != nil && a.Type == b.Type && a.Text == b.Text && a.Desc == b.Desc && a.ResourceID == b.ResourceID
}

// byModel asks the executor model for the one call; it sees the step, the
// screen list and the tool of the step's action, and may answer with
// another action of the space.
func (x *executor) byModel(ctx context.Context, ex *execution, st Step, sc *scene.Scene, why error, progress string) (action.Call, error) {
	var amb *locate.AmbiguousError
	cands := ""
	if errors.As(why, &amb) {
		cands = candidateList(sc, amb)
	}
	resp, err := x.model.complete(ctx, executorRequest(st, why.Error(), cands, sc, progress))
	if err != nil {
		return action.Call{}, fmt.Errorf("rules could not find the target (%v) and the model failed: %w", why, err)
	}
	name, args := "", json.RawMessage(nil)
	if len(resp.ToolCalls) > 0 {
		name, args = resp.ToolCalls[0].Name, resp.ToolCalls[0].Args
	} else {
		raw, err := jsonObject(resp.Text)
		if err != nil {
			return action.Call{}, fmt.Errorf("executor model: %w", err)
		}
		var ans struct {
			Action string          `json:"action"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(raw, &ans); err != nil {
			return action.Call{}, fmt.Errorf("executor model: %w", err)
		}
		name, args = ans.Action, ans.Params
	}
	call, err := x.space.DecodeCall(name, args)
	if err != nil {
		return action.Call{}, fmt.Errorf("executor model: %w", err)
	}
	ex.Via = "model"
	// Remember the element the model picked, for the cache and the record;
	// of an ambiguous target it must be one of the candidates.
	for _, r := range call.Locators() {
		if r.Locator == nil || r.Locator.IsZero() {
			continue
		}
		e, err := locate.Find(sc, *r.Locator)
		if err == nil {
			ex.Element = &e
		}
		if amb != nil {
			if err != nil || !slices.ContainsFunc(amb.Candidates, func(c scene.Element) bool { return c.ID == e.ID }) {
				return action.Call{}, fmt.Errorf("the executor model chose %s, not one of the candidates: %w", r.Locator, why)
			}
			ex.Choice = &choice{Chosen: brief(e)}
			for _, c := range amb.Candidates {
				ex.Choice.Candidates = append(ex.Choice.Candidates, brief(c))
			}
		}
		break
	}
	return call, nil
}
