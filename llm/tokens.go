package llm

import (
	"sync"

	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding is the BPE Tokens counts with: OpenAI's cl100k_base, whose
// ranks are compiled into the binary (nothing is downloaded).
const Encoding = "cl100k_base"

var bpe = sync.OnceValues(func() (*cl100k, error) {
	ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(Encoding + ".tiktoken")
	if err != nil {
		return nil, err
	}
	return newCl100k(ranks)
})

func encoder() *cl100k {
	enc, err := bpe()
	if err != nil {
		// The ranks are embedded, so this is a broken build, not bad input.
		panic("llm: cl100k_base ranks failed to load: " + err.Error())
	}
	return enc
}

// Tokens counts text's tokens in cl100k_base, for prompt budgets. Special
// token strings such as <|endoftext|> count as ordinary text. It is safe
// for concurrent use; the first call loads the ranks (a few hundred ms).
func Tokens(text string) int {
	if text == "" {
		return 0
	}
	return encoder().count(text)
}

// TokenIDs returns text's cl100k_base token ids.
func TokenIDs(text string) []int {
	return encoder().encode(text, nil)
}

// MessageTokens counts the tokens of a prompt as chat models bill it:
// each message's text plus about four tokens of framing, its images as
// ImageTokens estimates them, plus three for the reply's priming.
func MessageTokens(msgs []Message) int {
	n := 3
	for _, m := range msgs {
		n += 4 + Tokens(m.Text)
		for _, img := range m.Images {
			n += ImageTokens(img)
		}
		for _, tc := range m.ToolCalls {
			n += Tokens(tc.Name) + Tokens(string(tc.Args))
		}
	}
	return n
}
