package tail_test

import (
	"testing"

	"github.com/apexagent/apex/internal/tail"
)

// TestBuffer keeps the last 10 bytes, however they were written.
func TestBuffer(t *testing.T) {
	for _, c := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"short", []string{"a", "b"}, "ab"},
		{"exactly max", []string{"0123456789"}, "0123456789"},
		{"one long write", []string{"abcdefghijklmnop"}, "ghijklmnop"},
		{"many writes", []string{"aaaa", "bbbb", "cccc", "dd"}, "bbbbccccdd"},
		{"a long write after a short", []string{"xy", "abcdefghijk"}, "bcdefghijk"},
		{"trimmed", []string{"  words\n"}, "words"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := tail.New(10)
			for _, w := range c.writes {
				if n, err := b.Write([]byte(w)); err != nil || n != len(w) {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := b.String(); got != c.want {
				t.Errorf("String() = %q, want %q", got, c.want)
			}
		})
	}
}
