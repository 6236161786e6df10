package layers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/apexagent/apex"

// table is the layering, bottom to top: a package may import packages of
// its own layer and of those below. Packages are named relative to the
// module. A package listed here that does not exist yet is fine; a package
// of the module missing from here fails the test. docs/architecture.md
// shows the same table (TestDocMatches keeps them in step).
var table = []struct {
	layer string
	pkgs  []string
}{
	{"leaves", []string{"event", "internal/yamlerr", "script", "internal/httpguard", "internal/tail", "video/h264", "video/frame", "internal/supervise", "internal/proctest", "internal/lazy", "internal/patience", "internal/configfile"}},
	{"wire", []string{"adb/proto", "adb", "adb/adbtest", "wda", "wda/wdatest"}},
	{"device", []string{"device", "device/android", "device/ios", "device/devicetest", "device/lease", "device/hub"}},
	// internal/labtest starts a simulated phone and opens it with the
	// Android driver: a test helper that sits above both.
	{"sim", []string{"sim", "sim/adbd", "sim/adbd/adbdtest", "sim/wda", "sim/lab", "internal/labtest"}},
	{"perception", []string{"scene", "ocr", "ocr/remote", "perceive", "internal/scenetest"}},
	{"capability", []string{"action", "action/actiontest", "locate", "check"}},
	{"engine", []string{"engine"}},
	{"intelligence", []string{"llm", "llm/llmtest", "agent"}},
	{"records", []string{"store", "report"}},
	{"application", []string{"runner", "farm", "farm/audit", "farm/auth", "farm/api", "farm/lease", "farm/queue", "farm/records", "farm/artifact", "farm/registry", "farm/plane", "farm/remote", "farm/host", "farm/console", "farm/farmtest"}},
	{"faces", []string{"server", "mcp", "cli", "cmd/apex", "internal/browsertest", "internal/recordtest", "bench/benchtest", "bench/cpuhog", "internal/layers", "test/attack"}},
}

// narrow lists package trees that may reach down less far than their
// layer allows: besides their own layer, only up to the layer named.
// Simulated phones speak the wire protocols and know nothing of drivers.
var narrow = []struct{ tree, upTo string }{
	{"sim", "wire"},
}

// layerOf maps a package (relative to the module) to its layer's index.
func layerOf() map[string]int {
	m := map[string]int{}
	for i, row := range table {
		for _, p := range row.pkgs {
			m[p] = i
		}
	}
	return m
}

func layerIndex(name string) int {
	for i, row := range table {
		if row.layer == name {
			return i
		}
	}
	panic("no layer " + name)
}

// pkg is what go list says of a package.
type pkg struct {
	ImportPath string
	Imports    []string
	Error      *struct{ Err string }
}

// list runs go list on the module's packages (only non-test imports) from
// the module root, with the overlay file when one is given.
func list(t *testing.T, overlay string) []pkg {
	t.Helper()
	root := moduleRoot(t)
	args := []string{"list", "-e", "-deps", "-json=ImportPath,Imports,Error"}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.Command("go", append(args, "./...")...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", root, err, stderr.Bytes())
	}
	var pkgs []pkg
	d := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := d.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if rel, ok := relative(p.ImportPath); ok {
			p.ImportPath = rel
			pkgs = append(pkgs, p)
		}
	}
	return pkgs
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		t.Fatalf("go env GOMOD: %v (%s)", err, out)
	}
	return filepath.Dir(string(bytes.TrimSpace(out)))
}

// relative names a package of the module relative to it.
func relative(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	rel, ok := strings.CutPrefix(path, module+"/")
	return rel, ok
}

