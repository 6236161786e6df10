package llm

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// corpusDumps returns the UI dumps of ../shared/corpus, found from the
// module root, or skips when the shared corpus is absent.
func corpusDumps(t *testing.T) []string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Skip("corpus: no go.mod above the test directory")
		}
		dir = filepath.Dir(dir)
	}
	corpus := filepath.Join(filepath.Dir(dir), "shared", "corpus")
	var files []string
	for _, sub := range []string{"android", "ios", "datasets"} {
		m, _ := filepath.Glob(filepath.Join(corpus, sub, "*.xml"))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skipf("corpus: no dumps in %s (the shared corpus sits next to the checkout); skipping", corpus)
	}
	return files
}

// Real UI dumps (English, Chinese, emoji, XML punctuation) give the same
// tokens as tiktoken-go. Each dump's first 4 KB are compared, to keep the
// slow reference within the time budget.
func TestTokensCorpus(t *testing.T) {
	ref := reference(t)
	for _, f := range corpusDumps(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 4<<10 {
			b = b[:4<<10]
			for !utf8.Valid(b) { // do not cut a rune
				b = b[:len(b)-1]
			}
		}
		s := string(b)
		if d := cmp.Diff(ref.EncodeOrdinary(s), TokenIDs(s)); d != "" {
			t.Errorf("%s (-tiktoken-go +ours):\n%s", filepath.Base(f), d)
		}
	}
}
