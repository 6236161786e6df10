package script

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Control steps hold steps of their own:
//
//	- runFlow: flows/login.yaml          # a flow file, relative to this one
//	- runFlow: {file: flows/login.yaml, with: {user: demo}}
//	- runFlow: {name: dismiss, flow: [ … ]}
//	- if: {visible: Summer Sale}          # or notVisible, platform, any assert check
//	  flow: [ … ]
//	  else: [ … ]
//	- repeat: {times: 3}                  # or {until: <condition>, max: 10}
//	  flow: [ … ]
//	- read: {locate: {id: cart_total}, as: total}

// maxRepeat bounds times: and max: of a repeat.
const maxRepeat = 1000

// maxFlowFile bounds a flow file's size.
const maxFlowFile = 4 << 20

// readRegular reads a regular file of at most limit bytes (never a device
// or a pipe that would not end).
func readRegular(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", path)
	case fi.Size() > limit:
		return nil, fmt.Errorf("%s is %d bytes, more than %d", path, fi.Size(), limit)
	}
	return os.ReadFile(path)
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// stepList reads the steps of a control step's flow: or else:.
func (l *loader) stepList(n *yaml.Node, what string) []Step {
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, "%s: expected a list of steps (lines starting with -), got %s", what, describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		l.errorf(n, "%s: the list is empty; add the steps to run", what)
	}
	return l.steps(n)
}

// body reads the sibling flow: of if and repeat.
func (c *stepCtx) body() {
	n := c.opt("flow")
	if n == nil {
		c.l.errorf(c.node, "%s: add flow: with the steps to run, on the line below %s:", c.st.Key, c.st.Key)
		return
	}
	c.st.Body = c.l.stepList(n, c.st.Key+".flow")
}

func (c *stepCtx) readIf() {
	c.st.Cond = c.l.cond(c.main, "if")
	c.body()
	if n := c.opt("else"); n != nil {
		c.st.Else = c.l.stepList(n, "if.else")
	}
}

func (c *stepCtx) readRepeat() {
	l, st := c.l, c.st
	var until, maxN *yaml.Node
	for _, p := range l.pairs(c.main, "repeat") {
		switch p.key.Value {
		case "times":
			st.Times = l.integer(p.val, "repeat.times")
			if st.Times < 1 || st.Times > maxRepeat {
				l.errorf(p.val, "repeat.times: expected 1 to %d, got %d", maxRepeat, st.Times)
			}
		case "until":
			until = p.val
		case "max":
			maxN = p.val
			st.Max = l.integer(p.val, "repeat.max")
			if st.Max < 1 || st.Max > maxRepeat {
				l.errorf(p.val, "repeat.max: expected 1 to %d, got %d", maxRepeat, st.Max)
			}
		default:
			l.errorf(p.key, "unknown key %q in repeat: write repeat: {times: N}, or repeat: {until: <condition>, max: N}", p.key.Value)
		}
	}
	switch {
	case c.main.Kind != yaml.MappingNode:
	case until == nil && st.Times == 0:
		l.errorf(c.main, "repeat: say how often: {times: N}, or {until: <condition>, max: N}")
	case until != nil && st.Times > 0:
		l.errorf(c.main, "repeat: times: and until: do not go together; write {times: N} or {until: <condition>, max: N}")
	case until != nil && maxN == nil:
		l.errorf(until, "repeat: until needs max: N, the most times to run the flow (repeat: {until: …, max: 10}), so a condition that never holds cannot loop forever")
	case until == nil && maxN != nil:
		l.errorf(maxN, "repeat.max bounds an until: loop; with times: drop max:")
	}
	if until != nil {
		st.Cond = l.cond(until, "repeat.until")
	}
	c.body()
}

// condKeys says what a condition may be, for error messages.
const condKeys = "visible: <target>, notVisible: <target>, platform: android|ios, or a check as assert writes it (" + assertOps + ", with element: where it needs one), and timeout:"

// cond reads a condition of if or repeat: in the check language of
// assert, plus visible/notVisible (exists/notExists) and platform.
func (l *loader) cond(n *yaml.Node, what string) *Cond {
	c := &Cond{}
	ps := l.pairs(n, what)
	if ps == nil {
		if n.Kind != yaml.MappingNode {
			return c
		}
		l.errorf(n, "%s: the condition is empty: write %s", what, condKeys)
		return c
	}
	var rest []pair
	for _, p := range ps {
		switch k := p.key.Value; k {
		case "platform":
			c.Platform = strings.ToLower(l.str(p.val, what+".platform"))
			if c.Platform != "android" && c.Platform != "ios" {
				l.errorf(p.val, "%s.platform: expected android or ios, got %q", what, c.Platform)
			}
		case "timeout":
			c.Timeout = l.millis(p.val, what+".timeout")
		case "visible", "notVisible":
			rest = append(rest, pair{&yaml.Node{Kind: yaml.ScalarNode, Value: map[string]string{"visible": "exists", "notVisible": "notExists"}[k], Line: p.key.Line, Column: p.key.Column}, p.val})
		default:
			rest = append(rest, p)
		}
	}
	if len(rest) > 0 {
		if c.Platform != "" {
			l.errorf(n, "%s: one condition per step: platform: and %s: do not go together; nest one if in the other", what, rest[0].key.Value)
		}
		c.Assert, c.Target = l.checkOf(n, what, rest, func(k *yaml.Node) {
			l.errorf(k, "unknown condition %q in %s: write %s", k.Value, what, condKeys)
		})
	} else if c.Platform == "" {
		l.errorf(n, "%s: no condition: write %s", what, condKeys)
	}
	return c
}

