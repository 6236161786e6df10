package llm

import (
	"strings"
	"sync"
	"testing"

	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
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
	ref := reference(t)
	var wg sync.WaitGroup
	for _, s := range texts {
		ids := TokenIDs(s)
		if got := ref.Decode(ids); got != s {
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

// reference is tiktoken-go's cl100k_base (a regexp2 port of OpenAI's
// tiktoken) on the same embedded ranks.
func reference(t testing.TB) *tiktoken.Tiktoken {
	t.Helper()
	refOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		refEnc, refErr = tiktoken.GetEncoding(Encoding)
	})
	if refErr != nil {
		t.Fatal(refErr)
	}
	return refEnc
}

var (
	refOnce sync.Once
	refEnc  *tiktoken.Tiktoken
	refErr  error
)

// splitCases exercise every alternative of the split pattern.
var splitCases = []string{
	"tiktoken is great!", "hello world", "I'm sure they'll say you've WON'T 'S 'Re",
	"  two spaces", "trailing spaces   ", "tabs\tand\nnewlines\r\n\r\nagain", "   \n\n  indented\n",
	"numbers 1234567 3.14159 ١٢٣٤ ²³", "(parens) [brackets] {braces} -> => :: ...", " !!! ?? \n\n",
	"点击“搜索”，输入“耳机”，然后确认出现“结果”", "emoji 👍🏽 and ZWJ 👩‍💻 family", "nbsp\u00a0here and\u3000ideographic",
	"e12 button \"Add to cart\" [40,800,680,880] clickable", "mixedCase camelCase snake_case kebab-case",
	"\t\tcode();\n\treturn x + 1;\n", "Ünïcödé çàfé naïve", "'", "''s", " ", "\n", "a", "€100", "x\u0085y",
	strings.Repeat("=", 40) + " " + strings.Repeat("-", 100),
}

func TestTokensMatchTiktoken(t *testing.T) {
	ref := reference(t)
	for _, s := range splitCases {
		want := ref.EncodeOrdinary(s)
		got := TokenIDs(s)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("TokenIDs(%q) (-tiktoken-go +ours):\n%s", s, d)
		}
		if n := Tokens(s); n != len(want) {
			t.Errorf("Tokens(%q) = %d, want %d", s, n, len(want))
		}
	}
}

func FuzzTokens(f *testing.F) {
	for _, s := range splitCases {
		f.Add(s)
	}
	ref := reference(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			// regexp2 reads invalid bytes as U+FFFD; prompts are text.
			return
		}
		want, got := ref.EncodeOrdinary(s), TokenIDs(s)
		if len(want) == 0 {
			want = nil
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("TokenIDs(%q) (-tiktoken-go +ours):\n%s", s, d)
		}
	})
}

func TestMessageTokens(t *testing.T) {
	msgs := []Message{System("You are a planner."), User("tiktoken is great!")}
	want := 3 + 4 + Tokens("You are a planner.") + 4 + 6
	if got := MessageTokens(msgs); got != want {
		t.Errorf("MessageTokens = %d, want %d", got, want)
	}
}

var benchText = strings.Repeat(`e12 button "Add to cart" [40,800,680,880] clickable`+"\n", 50) +
	strings.Repeat("点击“搜索”，输入“耳机”，然后确认出现“结果”。", 20)

func BenchmarkTokens(b *testing.B) {
	Tokens("warm up")
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		Tokens(benchText)
	}
}

// BenchmarkTokensTiktokenGo is the same text through tiktoken-go, for scale.
func BenchmarkTokensTiktokenGo(b *testing.B) {
	ref := reference(b)
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		ref.EncodeOrdinary(benchText)
	}
}

// BenchmarkTokenizerLoad is what the first Tokens call pays: reading the
// embedded ranks and building the BPE.
func BenchmarkTokenizerLoad(b *testing.B) {
	for b.Loop() {
		ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe("cl100k_base.tiktoken")
		if err != nil || len(ranks) < 100000 {
			b.Fatalf("%d ranks, %v", len(ranks), err)
		}
		if _, err := newCl100k(ranks); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTokensLongRun(b *testing.B) {
	text := strings.Repeat("=", 5000) + strings.Repeat(" ", 5000) + "x"
	want := len(reference(b).EncodeOrdinary(text))
	if got := Tokens(text); got != want {
		b.Fatalf("Tokens = %d, want %d", got, want)
	}
	for b.Loop() {
		Tokens(text)
	}
}
