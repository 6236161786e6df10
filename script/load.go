package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/apexagent/apex/internal/yamlerr"
	"gopkg.in/yaml.v3"
)

// Options tune Load. The zero value (or nil) reads the process environment
// and accepts no generic action steps.
type Options struct {
	// LookupEnv resolves ${NAME} references; nil means os.LookupEnv.
	LookupEnv func(name string) (string, bool)
	// Action reports whether name is an action of the action space and, when
	// params is not nil, checks them (a JSON object). Nil means only the
	// step kinds of this package are known.
	Action func(name string, params json.RawMessage) (known bool, err error)
	// Files lets the script read the flow files and data files it names
	// (relative to its own); LoadFile sets it. Text that comes from a
	// client (a playground's steps) leaves it false: its runFlow and data:
	// cannot read the files of the machine it runs on.
	Files bool
	// Values names the values given from outside the file (the columns of
	// apex run --data rows), so its text may refer to them.
	Values []string
}

// Error is one problem in a script, with its place.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string {
	switch {
	case e.Pos.Line == 0:
		return fmt.Sprintf("%s: %s", e.Pos.File, e.Msg)
	case e.Pos.Col == 0:
		return fmt.Sprintf("%s:%d: %s", e.Pos.File, e.Pos.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.Pos.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// maxErrors bounds how many problems one Load reports.
const maxErrors = 20

// LoadFile reads and parses the script at path.
func LoadFile(path string, opts *Options) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script: read %s: %w", path, err)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Files = true
	return Load(data, path, &o)
}

// Load parses a script. filename is used in error positions and to find
// the flow files it calls (relative to it). The error, when not nil, joins
// one *Error per problem found (at most 20).
func Load(data []byte, filename string, opts *Options) (*Script, error) {
	if opts == nil {
		opts = &Options{}
	}
	o := *opts
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	l := &loader{file: filename, opts: &o, flows: map[string]*Flow{}}
	l.chain = []string{absPath(filename)}
	l.vars = newNames(nil)
	for _, v := range o.Values {
		l.vars.set[v] = true
	}
	s := l.parse(data)
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	return s, nil
}

// parse reads one file; its problems are in l.errs.
func (l *loader) parse(data []byte) *Script {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		l.errs = append(l.errs, l.syntaxError(data, err))
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		l.errs = append(l.errs, &Error{Pos: l.pos(&extra), Msg: "a second YAML document: a script is one document (remove the ---)"})
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		l.errs = append(l.errs, &Error{Pos: Pos{File: l.file}, Msg: "empty script: expected a mapping with tasks:"})
		return nil
	}
	return l.script(doc.Content[0])
}

func (l *loader) syntaxError(data []byte, err error) error {
	line, msg := yamlerr.Locate(data, err)
	return &Error{Pos: Pos{File: l.file, Line: line}, Msg: "invalid YAML: " + msg}
}

type loader struct {
	file string
	opts *Options
	errs []error
	// vars are the value names known where the loader reads; env the
	// environment variables the file declares.
	vars *names
	env  map[string]bool
	// flow is set while reading a flow file; chain lists the files being
	// read (absolute), to refuse a flow that calls itself; flows are the
	// flow files read so far, by absolute path.
	flow   bool
	chain  []string
	flows  map[string]*Flow
	visits int  // nodes expanded, bounded so alias bombs stay cheap
	tooBig bool // the expansion bound was hit (reported once)
}

// maxVisits bounds the nodes a script may expand to through aliases.
const maxVisits = 200000

func (l *loader) pos(n *yaml.Node) Pos { return Pos{File: l.file, Line: n.Line, Col: n.Column} }

func (l *loader) errorf(n *yaml.Node, format string, args ...any) {
	if len(l.errs) == maxErrors {
		l.errs = append(l.errs, &Error{Pos: Pos{File: l.file}, Msg: "too many errors; fix these first"})
	}
	if len(l.errs) > maxErrors {
		return
	}
	l.errs = append(l.errs, &Error{Pos: l.pos(n), Msg: fmt.Sprintf(format, args...)})
}

