package yamlerr

import (
	"testing"

	"gopkg.in/yaml.v3"
)

func TestLocate(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		line int
	}{
		{"step indented less than its list", "sim:\n  launch: com.apex.shop\ntasks:\n  - name: x\n    flow:\n      - tap: Search\n     - tap: Foo\n", 7},
		{"step indented under the one before", "sim: {}\ntasks:\n  - name: x\n    flow:\n      - tap: Search\n        - tap: Foo\n", 6},
		{"key at a stray indent", "model:\n  name: gpt-4o\n   base_url: http://x\n", 3},
		{"unclosed quote", "model:\n  name: \"gpt\n", 2},
		{"tab indent", "model:\n\tname: gpt\n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n yaml.Node
			err := yaml.Unmarshal([]byte(tt.doc), &n)
			if err == nil {
				t.Fatal("the document parses")
			}
			line, msg := Locate([]byte(tt.doc), err)
			if line != tt.line || msg == "" {
				t.Errorf("Locate = line %d %q; want line %d (yaml said %v)", line, msg, tt.line, err)
			}
		})
	}
}

// FuzzLocate: whatever the document, Locate names a line of it (or none)
// and never panics.
func FuzzLocate(f *testing.F) {
	f.Add("a:\n  b: 1\n   c: 2\n")
	f.Add("- [\n")
	f.Fuzz(func(t *testing.T, doc string) {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(doc), &n)
		if err == nil {
			return
		}
		line, _ := Locate([]byte(doc), err)
		if lines := len(splitLines(doc)); line < 0 || line > lines+1 {
			t.Fatalf("line %d of a %d-line document", line, lines)
		}
	})
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := range s {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
