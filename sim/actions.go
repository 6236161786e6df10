package sim

import (
	"fmt"
	"strings"
)

// maxActionDepth bounds nested if/then chains so a spec cannot recurse
// forever.
const maxActionDepth = 32

// run executes a handler. Errors in a handler (a set on a missing list,
// say) are logged to logcat as a real app's would be, never panics.
func (p *Phone) run(a *appRun, acts []*Action, s *evalScope) {
	p.runDepth(a, acts, s, 0)
}

func (p *Phone) runDepth(a *appRun, acts []*Action, s *evalScope, depth int) (stop bool) {
	if depth > maxActionDepth {
		p.logcat.add(a.pid, "W", a.tag(), "handler nesting too deep; stopped")
		return true
	}
	for _, act := range acts {
		if err := p.do(a, act, s, depth); err != nil {
			p.logcat.add(a.pid, "W", a.tag(), err.Error())
		}
		// Once the app died or left the screen the rest of the handler
		// belongs to nobody.
		if !a.running || p.fg != a.spec.Package && act.Launch == "" && !act.Home {
			return true
		}
	}
	return false
}

func (a *appRun) tag() string {
	label := strings.ReplaceAll(a.spec.Label, " ", "")
	if label == "" {
		return "App"
	}
	return label
}

func (p *Phone) do(a *appRun, act *Action, s *evalScope, depth int) error {
	defer p.changed()
	switch {
	case act.Navigate != "":
		p.push(a, act.Navigate)
	case act.Replace != "":
		if len(a.stack) > 0 {
			a.stack = a.stack[:len(a.stack)-1]
		}
		a.scroll = map[string]int{}
		p.push(a, act.Replace)
	case act.Root != "":
		a.stack = nil
		a.scroll = map[string]int{}
		p.push(a, act.Root)
	case act.Back:
		if a.dialog != nil {
			a.dialog = nil
			return nil
		}
		a.focus = ""
		p.back()
	case act.Home:
		p.home()
	case act.Set != nil:
		for _, k := range sortedAnyKeys(act.Set) {
			if err := a.assign(k, value(act.Set[k], s), s); err != nil {
				return err
			}
		}
	case act.Increment != "":
		by := 1.0
		if act.By != nil {
			by = *act.By
		}
		v := toNum(a.read(act.Increment, s)) + by
		if act.Min != nil && v < *act.Min {
			v = *act.Min
		}
		if act.Max != nil && v > *act.Max {
			v = *act.Max
		}
		return a.assign(act.Increment, v, s)
	case act.Append != nil:
		return p.appendTo(a, act.Append, s)
	case act.Remove != "" && act.Where != "":
		items, _ := a.get(act.Remove).([]any)
		kept := []any{}
		for i, it := range items {
			if !cond(act.Where, &evalScope{app: a, item: it, index: i, hasItem: true}) {
				kept = append(kept, it)
			}
		}
		a.put(act.Remove, kept)
	case act.Remove != "":
		return a.removeItem(act.Remove, s)
	case act.Clear != "":
		switch a.get(act.Clear).(type) {
		case []any:
			a.put(act.Clear, []any{})
		case map[string]any:
			a.put(act.Clear, map[string]any{})
		default:
			a.put(act.Clear, "")
		}
	case act.Dialog != "":
		d := a.dialogSpec(act.Dialog)
		if d == nil {
			return fmt.Errorf("dialog %q not found", act.Dialog)
		}
		a.dialog = &dialogRun{spec: d, scope: s}
		a.focus = ""
	case act.Dismiss:
		a.dialog = nil
	case act.Toast != "":
		p.showToast(render(act.Toast, s))
	case act.Crash != "":
		p.crash(a, render(act.Crash, s))
	case act.Launch != "":
		if _, ok := p.apps[act.Launch]; !ok {
			p.showToast("App not installed")
			return fmt.Errorf("launch %s: not installed", act.Launch)
		}
		p.launch(act.Launch)
	case act.Focus != "":
		a.setFocus(a.fieldKey(act.Focus))
	case act.Log != "":
		p.logcat.add(a.pid, "I", a.tag(), render(act.Log, s))
	case act.If != "":
		branch := act.Else
		if cond(act.If, s) {
			branch = act.Then
		}
		p.runDepth(a, branch, s, depth+1)
	}
	return nil
}

func (p *Phone) appendTo(a *appRun, ap *Append, s *evalScope) error {
	list, ok := a.get(ap.To).([]any)
	if !ok && a.get(ap.To) != nil {
		return fmt.Errorf("append to %s: not a list", ap.To)
	}
	v := deepCopy(value(ap.Value, s))
	if ap.Key != "" {
		m, _ := v.(map[string]any)
		for _, it := range list {
			im, ok := it.(map[string]any)
			if ok && m != nil && equal(im[ap.Key], m[ap.Key]) {
				if ap.Count != "" {
					im[ap.Count] = toNum(im[ap.Count]) + max(1, toNum(m[ap.Count]))
				}
				return nil
			}
		}
	}
	a.put(ap.To, append(list, v))
	return nil
}

// fieldKey names a field's transient text and focus: screen id + element id.
func (a *appRun) fieldKey(id string) string {
	if t := a.top(); t != nil {
		return t.spec.ID + "/" + id
	}
	return id
}

func sortedAnyKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
