package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/device"
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
	err         error
}

// executor turns a step into one call of the action space. It never
// decides whether a step should be done: the orchestrator does.
type executor struct {
	space *action.Space
	drv   device.Driver
	obs   *observer
	model *roleModel // nil: rules only
	cache *Cache
	bus   *bus
}

// stepText renders a step for keys, caches and prompts: tap "Sign in".
func stepText(st Step) string {
	s := st.Action
	if st.Target != "" {
		s += fmt.Sprintf(" %q", st.Target)
	}
	if st.Value != "" {
		s += fmt.Sprintf(" value=%q", st.Value)
	}
	return s
}

// idempotencyKey names the effect a step intends within a task: retries of
// the step carry the same key, so a late effect is never applied twice.
func idempotencyKey(taskID string, st Step) string {
	h := sha256.Sum256([]byte(taskID + "\x00" + strconv.Itoa(st.ID) + "\x00" + stepText(st)))
	return hex.EncodeToString(h[:8])
}

// call maps a step to an action name, its params and the name of the
// locator param its target fills ("" for none).
func call(st Step) (string, map[string]any, string, error) {
	switch st.Action {
	case ActTap:
		return "Tap", map[string]any{}, "locate", nil
	case ActDoubleTap:
		return "DoubleTap", map[string]any{}, "locate", nil
	case ActLongPress:
		return "LongPress", map[string]any{}, "locate", nil
	case ActInput:
		return "Input", map[string]any{"value": st.Value}, "locate", nil
	case ActPress:
		k := st.Value
		if k == "" {
			k = "enter"
		}
		return "KeyboardPress", map[string]any{"keyName": k}, "", nil
	case ActScroll:
		d := st.Value
		if d == "" {
			d = "down"
		}
		p := map[string]any{"direction": d}
		if st.Target != "" {
			p["untilVisible"] = action.Locator{Prompt: st.Target}
		}
		return "Scroll", p, "", nil
	case ActBack:
		return "Back", map[string]any{}, "", nil
	case ActHome:
		return "Home", map[string]any{}, "", nil
	case ActLaunch:
		if !strings.Contains(st.Target, ".") {
			return "", nil, "", fmt.Errorf("launch needs a package name such as com.apex.shop, not %q: go home and tap the app's icon instead", st.Target)
		}
		return "Launch", map[string]any{"app": st.Target}, "", nil
	case ActWait:
		ms, err := strconv.Atoi(st.Value)
		if err != nil || ms < 0 {
			return "", nil, "", fmt.Errorf("wait: %q is not a number of milliseconds", st.Value)
		}
		return "Sleep", map[string]any{"ms": ms}, "", nil
	}
	return "", nil, "", fmt.Errorf("step action %q has no action-space call", st.Action)
}

// resolveOpts are how recovery changes the executor's strategy.
type resolveOpts struct {
	anyMatch bool // another locator: take the best of several matches
	noCache  bool
	progress string // the compressed context, for the model
}

// execute runs the step once on screen sc.
func (x *executor) execute(ctx context.Context, taskID string, st Step, attempt int, sc *scene.Scene, ro resolveOpts) execution {
	ex := execution{Step: st.ID, Attempt: attempt, Key: idempotencyKey(taskID, st), Via: "none", Fingerprint: sc.Fingerprint()}
	start := time.Now()
	err := x.run(ctx, &ex, st, sc, ro)
	ex.Ms = time.Since(start).Milliseconds()
	if err != nil {
		ex.Error, ex.err = err.Error(), err
	}
	return ex
}

func (x *executor) run(ctx context.Context, ex *execution, st Step, sc *scene.Scene, ro resolveOpts) error {
	name, params, field, err := call(st)
	if err != nil {
		return err
	}
	ex.Action = name
	if field != "" && (st.Target != "" || st.Action == ActInput) {
		var err error
		if sc, err = x.resolve(ctx, ex, st, sc, ro, name, params, field); err != nil {
			return err
		}
	} else {
		ex.Via = "rule"
	}
	if ex.Params == nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return err
		}
		ex.Params = raw
	}
	return x.act(ctx, ex.Action, ex.Params, sc)
}

// act runs one action of the space; locators resolve on sc first, then on
// fresh observations (an action that scrolls sees the new screen).
func (x *executor) act(ctx context.Context, name string, raw json.RawMessage, sc *scene.Scene) error {
	a, err := x.space.Find(name)
	if err != nil {
		return err
	}
	env := &action.Env{Driver: x.drv, Resolver: &locate.Live{Scene: sc, Observe: x.obs.observe}}
	x.obs.acted()
	return a.Run(ctx, env, raw)
}