func (c *stepCtx) readRead() {
	l, st := c.l, c.st
	if c.main.Kind == yaml.MappingNode {
		c.inlineOptions(c.main)
		loc := c.opt("locate")
		if loc == nil {
			l.errorf(c.main, "read: add locate: <target>, the element whose text to store")
			return
		}
		st.Target = l.element(loc, "read.locate")
	} else {
		st.Target = l.element(c.main, "read")
	}
	if n := c.opt("timeout"); n != nil {
		st.Timeout = l.millis(n, "read.timeout")
	}
	n := c.opt("as")
	if n == nil {
		l.errorf(c.node, "read: add as: <name>, the value that keeps the text (use it later as ${name})")
		return
	}
	st.As = l.valueName(n, "read.as")
}

// valueName reads the name a step stores its result under.
func (l *loader) valueName(n *yaml.Node, what string) string {
	name := l.str(n, what)
	if !validEnvName(name) {
		l.errorf(n, "%s: %q cannot be used as ${%s}: use letters, digits and _ (not first)", what, name, name)
	}
	return name
}

func (c *stepCtx) readRunFlow() {
	l, st := c.l, c.st
	var file, inline, with, name *yaml.Node
	switch {
	case c.main.Kind == yaml.ScalarNode && !isNull(c.main):
		file = c.main
	case c.main.Kind == yaml.MappingNode:
		for _, p := range l.pairs(c.main, "runFlow") {
			switch p.key.Value {
			case "file":
				file = p.val
			case "flow", "commands":
				inline = p.val
			case "with", "env":
				with = p.val
			case "name":
				name = p.val
			default:
				l.errorf(p.key, "unknown key %q in runFlow: expected file (a flow file), or flow (its steps), with and name", p.key.Value)
			}
		}
	default:
		l.errorf(c.main, "runFlow: expected a flow file (runFlow: flows/login.yaml) or {file, with} or {flow: [steps]}, got %s", describe(c.main))
		return
	}
	if n := c.opt("with"); n != nil {
		if with != nil {
			l.errorf(n, "runFlow: with: given twice")
		}
		with = n
	}
	if with != nil {
		for _, p := range l.pairs(with, "runFlow.with") {
			if !validEnvName(p.key.Value) {
				l.errorf(p.key, "runFlow.with: %q cannot be used as ${%s}: use letters, digits and _", p.key.Value, p.key.Value)
			}
			st.With = append(st.With, Param{Name: p.key.Value, Value: l.optText(p.val, "runFlow.with."+p.key.Value)})
		}
	}
	switch {
	case (file == nil) == (inline == nil):
		l.errorf(c.main, "runFlow: give either file: (a flow file) or flow: (its steps)")
		return
	case file != nil:
		st.Flow = l.flowFile(file, l.str(file, "runFlow.file"))
	default:
		st.Flow = l.inlineFlow(inline, name, st.With)
	}
	if st.Flow == nil {
		return
	}
	l.checkWith(c.node, st.Flow, st.With)
	for _, s := range st.Flow.Stores {
		l.vars.store(s)
	}
}

// inlineFlow reads runFlow's own steps: they see the caller's values and
// the ones passed with with:.
func (l *loader) inlineFlow(n, name *yaml.Node, with []Param) *Flow {
	f := &Flow{Name: "flow"}
	if name != nil {
		f.Name = l.str(name, "runFlow.name")
	}
	saved := l.vars
	l.vars = newNames(saved)
	for _, p := range with {
		l.vars.set[p.Name] = true
		f.Params = append(f.Params, Param{Name: p.Name})
	}
	f.Tasks = []Task{{Steps: l.stepList(n, "runFlow.flow"), Pos: l.pos(n)}}
	f.Stores = l.vars.stored
	l.vars = saved
	return f
}

