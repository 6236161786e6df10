package configfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFind: apex.yaml is found as git finds .git — in the
// directory or the nearest parent with one — and then in the user's
// config directory.
func TestFind(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "project")
	deep := filepath.Join(project, "tests", "smoke")
	xdg := filepath.Join(root, "xdg")
	home := filepath.Join(root, "home")
	for _, d := range []string{deep, filepath.Join(xdg, "apex"), filepath.Join(home, ".config", "apex")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) string {
		if err := os.WriteFile(p, []byte("model: m\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	if got := Find(deep, env("HOME", home)); got != "" {
		t.Fatalf("with no apex.yaml anywhere: %q", got)
	}
	inHome := write(filepath.Join(home, ".config", "apex", Name))
	if got := Find(deep, env("HOME", home)); got != inHome {
		t.Errorf("~/.config/apex: got %q, want %q", got, inHome)
	}
	inXDG := write(filepath.Join(xdg, "apex", Name))
	if got := Find(deep, env("HOME", home, "XDG_CONFIG_HOME", xdg)); got != inXDG {
		t.Errorf("$XDG_CONFIG_HOME/apex: got %q, want %q", got, inXDG)
	}
	inProject := write(filepath.Join(project, Name))
	if got := Find(deep, env("HOME", home, "XDG_CONFIG_HOME", xdg)); got != inProject {
		t.Errorf("a parent's: got %q, want %q", got, inProject)
	}
	here := write(filepath.Join(deep, Name))
	if got := Find(deep, env("XDG_CONFIG_HOME", xdg)); got != here {
		t.Errorf("the directory's own: got %q, want %q", got, here)
	}
}