// resolve fills the locator param: from the replay cache when the screen
// matches, by rule when the target resolves in the Scene (or, when the tree
// names no such thing, in the Scene with the whole screenshot read), by the
// model otherwise. It returns the Scene the param refers to.
func (x *executor) resolve(ctx context.Context, ex *execution, st Step, sc *scene.Scene, ro resolveOpts, name string, params map[string]any, field string) (*scene.Scene, error) {
	if !ro.noCache {
		if ce, ok := x.cache.get(stepText(st), ex.Fingerprint); ok {
			if el, ok := sc.Element(elemID(ce.Element)); ok && sameElement(el, ce.Element) {
				ex.Action, ex.Params, ex.Element, ex.Via = ce.Action, ce.Params, &el, "cache"
				return sc, nil
			}
			x.bus.publish(ctx, RoleExecutor, RoleOrchestrator, "cache_mismatch",
				map[string]any{"step_id": st.ID, "step": stepText(st), "cached": ce.Element}, StatusInfo, 0)
			x.cache.drop(stepText(st), ex.Fingerprint)
		}
	}
	el, rerr := ruleTarget(sc, st, ro.anyMatch)
	if errors.Is(rerr, action.ErrNotFound) && x.model == nil {
		// A label drawn inside an image or a custom view: the trust
		// checks had no reason to read the pixels, this miss does. (With
		// a model, the model is asked instead: reading the whole screen
		// first would slow every step it resolves.)
		if read, ok := x.obs.readAll(ctx, sc); ok {
			if el2, err := ruleTarget(read, st, ro.anyMatch); err == nil {
				sc, el, rerr = read, el2, nil
			}
		}
	}
	if rerr == nil {
		params[field] = action.Locator{ID: el.ID}
		ex.Element, ex.Via = &el, "rule"
		return sc, nil
	}
	if x.model == nil {
		return sc, rerr
	}
	return sc, x.byModel(ctx, ex, st, sc, name, rerr, ro.progress)
}

// ruleTarget finds a step's target without a model. Input with no target
// goes to the focused field, or the only one.
func ruleTarget(sc *scene.Scene, st Step, anyMatch bool) (scene.Element, error) {
	if st.Target == "" {
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
	l := check.ParseTarget(st.Target)
	if st.Action == ActInput {
		l.Type = ""
	}
	e, err := locate.Find(sc, l)
	var amb *locate.AmbiguousError
	if errors.As(err, &amb) {
		var exact, controls []scene.Element
		for _, c := range amb.Candidates {
			if exactly(c, st.Target) {
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
		case anyMatch && len(exact) > 0:
			return exact[0], nil
		case anyMatch && len(controls) > 0:
			return controls[0], nil
		}
	}
	return e, err
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
// screen list and the one tool the step needs.
func (x *executor) byModel(ctx context.Context, ex *execution, st Step, sc *scene.Scene, name string, why error, progress string) error {
	a, err := x.space.Find(name)
	if err != nil {
		return err
	}
	resp, err := x.model.complete(ctx, executorRequest(st, why.Error(), sc, a, progress))
	if err != nil {
		return fmt.Errorf("rules could not find the target (%v) and the model failed: %w", why, err)
	}
	callName, args := "", json.RawMessage(nil)
	if len(resp.ToolCalls) > 0 {
		callName, args = resp.ToolCalls[0].Name, resp.ToolCalls[0].Args
	} else {
		raw, err := jsonObject(resp.Text)
		if err != nil {
			return fmt.Errorf("executor model: %w", err)
		}
		var ans struct {
			Action string          `json:"action"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(raw, &ans); err != nil {
			return fmt.Errorf("executor model: %w", err)
		}
		callName, args = ans.Action, ans.Params
	}
	ma, err := x.space.Find(callName)
	if err != nil {
		return fmt.Errorf("executor model: %w", err)
	}
	params, err := ma.Decode(args)
	if err != nil {
		return fmt.Errorf("executor model: %w", err)
	}
	ex.Action, ex.Params, ex.Via = ma.Name(), args, "model"
	// Remember the element the model picked, for the cache and the record.
	for _, f := range ma.LocatorFields() {
		if l := locatorParam(params, f); l != nil && !l.IsZero() {
			if e, err := locate.Find(sc, *l); err == nil {
				ex.Element = &e
			}
			break
		}
	}
	return nil
}

// locatorParam reads a locator field of decoded params by its JSON name.
func locatorParam(params any, field string) *action.Locator {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m[field] == nil {
		return nil
	}
	var l action.Locator
	if json.Unmarshal(m[field], &l) != nil {
		return nil
	}
	return &l
}
