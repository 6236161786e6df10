package llm

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTokensCl100k(t *testing.T) {
	// Ids from OpenAI's tiktoken for cl100k_base.
	tests := []struct {
		text string
		ids  []int
	}{
		{"tiktoken is great!", []int{83, 1609, 5963, 374, 2294, 0}},
		{"hello world", []int{15339, 1917}},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got := TokenIDs(tt.text)
			if len(got) == 0 {
				got = nil
			}
			if d := cmp.Diff(tt.ids, got); d != "" {
				t.Errorf("TokenIDs(%q) (-want +got):\n%s", tt.text, d)
			}
			if n := Tokens(tt.text); n != len(tt.ids) {
				t.Errorf("Tokens(%q) = %d, want %d", tt.text, n, len(tt.ids))
			}
		})
	}
}

func TestTokensRoundTripAndConcurrency(t *testing.T) {
	texts := []string{
		"点击“搜索”，输入“耳机”，然后确认出现“结果”",
		`e12 button "Add to cart" [40,800,680,880] clickable`,
		"<|endoftext|> is counted as text",
		strings.Repeat("héllo wörld ", 200),
	}
	enc, err := bpe()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, s := range texts {
		ids := TokenIDs(s)
		if got := enc.Decode(ids); got != s {
			t.Errorf("decode(encode(%.30q)) = %.30q", s, got)
		}
		// Fewer tokens than bytes, more than zero: a BPE, not a byte count.
		if n := len(ids); n == 0 || n >= len(s) {
			t.Errorf("Tokens(%.30q) = %d for %d bytes", s, n, len(s))
		}
		for range 4 {
			wg.Go(func() {
				if got := Tokens(s); got != len(ids) {
					t.Errorf("concurrent Tokens(%.30q) = %d, want %d", s, got, len(ids))
				}
			})
		}
	}
	wg.Wait()
}

func TestMessageTokens(t *testing.T) {
	msgs := []Message{System("You are a planner."), User("tiktoken is great!")}
	want := 3 + 4 + Tokens("You are a planner.") + 4 + 6
	if got := MessageTokens(msgs); got != want {
		t.Errorf("MessageTokens = %d, want %d", got, want)
	}
}

func BenchmarkTokens(b *testing.B) {
	text := strings.Repeat(`e12 button "Add to cart" [40,800,680,880] clickable`+"\n", 100)
	Tokens("warm up")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Tokens(text)
	}
}