// pair is one key and value of a mapping node.
type pair struct{ key, val *yaml.Node }

// pairs returns a mapping's entries, reporting duplicate keys. what names
// the mapping in messages.
func (l *loader) pairs(n *yaml.Node, what string) []pair {
	n = resolveAlias(n)
	l.visits += len(n.Content)/2 + 1
	if l.visits > maxVisits {
		if !l.tooBig {
			l.tooBig = true
			l.errorf(n, "script expands to too many values through aliases")
		}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		l.errorf(n, "%s: expected a mapping (key: value lines), got %s", what, describe(n))
		return nil
	}
	seen := map[string]*yaml.Node{}
	out := make([]pair, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolveAlias(n.Content[i]), resolveAlias(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			l.errorf(k, "%s: expected a plain key, got %s", what, describe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			l.errorf(k, "%s: key %q repeated (first at line %d)", what, k.Value, first.Line)
			continue
		}
		seen[k.Value] = k
		out = append(out, pair{k, v})
	}
	return out
}

// resolveAlias follows *anchor references so positions and values come from
// the anchored node; nested aliases are bounded to avoid alias bombs.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 8; i++ {
		n = n.Alias
	}
	return n
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

func (l *loader) script(root *yaml.Node) *Script {
	s := &Script{File: l.file}
	var tasks *yaml.Node
	var targets []string
	ps := l.pairs(root, "script")
	for _, p := range ps {
		if p.key.Value == "env" {
			s.Env = l.envList(p.val)
		}
	}
	for _, p := range ps {
		switch k := p.key.Value; k {
		case "android", "ios", "sim":
			if l.flow {
				l.errorf(p.key, "a flow runs on its caller's device: remove the %s: block", k)
				continue
			}
			targets = append(targets, k)
			if len(targets) > 1 {
				l.errorf(p.key, "a second target block %q: a script drives one device (%s is already set)", k, targets[0])
				continue
			}
			s.Target = l.target(k, p.key, p.val)
		case "web", "computer", "interface":
			l.errorf(p.key, "target %q is not supported: Apex drives phones; use android:, ios: or sim:", k)
		case "tasks":
			tasks = p.val
		case "agent":
			if m, ok := l.toAny(p.val).(map[string]any); ok {
				s.Agent = m
			} else {
				l.errorf(p.val, "agent: expected a mapping (testId, aiActContext, …), got %s", describe(p.val))
			}
		case "config":
			// Midscene's output/logging block; nothing here changes how Apex runs.
		case "env":
		case "params":
			s.Params = l.params(p.val)
		case "data":
			if l.flow {
				l.errorf(p.key, "a flow takes values from its caller (with:), not data: rows; move data: to the script that calls it")
				continue
			}
			s.Data = l.data(p.val)
		case "tags":
			s.Tags = l.words(p.val, "tags")
		default:
			l.errorf(p.key, "unknown top-level key %q: expected android, ios, sim, agent, env, params, data, tags or tasks", k)
		}
	}
	if tasks == nil {
		l.errorf(root, "missing tasks: expected a list of tasks, each with name and flow")
		return s
	}
	if tasks.Kind != yaml.SequenceNode {
		l.errorf(tasks, "tasks: expected a list of tasks (lines starting with -), got %s", describe(tasks))
		return s
	}
	if len(tasks.Content) == 0 {
		l.errorf(tasks, "tasks: the list is empty; add at least one task with name and flow")
	}
	for _, tn := range tasks.Content {
		s.Tasks = append(s.Tasks, l.task(resolveAlias(tn)))
	}
	s.Stores = l.vars.stored
	return s
}

func (l *loader) target(kind string, key, n *yaml.Node) Target {
	t := Target{Kind: kind, Pos: l.pos(key)}
	if n.Tag == "!!null" {
		return t
	}
	var host, port string
	for _, p := range l.pairs(n, kind) {
		k := p.key.Value
		switch {
		case k == "launch":
			t.Launch = l.str(p.val, kind+".launch")
		case k == "output":
			t.Output = l.str(p.val, kind+".output")
		case k == "deviceId" || (kind == "ios" && k == "udid"):
			t.DeviceID = l.str(p.val, kind+"."+k)
		case kind == "ios" && k == "wdaUrl":
			t.WDAURL = l.str(p.val, "ios.wdaUrl")
		case kind == "ios" && k == "wdaHost":
			host = l.str(p.val, "ios.wdaHost")
		case kind == "ios" && k == "wdaPort":
			port = l.str(p.val, "ios.wdaPort")
		case kind == "sim" && k == "platform":
			t.Platform = l.str(p.val, "sim.platform")
			if t.Platform != "android" && t.Platform != "ios" {
				l.errorf(p.val, "sim.platform: expected android or ios, got %q", t.Platform)
			}
		case kind != "sim" && deviceOptions[k]:
			if t.Extra == nil {
				t.Extra = map[string]any{}
			}
			t.Extra[k] = l.toAny(p.val)
		default:
			l.errorf(p.key, "unknown key %q in %s: expected %s", k, kind, targetKeys[kind])
		}
	}
	if kind == "sim" && t.Platform == "" {
		t.Platform = "android"
	}
	if t.WDAURL == "" && (host != "" || port != "") {
		if host == "" {
			host = "localhost"
		}
		if port == "" {
			port = "8100"
		}
		t.WDAURL = "http://" + host + ":" + port
	}
	return t
}

var targetKeys = map[string]string{
	"android": "deviceId, launch or output",
	"ios":     "wdaUrl (or wdaHost, wdaPort), deviceId, launch or output",
	"sim":     "platform, launch or deviceId",
}

// deviceOptions are Midscene device settings kept for compatibility.
var deviceOptions = map[string]bool{
	"unstableLogContent": true, "aiActionContext": true, "androidAdbPath": true,
	"remoteAdbHost": true, "remoteAdbPort": true, "imeStrategy": true, "displayId": true,
	"autoDismissKeyboard": true, "keyboardDismissStrategy": true, "screenshotResizeScale": true,
	"alwaysRefreshScreenInfo": true, "usePhysicalDisplayIdForScreenshot": true,
	"usePhysicalDisplayIdForDisplayLookup": true, "scrcpyConfig": true,
}

func (l *loader) task(n *yaml.Node) Task {
	t := Task{Pos: l.pos(n)}
	var flow *yaml.Node
	for _, p := range l.pairs(n, "task") {
		switch p.key.Value {
		case "name":
			t.Name = l.str(p.val, "task name")
		case "flow":
			flow = p.val
		case "continueOnError":
			t.ContinueOnError = l.boolean(p.val, "continueOnError")
		default:
			l.errorf(p.key, "unknown key %q in a task: expected name, flow or continueOnError", p.key.Value)
		}
	}
	if n.Kind != yaml.MappingNode {
		return t
	}
	if t.Name == "" {
		l.errorf(n, "task without a name: add name: <what this task does>")
	}
	switch {
	case flow == nil:
		l.errorf(n, "task %q has no flow: add flow: with a list of steps", t.Name)
	case flow.Kind != yaml.SequenceNode:
		l.errorf(flow, "flow: expected a list of steps (lines starting with -), got %s", describe(flow))
	default:
		t.Steps = l.steps(flow)
	}
	return t
}

// steps reads a list of steps.
func (l *loader) steps(n *yaml.Node) []Step {
	var out []Step
	for _, sn := range n.Content {
		if st, ok := l.step(resolveAlias(sn)); ok {
			out = append(out, st)
		}
	}
	return out
}
