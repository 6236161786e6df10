package scene

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			golden(t, filepath.Join("testdata", "golden", name+".txt"), b.String())
		})
	}
}
