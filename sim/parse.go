package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apexagent/apex/internal/lazy"
	"gopkg.in/yaml.v3"
)

var packagePattern = lazy.Regexp(`^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$`)
var idPattern = lazy.Regexp(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseApp reads one app spec. Errors are *SpecError values naming the file,
// line and field: "shop.yaml:42: screens[1].elements[3].type: unknown
// element type "buton" (known: text, button, …)".
func ParseApp(data []byte, filename string) (*AppSpec, error) {
	if filename == "" {
		filename = "app.yaml"
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &SpecError{File: filename, Msg: "empty file: expected an app spec (package, label, screens)"}
		}
		msg := yamlLine().ReplaceAllString(strings.TrimPrefix(err.Error(), "yaml: "), "")
		return nil, &SpecError{File: filename, Line: yamlErrLine(err), Msg: strings.TrimPrefix(strings.TrimSpace(msg), ": ")}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	spec := &AppSpec{}
	d := &decoder{file: filename}
	if err := d.decodeStruct(root, reflectValue(spec), ""); err != nil {
		return nil, err
	}
	spec.File = filename
	spec.State, _ = normalize(spec.State).(map[string]any)
	spec.Session, _ = normalize(spec.Session).(map[string]any)
	spec.Data, _ = normalize(spec.Data).(map[string]any)
	v := &validator{spec: spec, file: filename}
	if err := v.app(); err != nil {
		return nil, err
	}
	if spec.Activity == "" {
		spec.Activity = ".MainActivity"
	}
	if spec.Version == "" {
		spec.Version = "1.0"
	}
	if spec.Start == "" {
		spec.Start = spec.Screens[0].ID
	}
	return spec, nil
}

var yamlLine = lazy.Regexp(`line (\d+):?`)

func yamlErrLine(err error) int {
	m := yamlLine().FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	n := 0
	fmt.Sscan(m[1], &n)
	return n
}

type validator struct {
	spec    *AppSpec
	file    string
	screens map[string]bool
	dialogs map[string]bool
}

func (v *validator) errf(line int, field, format string, a ...any) error {
	return &SpecError{File: v.file, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
}

func (v *validator) app() error {
	s := v.spec
	if s.Package == "" {
		return v.errf(s.Line, "package", "required: the app's package name, like com.example.shop")
	}
	if !packagePattern().MatchString(s.Package) {
		return v.errf(s.Line, "package", "expected a package name like com.example.shop, got %q", s.Package)
	}
	if s.Label == "" {
		return v.errf(s.Line, "label", "required: the name shown under the launcher icon")
	}
	for i, a := range s.Aliases {
		if !packagePattern().MatchString(a) || a == s.Package {
			return v.errf(s.Line, fmt.Sprintf("aliases[%d]", i), "expected another package name like com.example.old, got %q", a)
		}
	}
	if l := s.Links; l != nil {
		if len(l.Schemes) == 0 {
			return v.errf(s.Line, "links.schemes", "required: the URI schemes the app opens, like [http, https]")
		}
		if _, ok := s.Session[l.Bind]; !ok {
			return v.errf(s.Line, "links.bind", "expected a session variable to hold the URI, got %q", l.Bind)
		}
	}
	if len(s.Screens) == 0 {
		return v.errf(s.Line, "screens", "required: at least one screen")
	}
	for _, name := range []string{"icon.color", "theme.primary"} {
		c := s.Icon.Color
		if name == "theme.primary" {
			c = s.Theme.Primary
		}
		if c != "" {
			if _, err := parseColor(c); err != nil {
				return v.errf(s.Line, name, "%v", err)
			}
		}
	}
	if err := checkCond(s.Theme.Dark); err != nil {
		return v.errf(s.Line, "theme.dark", "%v", err)
	}
	v.screens = map[string]bool{}
	for i, sc := range s.Screens {
		f := fmt.Sprintf("screens[%d].id", i)
		if !idPattern().MatchString(sc.ID) {
			return v.errf(sc.Line, f, "expected an identifier (letters, digits, _), got %q", sc.ID)
		}
		if v.screens[sc.ID] {
			return v.errf(sc.Line, f, "screen %q defined twice", sc.ID)
		}
		v.screens[sc.ID] = true
	}
	v.dialogs = map[string]bool{}
	for i, dl := range s.Dialogs {
		f := fmt.Sprintf("dialogs[%d].id", i)
		if !idPattern().MatchString(dl.ID) {
			return v.errf(dl.Line, f, "expected an identifier, got %q", dl.ID)
		}
		if v.dialogs[dl.ID] {
			return v.errf(dl.Line, f, "dialog %q defined twice", dl.ID)
		}
		v.dialogs[dl.ID] = true
	}
	if s.Start != "" && !v.screens[s.Start] {
		return v.errf(s.Line, "start", "unknown screen %q", s.Start)
	}
	for i, sc := range s.Screens {
		if err := v.screen(sc, fmt.Sprintf("screens[%d]", i)); err != nil {
			return err
		}
	}
	for i, dl := range s.Dialogs {
		p := fmt.Sprintf("dialogs[%d]", i)
		if err := v.templates(dl.Line, p, map[string]string{"title": dl.Title, "text": dl.Text}); err != nil {
			return err
		}
		if err := v.elements(dl.Elements, p+".elements"); err != nil {
			return err
		}
		if err := v.elements(dl.Buttons, p+".buttons"); err != nil {
			return err
		}
	}
	return nil
}

func (v *validator) screen(sc *Screen, p string) error {
	if err := v.templates(sc.Line, p, map[string]string{"title": sc.Title}); err != nil {
		return err
	}
	if err := v.elements(sc.Actions, p+".actions"); err != nil {
		return err
	}
	if err := v.elements(sc.Elements, p+".elements"); err != nil {
		return err
	}
	if err := v.actions(sc.OnEnter, p+".on_enter", sc.Line); err != nil {
		return err
	}
	if pp := sc.Popup; pp != nil {
		if !v.dialogs[pp.Dialog] {
			return v.errf(pp.Line, p+".popup.dialog", "unknown dialog %q", pp.Dialog)
		}
		if pp.Chance < 0 || pp.Chance > 1 {
			return v.errf(pp.Line, p+".popup.chance", "expected a probability from 0 to 1, got %v", pp.Chance)
		}
	}
	return nil
}

func (v *validator) templates(line int, p string, m map[string]string) error {
	for k, t := range m {
		if _, err := compileTemplate(t); err != nil {
			return v.errf(line, p+"."+k, "%v", err)
		}
	}
	return nil
}

func (v *validator) elements(els []*Element, p string) error {
	ids := map[string]bool{}
	for i, e := range els {
		ep := fmt.Sprintf("%s[%d]", p, i)
		if err := v.element(e, ep); err != nil {
			return err
		}
		if e.ID != "" {
			ids[e.ID] = true
		}
	}
	return nil
}

func (v *validator) element(e *Element, p string) error {
	if e.Type == "" {
		return v.errf(e.Line, p+".type", "required (one of %s)", strings.Join(elementKinds, ", "))
	}
	if !slices.Contains(elementKinds, e.Type) {
		return v.errf(e.Line, p+".type", "unknown element type %q (known: %s)", e.Type, strings.Join(elementKinds, ", "))
	}
	if e.ID != "" && !idPattern().MatchString(e.ID) {
		return v.errf(e.Line, p+".id", "expected an identifier (letters, digits, _), got %q", e.ID)
	}
	if err := v.templates(e.Line, p, map[string]string{"text": e.Text, "desc": e.Desc, "hint": e.Hint, "empty": e.Empty}); err != nil {
		return err
	}
	for k, c := range map[string]string{"visible": e.Visible, "enabled": e.Enabled} {
		if err := checkCond(c); err != nil {
			return v.errf(e.Line, p+"."+k, "%v", err)
		}
	}
	if e.Color != "" {
		if _, err := parseColor(e.Color); err != nil {
			return v.errf(e.Line, p+".color", "%v", err)
		}
	}
	need := func(field string, ok bool, what string) error {
		if ok {
			return nil
		}
		return v.errf(e.Line, p+"."+field, "required for a %s: %s", e.Type, what)
	}
	var err error
	switch e.Type {
	case KindIcon:
		err = need("desc", e.Desc != "", "the content description screen readers announce")
	case KindCheckbox, KindSwitch:
		err = need("bind", e.Bind != "", "the state variable holding true/false")
	case KindRadio:
		if err = need("bind", e.Bind != "", "the state variable the group sets"); err == nil {
			err = need("value", e.Value != nil, "the value this option sets")
		}
	case KindList:
		if err = need("items", e.Items != "", "an expression giving the items, like products"); err == nil {
			err = need("item", e.Item != nil, "the row template")
		}
		if err == nil {
			if _, cerr := compileExpr(strings.TrimSuffix(strings.TrimPrefix(e.Items, "${"), "}")); cerr != nil {
				err = v.errf(e.Line, p+".items", "%v", cerr)
			}
		}
	case KindTabs:
		err = need("tabs", len(e.Tabs) > 0, "the tab entries")
	case KindRow:
		err = need("children", len(e.Children) > 0, "the elements side by side")
	}
	if err != nil {
		return err
	}
	if e.Bind != "" && !pathPattern().MatchString(e.Bind) {
		return v.errf(e.Line, p+".bind", "expected a state variable name (or item.field), got %q", e.Bind)
	}
	if it := e.Item; it != nil {
		ip := p + ".item"
		if err := v.templates(it.Line, ip, map[string]string{"text": it.Text, "detail": it.Detail, "icon": it.Icon, "desc": it.Desc}); err != nil {
			return err
		}
		if err := v.elements(it.Trailing, ip+".trailing"); err != nil {
			return err
		}
		if err := v.actions(it.OnTap, ip+".on_tap", it.Line); err != nil {
			return err
		}
		if err := v.actions(it.OnLongPress, ip+".on_long_press", it.Line); err != nil {
			return err
		}
	}
	for i, t := range e.Tabs {
		tp := fmt.Sprintf("%s.tabs[%d]", p, i)
		if t.Label == "" {
			return v.errf(t.Line, tp+".label", "required")
		}
		if t.Screen != "" && !v.screens[t.Screen] {
			return v.errf(t.Line, tp+".screen", "unknown screen %q", t.Screen)
		}
		if err := checkCond(t.Selected); err != nil {
			return v.errf(t.Line, tp+".selected", "%v", err)
		}
		if err := v.actions(t.OnTap, tp+".on_tap", t.Line); err != nil {
			return err
		}
	}
	if err := v.elements(e.Children, p+".children"); err != nil {
		return err
	}
	for i, l := range e.Lines {
		if _, err := compileTemplate(l); err != nil {
			return v.errf(e.Line, fmt.Sprintf("%s.lines[%d]", p, i), "%v", err)
		}
	}
	for name, acts := range map[string][]*Action{"on_tap": e.OnTap, "on_long_press": e.OnLongPress, "on_change": e.OnChange, "on_submit": e.OnSubmit} {
		if err := v.actions(acts, p+"."+name, e.Line); err != nil {
			return err
		}
	}
	return nil
}

func (v *validator) actions(acts []*Action, p string, line int) error {
	for i, a := range acts {
		ap := fmt.Sprintf("%s[%d]", p, i)
		if a.Line == 0 {
			a.Line = line
		}
		if err := v.action(a, ap); err != nil {
			return err
		}
	}
	return nil
}

var verbs = "navigate, replace, root, back, home, set, increment, append, remove, clear, dialog, dismiss, toast, crash, launch, focus, log, if"

func (v *validator) action(a *Action, p string) error {
	var set []string
	mark := func(name string, on bool) {
		if on {
			set = append(set, name)
		}
	}
	mark("navigate", a.Navigate != "")
	mark("replace", a.Replace != "")
	mark("root", a.Root != "")
	mark("back", a.Back)
	mark("home", a.Home)
	mark("set", a.Set != nil)
	mark("increment", a.Increment != "")
	mark("append", a.Append != nil)
	mark("remove", a.Remove != "")
	mark("clear", a.Clear != "")
	mark("dialog", a.Dialog != "")
	mark("dismiss", a.Dismiss)
	mark("toast", a.Toast != "")
	mark("crash", a.Crash != "")
	mark("launch", a.Launch != "")
	mark("focus", a.Focus != "")
	mark("log", a.Log != "")
	mark("if", a.If != "")
	if len(set) != 1 {
		if len(set) == 0 {
			return v.errf(a.Line, p, "expected one action (%s)", verbs)
		}
		return v.errf(a.Line, p, "expected one action, got %s", strings.Join(set, " and "))
	}
	verb := set[0]
	if (a.Then != nil || a.Else != nil) && verb != "if" {
		return v.errf(a.Line, p+".then", "then/else belong to an if action")
	}
	if a.Where != "" && verb != "remove" {
		return v.errf(a.Line, p+".where", "where belongs to a remove action")
	}
	if (a.By != nil || a.Min != nil || a.Max != nil) && verb != "increment" {
		return v.errf(a.Line, p+".by", "by/min/max belong to an increment action")
	}
	switch verb {
	case "navigate", "replace", "root":
		target := a.Navigate + a.Replace + a.Root
		if !v.screens[target] {
			return v.errf(a.Line, p+"."+verb, "unknown screen %q (screens: %s)", target, strings.Join(sortedKeys(v.screens), ", "))
		}
	case "dialog":
		if !v.dialogs[a.Dialog] {
			return v.errf(a.Line, p+".dialog", "unknown dialog %q", a.Dialog)
		}
	case "set":
		for k, val := range a.Set {
			if !pathPattern().MatchString(k) {
				return v.errf(a.Line, p+".set."+k, "expected a variable or item.field to set")
			}
			if err := checkValueTemplates(val); err != nil {
				return v.errf(a.Line, p+".set."+k, "%v", err)
			}
		}
	case "increment":
		if !pathPattern().MatchString(a.Increment) {
			return v.errf(a.Line, p+".increment", "expected a variable or item.field, got %q", a.Increment)
		}
	case "append":
		if !idPattern().MatchString(a.Append.To) {
			return v.errf(a.Line, p+".append.to", "expected the list variable to append to")
		}
		if err := checkValueTemplates(a.Append.Value); err != nil {
			return v.errf(a.Line, p+".append.value", "%v", err)
		}
	case "remove", "clear":
		if !idPattern().MatchString(a.Remove + a.Clear) {
			return v.errf(a.Line, p+"."+verb, "expected a state variable name")
		}
		if err := checkCond(a.Where); err != nil {
			return v.errf(a.Line, p+".where", "%v", err)
		}
	case "if":
		if err := checkCond(a.If); err != nil {
			return v.errf(a.Line, p+".if", "%v", err)
		}
		if err := v.actions(a.Then, p+".then", a.Line); err != nil {
			return err
		}
		return v.actions(a.Else, p+".else", a.Line)
	case "toast", "crash", "log":
		if _, err := compileTemplate(a.Toast + a.Crash + a.Log); err != nil {
			return v.errf(a.Line, p+"."+verb, "%v", err)
		}
	}
	return nil
}

var pathPattern = lazy.Regexp(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

func checkValueTemplates(v any) error {
	switch v := v.(type) {
	case string:
		_, err := compileTemplate(v)
		return err
	case map[string]any:
		for _, x := range v {
			if err := checkValueTemplates(x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := checkValueTemplates(x); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
