package script

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadSuite(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"s/apex.suite.yaml": "name: shop\nscripts: [b.yaml, \"*.yaml\"]\ninclude: smoke\nexclude: [slow]\ndefaults: {device: sim:ios, retries: 2, timeout: 3s}\n",
		"s/a.yaml":          "x", "s/b.yaml": "x", "s/c.yaml": "x", "s/flows/f.yaml": "x",
		"plain/z.yaml": "x", "plain/y.yaml": "x",
		"bad.suite.yaml": "scripts: [a.yaml]\ndefaults: {retry: 1}\n",
		"out.suite.yaml": "scripts: [../x.yaml]\n",
	})
	s, err := LoadSuite(filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	rel := func(fs []string) []string {
		var out []string
		for _, f := range fs {
			r, _ := filepath.Rel(dir, f)
			out = append(out, r)
		}
		return out
	}
	want := &Suite{Name: "shop", Scripts: []string{"s/b.yaml", "s/a.yaml", "s/c.yaml"}, Include: []string{"smoke"}, Exclude: []string{"slow"},
		Defaults: SuiteDefaults{Device: "sim:ios", Retries: 2, Timeout: 3 * time.Second}}
	got := *s
	got.File, got.Scripts = "", rel(s.Scripts)
	if d := cmp.Diff(*want, got); d != "" {
		t.Errorf("suite (-want +got):\n%s", d)
	}
	if !s.Selects([]string{"smoke", "fast"}) || s.Selects([]string{"smoke", "slow"}) || s.Selects(nil) {
		t.Error("include/exclude select wrongly")
	}
	p, err := LoadSuite(filepath.Join(dir, "plain"))
	if err != nil || strings.Join(rel(p.Scripts), " ") != "plain/y.yaml plain/z.yaml" {
		t.Errorf("a folder without a suite file: %v %v", p, err)
	}
	if _, err := LoadSuite(filepath.Join(dir, "bad.suite.yaml")); err == nil || !strings.Contains(err.Error(), `bad.suite.yaml:2:12: unknown key "retry" in defaults`) {
		t.Errorf("bad defaults: %v", err)
	}
	if _, err := LoadSuite(filepath.Join(dir, "out.suite.yaml")); err == nil || !strings.Contains(err.Error(), "inside the suite's folder") {
		t.Errorf("a script outside the suite: %v", err)
	}
}

func TestParseTags(t *testing.T) {
	in, ex, err := ParseTags("smoke, checkout,!slow")
	if err != nil || strings.Join(in, " ") != "smoke checkout" || strings.Join(ex, " ") != "slow" {
		t.Errorf("ParseTags = %v %v %v", in, ex, err)
	}
	for _, bad := range []string{"", "a,,b", "a b", "!"} {
		if _, _, err := ParseTags(bad); err == nil {
			t.Errorf("ParseTags(%q) passed", bad)
		}
	}
	if !SelectTags([]string{"a"}, nil, nil) || SelectTags(nil, []string{"a"}, nil) || SelectTags([]string{"a", "b"}, []string{"a"}, []string{"b"}) {
		t.Error("SelectTags")
	}
}
