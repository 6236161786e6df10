package script

import (
	"encoding/json"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// A script's text refers to names as ${NAME} or ${NAME:-default}; $${NAME}
// is the text ${NAME} itself. A name is one of:
//
//   - a value: a column of the data row, a flow's parameter, or the result a
//     step stored (read: {as: total}, aiQuery with name:) earlier in the
//     script. Values are put in when the step runs (Step.Expand).
//   - an environment variable the script declares (env: [NAME]) or one named
//     APEX_VAR_…, put in when the script loads. A model's settings
//     (APEX_MODEL_…) and keys (…_API_KEY) never are, declared or not. An
//     undeclared variable with a default (${NAME:-x}) is x when it is not
//     set, and an error when it is (declare it to use it).
//
// Any other name is an error at load, with its place.

// VarPrefix marks environment variables every script may read.
const VarPrefix = "APEX_VAR_"

// secretVar reports whether an environment variable holds a model setting
// or a key, which no script text may carry.
func secretVar(name string) bool {
	u := strings.ToUpper(name)
	return strings.HasPrefix(u, "APEX_MODEL_") || strings.HasSuffix(u, "_API_KEY") || strings.HasSuffix(u, "_APIKEY")
}

// names are the value names known at a point of a script: those of its
// scope and of the scopes around it.
type names struct {
	set    map[string]bool
	parent *names
	// stored lists, in order, the names steps of this scope store (a flow
	// hands them back to its caller).
	stored []string
}

func newNames(parent *names) *names { return &names{set: map[string]bool{}, parent: parent} }

func (n *names) has(name string) bool {
	for ; n != nil; n = n.parent {
		if n.set[name] {
			return true
		}
	}
	return false
}

func (n *names) store(name string) {
	if !n.set[name] {
		n.stored = append(n.stored, name)
	}
	n.set[name] = true
}

// substitute replaces each ${ref} of s with what f returns for it. An
// escape $${ is kept as written when keepEscapes, else written ${. It
// fails on a ${ without its }.
func substitute(s string, keepEscapes bool, f func(ref string) string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' {
			// $${ is the text ${, whatever follows.
			if keepEscapes {
				b.WriteString(s[:i+2])
			} else {
				b.WriteString(s[:i-1])
				b.WriteString("${")
			}
			s = s[i+2:]
			continue
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return s, fmt.Errorf("unclosed ${ in %q: write ${NAME}, or $${ for the text ${", s)
		}
		end := i + j + 1
		b.WriteString(s[:i])
		b.WriteString(f(s[i+2 : end-1]))
		s = s[end:]
	}
}

// escapeRefs writes text so that substitute leaves it as it is.
func escapeRefs(s string) string { return strings.ReplaceAll(s, "${", "$${") }

// interpolate puts environment variables into s. Text read while the
// script runs (runtime) keeps references to values and escapes for
// Step.Expand; other text (a number, a mode, a device id) is final here,
// so a value there is an error.
func (l *loader) interpolate(n *yaml.Node, s string, runtime bool) string {
	out, err := substitute(s, runtime, func(ref string) string {
		whole := "${" + ref + "}"
		name, def, hasDef := strings.Cut(ref, ":-")
		switch {
		case !validEnvName(name):
			l.errorf(n, "bad reference ${%s}: expected ${NAME} or ${NAME:-default} (write $${ for the text ${)", ref)
		case l.vars.has(name):
			if runtime {
				return whole
			}
			l.errorf(n, "${%s} is a value set while the script runs; it cannot be used here, only in text a step types, finds or shows (write $${%s} for the text itself)", name, name)
		case secretVar(name):
			l.errorf(n, "${%s}: model settings and keys are never put into scripts; the runtime reads them itself", name)
		case l.env[name] || strings.HasPrefix(name, VarPrefix):
			v, ok := l.opts.LookupEnv(name)
			switch {
			case ok && (v != "" || !hasDef):
			case hasDef:
				v = def
			default:
				l.errorf(n, "environment variable %s is not set: export it, or write ${%s:-default}", name, name)
				return ""
			}
			if runtime {
				return escapeRefs(v)
			}
			return v
		case hasDef && !l.envSet(name):
			// An undeclared variable is never read; its default stands
			// (Midscene scripts load unchanged).
			if runtime {
				return escapeRefs(def)
			}
			return def
		default:
			if l.envSet(name) {
				l.errorf(n, "environment variable %s is not declared: add env: [%s] to the script (or name it %s%s)", name, name, VarPrefix, name)
				break
			}
			l.errorf(n, "unknown value ${%s}: store it before this step (read: {locate: …, as: %s}, or name: on a query), pass it to the flow (with: {%s: …}), make it a data column, or declare an environment variable (env: [%s], or name it %s%s)", name, name, name, name, VarPrefix, name)
		}
		return whole
	})
	if err != nil {
		l.errorf(n, "%v", err)
	}
	return out
}