// flowFile reads the flow file rel (relative to the file being read),
// once per load, refusing a chain of flows that comes back to itself.
func (l *loader) flowFile(n *yaml.Node, rel string) *Flow {
	if rel == "" {
		return nil
	}
	if !l.opts.Files {
		l.errorf(n, "runFlow: this script may not read files (it did not come from one); give the flow's steps inline: runFlow: {flow: [steps]}")
		return nil
	}
	path := rel
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(l.file), rel)
	}
	abs := absPath(path)
	for i, f := range l.chain {
		if f == abs {
			chain := make([]string, 0, len(l.chain)-i+1)
			for _, c := range l.chain[i:] {
				chain = append(chain, filepath.Base(c))
			}
			l.errorf(n, "runFlow cycle: %s → %s: a flow cannot call itself, even through others; move the shared steps into a flow both call", strings.Join(chain, " → "), filepath.Base(abs))
			return nil
		}
	}
	if f, ok := l.flows[abs]; ok {
		return f
	}
	data, err := readRegular(path, maxFlowFile)
	if err != nil {
		l.errorf(n, "runFlow: cannot read %s (flow files are relative to %s): %v", path, l.file, err)
		return nil
	}
	sub := &loader{file: path, opts: l.opts, flow: true, chain: append(append([]string(nil), l.chain...), abs), flows: l.flows, vars: newNames(nil)}
	s := sub.parse(data)
	for _, e := range sub.errs {
		if len(l.errs) < maxErrors {
			l.errs = append(l.errs, e)
		}
	}
	if s == nil || len(sub.errs) > 0 {
		return nil
	}
	f := &Flow{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), File: path, Params: s.Params, Tasks: s.Tasks, Stores: s.Stores}
	l.flows[abs] = f
	return f
}

// checkWith refuses values a flow does not take and required parameters
// not given.
func (l *loader) checkWith(n *yaml.Node, f *Flow, with []Param) {
	given := map[string]bool{}
	for _, w := range with {
		given[w.Name] = true
		known := false
		for _, p := range f.Params {
			known = known || p.Name == w.Name
		}
		if !known {
			l.errorf(n, "runFlow: %s takes no parameter %q: it takes %s (declare more with params: in the flow)", f.Name, w.Name, paramList(f.Params))
		}
	}
	for _, p := range f.Params {
		if p.Required && !given[p.Name] {
			l.errorf(n, "runFlow: %s needs %s: add with: {%s: …}", f.Name, p.Name, p.Name)
		}
	}
}

func paramList(ps []Param) string {
	if len(ps) == 0 {
		return "none"
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// params reads a flow's params: {name: default} (null: required) or a
// list of names (all required). Each is a value of the file.
func (l *loader) params(n *yaml.Node) []Param {
	var out []Param
	add := func(k *yaml.Node, p Param) {
		if !validEnvName(p.Name) {
			l.errorf(k, "params: %q cannot be used as ${%s}: use letters, digits and _", p.Name, p.Name)
		}
		if !l.flow && p.Required {
			l.errorf(k, "params: %s has no default; a script run on its own needs one (params: {%s: …}), or call it from another with runFlow", p.Name, p.Name)
		}
		l.vars.set[p.Name] = true
		out = append(out, p)
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			add(c, Param{Name: l.str(c, "params"), Required: true})
		}
	case yaml.MappingNode:
		for _, p := range l.pairs(n, "params") {
			if isNull(p.val) {
				add(p.key, Param{Name: p.key.Value, Required: true})
			} else {
				add(p.key, Param{Name: p.key.Value, Value: l.str(p.val, "params."+p.key.Value)})
			}
		}
	default:
		l.errorf(n, "params: expected {name: default} (null for a required one) or a list of names, got %s", describe(n))
	}
	return out
}

// list reads one item or a list of them.
func (l *loader) list(n *yaml.Node, what string) []*yaml.Node {
	switch n.Kind {
	case yaml.ScalarNode:
		return []*yaml.Node{n}
	case yaml.SequenceNode:
		return n.Content
	}
	l.errorf(n, "%s: expected a list, got %s", what, describe(n))
	return nil
}

// envList reads env: [NAME, …], the environment variables the file's text
// may use.
func (l *loader) envList(n *yaml.Node) []string {
	l.env = map[string]bool{}
	var out []string
	for _, c := range l.list(n, "env") {
		if c.Kind != yaml.ScalarNode || !validEnvName(c.Value) {
			l.errorf(c, "env: expected an environment variable name, got %s", describe(c))
			continue
		}
		if secretVar(c.Value) {
			l.errorf(c, "env: %s holds a model setting or key; scripts never see those (the runtime reads them itself)", c.Value)
			continue
		}
		l.env[c.Value] = true
		out = append(out, c.Value)
	}
	return out
}

// words reads tags: smoke or tags: [smoke, checkout] (what names the key).
func (l *loader) words(n *yaml.Node, what string) []string {
	var out []string
	for _, c := range l.list(n, what) {
		t := l.str(c, what)
		if t == "" || strings.ContainsAny(t, ", ") {
			l.errorf(c, "%s: %q is not one word", what, t)
			continue
		}
		out = append(out, t)
	}
	return out
}
