package server_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The playground runs no shell command: no policy allows one yet. These
// tests fail when an endpoint, an action or the server's code starts to,
// so whoever adds one adds the policy check with it.

// shellWords are names that suggest running a command. "execute" is
// POST /execute, which runs goals through the action space.
var shellWords = regexp.MustCompile(`(?i)shell|\badb\b|adb[A-Z_]|command|\bcmd|\bexec\b|exec[^u]|spawn|terminal|subprocess`)

func TestNoShellEndpoint(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	api := p.mustDo(200, "GET", "/api", nil)
	eps, _ := api["endpoints"].([]any)
	if len(eps) == 0 {
		t.Fatalf("GET /api lists no endpoints: %v", api)
	}
	for _, e := range eps {
		if shellWords.MatchString(e.(string)) {
			t.Errorf("endpoint %q looks like it runs commands: it must refuse unless a policy allows it (then update this test)", e)
		}
	}
	space := p.mustDo(200, "GET", "/action-space", nil)
	acts, _ := space["actions"].([]any)
	if len(acts) == 0 {
		t.Fatalf("GET /action-space lists no actions: %v", space)
	}
	for _, a := range acts {
		a := a.(map[string]any)
		names := []string{a["name"].(string), a["description"].(string)}
		for _, al := range asStrings(a["aliases"]) {
			names = append(names, al)
		}
		for _, n := range names {
			if shellWords.MatchString(n) {
				t.Errorf("action %s (%q) looks like it runs commands: /interact must refuse it unless a policy allows it", a["name"], n)
			}
		}
	}
	for _, name := range []string{"Shell", "runAdbShell", "AdbShell", "Exec", "RunCommand"} {
		code, m := p.do("POST", "/interact", map[string]any{"action": name, "params": map[string]any{"command": "id"}})
		if code != 400 || !strings.Contains(m["error"].(string), "no action") {
			t.Errorf("POST /interact %s: %d %v, want 400 no such action", name, code, m)
		}
	}
}

func asStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// TestNoShellInCode reads the source of the packages that turn requests
// into device input: neither may start a process or reach adb itself, and
// a file that names anything shell must also read the policy
// (Options.AllowShell) that lets it run.
func TestNoShellInCode(t *testing.T) {
	for _, dir := range []string{".", "../action"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, why := range shellUses(t, f, src) {
				t.Errorf("%s: %s: the playground runs no shell command unless a policy (Options.AllowShell) allows it", f, why)
			}
		}
	}
}

// shellPolicy is the option that lets the playground run commands.
const shellPolicy = "AllowShell"

func shellUses(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var why, named []string
	policy := false
	for _, im := range file.Imports {
		if p := strings.Trim(im.Path.Value, `"`); p == "os/exec" || strings.HasSuffix(p, "/adb") {
			why = append(why, fset.Position(im.Pos()).String()+" imports "+p)
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if n.Sel.Name == shellPolicy {
				policy = true
			}
			if x, ok := n.X.(*ast.Ident); ok && x.Name == "os" && strings.HasPrefix(n.Sel.Name, "StartProcess") {
				why = append(why, fset.Position(n.Pos()).String()+" starts a process")
			}
		case *ast.Ident:
			if n.Name != shellPolicy && strings.Contains(strings.ToLower(n.Name), "shell") {
				named = append(named, fset.Position(n.Pos()).String()+" names "+n.Name+" without reading ."+shellPolicy)
			}
		}
		return true
	})
	if !policy {
		why = append(why, named...)
	}
	return why
}

// The guard against future shells guards: a file that shells out is
// caught, and one that names a shell while reading the policy is not.
func TestShellUsesCaught(t *testing.T) {
	src := `package x
import "os/exec"
func f(d interface{ Shell(string) }) { exec.Command("sh"); d.Shell("id") }`
	if got := shellUses(t, "x.go", []byte(src)); len(got) != 3 {
		t.Errorf("shellUses found %d uses, want 3 (the import, two Shell names): %q", len(got), got)
	}
	gated := `package x
func f(o Options, d interface{ Shell(string) }) { if o.AllowShell { d.Shell("id") } }`
	if got := shellUses(t, "x.go", []byte(gated)); len(got) != 0 {
		t.Errorf("a shell behind the policy: %q, want none", got)
	}
}

// POST /execute runs no step that runs commands unless the policy
// (Options.AllowShell) allows it: each is refused, and the phone shows
// nothing happened.
func TestExecuteRunsNoShellStep(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	before, _ := p.dev.Phone.Foreground()
	for _, step := range []map[string]any{
		{"runAdbShell": "am start -n com.android.settings/.Main"},
		{"runWdaRequest": map[string]any{"method": "GET", "endpoint": "/status"}},
		{"javascript": "1"},
	} {
		code, m := p.do("POST", "/execute", map[string]any{"step": step})
		if msg, _ := m["error"].(string); code != 403 || !strings.Contains(msg, "does not allow") {
			t.Errorf("POST /execute %v: %d %v, want 403: the playground does not allow it", step, code, m)
		}
	}
	if fg, _ := p.dev.Phone.Foreground(); fg != before {
		t.Errorf("the foreground app went from %q to %q", before, fg)
	}
}