func (l *loader) envSet(name string) bool {
	_, ok := l.opts.LookupEnv(name)
	return ok
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}

// refers reports whether any text Expand reads holds ${.
func (st *Step) refers() bool {
	texts := []string{st.Prompt, st.Value, st.Endpoint, st.ErrorMessage, string(st.Target), string(st.Params)}
	if st.Assert != nil {
		texts = append(texts, st.Assert.Text, st.Assert.Message)
	}
	if st.Cond != nil {
		texts = append(texts, string(st.Cond.Target))
		if st.Cond.Assert != nil {
			texts = append(texts, st.Cond.Assert.Text)
		}
	}
	for _, p := range st.With {
		texts = append(texts, p.Value)
	}
	for _, t := range texts {
		if strings.Contains(t, "${") {
			return true
		}
	}
	return false
}

// Lookup answers a value's text by its name.
type Lookup func(name string) (string, bool)

// Expand returns the step with the values its text refers to put in (and
// $${…} written ${…}); lookup answers them. Nested steps (a flow's, a
// branch's) are expanded when they run, not here. An unset value without
// a default is an error that names it.
func (st Step) Expand(lookup Lookup) (Step, error) {
	if !st.Refs {
		return st, nil
	}
	var errs []string
	text := func(s string, quote bool) string {
		out, err := substitute(s, false, func(ref string) string {
			name, def, hasDef := strings.Cut(ref, ":-")
			v, ok := lookup(name)
			switch {
			case ok && (v != "" || !hasDef):
			case hasDef:
				v = def
			default:
				errs = append(errs, name)
				return ""
			}
			if quote {
				b, _ := json.Marshal(v)
				return string(b[1 : len(b)-1])
			}
			return v
		})
		if err != nil {
			errs = append(errs, err.Error())
		}
		return out
	}
	raw := func(m json.RawMessage) json.RawMessage {
		if len(m) == 0 {
			return m
		}
		return json.RawMessage(text(string(m), true))
	}
	st.Prompt, st.Value, st.Endpoint, st.ErrorMessage = text(st.Prompt, false), text(st.Value, false), text(st.Endpoint, false), text(st.ErrorMessage, false)
	st.Target, st.Params = raw(st.Target), raw(st.Params)
	if st.Assert != nil {
		a := *st.Assert
		a.Text, a.Message = text(a.Text, false), text(a.Message, false)
		st.Assert = &a
	}
	if st.Cond != nil {
		c := *st.Cond
		c.Target = raw(c.Target)
		if c.Assert != nil {
			a := *c.Assert
			a.Text = text(a.Text, false)
			c.Assert = &a
		}
		st.Cond = &c
	}
	if len(st.With) > 0 {
		with := make([]Param, len(st.With))
		for i, p := range st.With {
			with[i] = Param{Name: p.Name, Value: text(p.Value, false)}
		}
		st.With = with
	}
	if len(errs) > 0 {
		return st, fmt.Errorf("%s: value %s is not set (the step that stores it did not run): store it on every path, or write ${%s:-default}", posString(st.Pos), strings.Join(errs, ", "), errs[0])
	}
	return st, nil
}

func posString(p Pos) string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }
