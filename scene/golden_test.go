package scene

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// ownDumps are the UI sources the project made itself: the examples and
// testdata/*.xml. Corpus dumps never get goldens.
func ownDumps(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../examples/*.xml", "testdata/*.xml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 4 {
		t.Fatalf("found %d own dumps (%v); want examples/*.xml and testdata/*.xml", len(files), files)
	}
	return files
}

// TestGolden renders each own dump at the default budget and at a tight
// one and compares with testdata/golden/<name>.txt (go test -update
// rewrites them).
func TestGolden(t *testing.T) {
	for _, f := range ownDumps(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".xml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, budget := range []int{DefaultBudget, 600} {
				s, err := FromSource(data, &Options{Budget: budget})
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "## budget %d: %+v fingerprint %s\n%s", budget, s.Stats, s.Fingerprint(), s.Text())
			}
			got := b.String()
			golden := filepath.Join("testdata", "golden", name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./scene -run TestGolden -update to create it)", err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("%s (-want +got):\n%s", golden, d)
			}
		})
	}
}