// check returns what breaks the layering: packages with no place in the
// table, packages go list could not load, and imports that point up.
func check(pkgs []pkg) []string {
	layers := layerOf()
	var problems []string
	for _, p := range pkgs {
		if p.Error != nil {
			problems = append(problems, fmt.Sprintf("%s does not load: %s", p.ImportPath, p.Error.Err))
		}
		from, ok := layers[p.ImportPath]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has no layer: add it to the row of its layer in the table in internal/layers/layers_test.go, and to docs/architecture.md with its role", p.ImportPath))
			continue
		}
		reach := from
		for _, n := range narrow {
			if p.ImportPath == n.tree || strings.HasPrefix(p.ImportPath, n.tree+"/") {
				reach = layerIndex(n.upTo)
			}
		}
		for _, imp := range p.Imports {
			dep, ok := relative(imp)
			if !ok {
				continue
			}
			to, ok := layers[dep]
			if !ok || to == from || to <= reach {
				continue // an unplaced dep is reported as a package of its own
			}
			fix := fmt.Sprintf("move what %s needs from %s down to layer %s or below (into a leaf such as event, or as an interface %s defines and %s's types satisfy)", p.ImportPath, dep, table[reach].layer, p.ImportPath, dep)
			if to < from {
				fix = fmt.Sprintf("%s may import its own layer and %s or below; %s", p.ImportPath, table[reach].layer, fix)
			}
			problems = append(problems, fmt.Sprintf("%s (%s) imports %s (%s): %s", p.ImportPath, table[from].layer, dep, table[to].layer, fix))
		}
	}
	return problems
}

func TestLayers(t *testing.T) {
	pkgs := list(t, "")
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages of %s; is the test run inside the module?", len(pkgs), module)
	}
	for _, p := range check(pkgs) {
		t.Error(p)
	}
}

// TestCatchesUpwardImports adds code to the module through go list's
// overlay, without touching a file, and checks the checker reports exactly
// what was added.
func TestCatchesUpwardImports(t *testing.T) {
	root := moduleRoot(t)
	tests := []struct {
		name string
		file string // relative to the module root
		src  string
		want []string
	}{
		{"perception imports intelligence", "scene/zz_layers_overlay.go",
			"package scene\n\nimport _ \"" + module + "/llm\"\n",
			[]string{"scene (perception) imports llm (intelligence): move what scene needs from llm down to layer perception or below (into a leaf such as event, or as an interface scene defines and llm's types satisfy)"}},
		{"sim imports device", "sim/zz_layers_overlay.go",
			"package sim\n\nimport _ \"" + module + "/device\"\n",
			[]string{"sim (sim) imports device (device): sim may import its own layer and wire or below; move what sim needs from device down to layer wire or below (into a leaf such as event, or as an interface sim defines and device's types satisfy)"}},
		{"a package with no layer", "internal/unplaced/unplaced.go",
			"package unplaced\n",
			[]string{"internal/unplaced has no layer: add it to the row of its layer in the table in internal/layers/layers_test.go, and to docs/architecture.md with its role"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src.go")
			if err := os.WriteFile(src, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, tc.file): src}})
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "overlay.json")
			if err := os.WriteFile(file, overlay, 0o644); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, check(list(t, file))); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// docRow is a table line of docs/architecture.md: | N layer | `pkg` | role |
var docRow = regexp.MustCompile("^\\|\\s*(\\d+)\\s+(\\w+)\\s*\\|\\s*`([^`]+)`\\s*\\|\\s*(.*?)\\s*\\|$")

// TestDocMatches: docs/architecture.md lists every package of the table in
// its layer, each with a role, and nothing else.
func TestDocMatches(t *testing.T) {
	f, err := os.Open(filepath.Join(moduleRoot(t), "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want, got []string
	for i, row := range table {
		for _, p := range row.pkgs {
			want = append(want, fmt.Sprintf("%d %s %s", i, row.layer, p))
		}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := docRow.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		if m[4] == "" {
			t.Errorf("docs/architecture.md: %s has no role", m[3])
		}
		n, _ := strconv.Atoi(m[1])
		got = append(got, fmt.Sprintf("%d %s %s", n, m[2], m[3]))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("docs/architecture.md's table differs from the table in layers_test.go (-test +doc):\n%s", diff)
	}
}
