package runner

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/apexagent/apex/script"
	"github.com/apexagent/apex/store"
)

// yamlBlock is a fenced YAML example of a doc.
var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestDocExamples runs every script example of docs/scripts.md (a block
// with a sim: target) on a simulated phone, once per data row; the flow
// and suite files it shows are examples/suite's, run by the cli tests.
func TestDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../docs/scripts.md")
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for i, m := range yamlBlock.FindAllStringSubmatch(string(doc), -1) {
		src := m[1]
		if !strings.Contains(src, "\nsim:") && !strings.HasPrefix(src, "sim:") {
			continue
		}
		name := fmt.Sprintf("../docs/example-%d.yaml", i+1)
		s, err := script.Load([]byte(src), name, &script.Options{LookupEnv: func(string) (string, bool) { return "", false }, Files: true})
		if err != nil {
			t.Errorf("example %d does not load: %v\n%s", i+1, err, src)
			continue
		}
		rows := []map[string]string{nil}
		if s.Data != nil {
			rows = rows[:0]
			for _, r := range s.Data.Rows {
				rows = append(rows, r.Values)
			}
		}
		for _, row := range rows {
			res, _ := runOnTree(t, s, 0, row)
			if res.Status != store.StatusPassed {
				t.Errorf("example %d (row %v): %s: %s\n%s", i+1, row, res.Status, res.Reason, src)
			}
			ran++
		}
	}
	if ran < 6 {
		t.Errorf("ran %d examples; the doc shows more", ran)
	}
}
