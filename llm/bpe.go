package llm

import (
	"fmt"
	"math"
	"unicode"
	"unicode/utf8"
)

// cl100k is OpenAI's cl100k_base byte-pair encoding: a pre-tokenizer
// written out by hand for the encoding's split pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// (a regexp engine with lookahead runs it ten times slower), then the
// usual lowest-rank-first merges over the ranks tiktoken-go-loader embeds.
// Tests check it token for token against tiktoken-go.
type cl100k struct {
	ranks map[string]int
}

func newCl100k(ranks map[string]int) (*cl100k, error) {
	if len(ranks) < 100000 {
		return nil, fmt.Errorf("llm: cl100k_base has %d ranks, want 100256", len(ranks))
	}
	return &cl100k{ranks: ranks}, nil
}

// encode appends text's token ids to ids.
func (e *cl100k) encode(text string, ids []int) []int {
	for i := 0; i < len(text); {
		n := splitLen(text[i:])
		ids = e.piece(text[i:i+n], ids)
		i += n
	}
	return ids
}

// count is len(encode(text)) without the slice.
func (e *cl100k) count(text string) int {
	n := 0
	var buf [64]int
	for i := 0; i < len(text); {
		k := splitLen(text[i:])
		p := text[i : i+k]
		if _, ok := e.ranks[p]; ok {
			n++
		} else {
			n += len(e.merge(p, buf[:0]))
		}
		i += k
	}
	return n
}

func (e *cl100k) piece(p string, ids []int) []int {
	if r, ok := e.ranks[p]; ok {
		return append(ids, r)
	}
	return e.merge(p, ids)
}

// merge is tiktoken's byte_pair_encode: start from single bytes and merge
// the adjacent pair of lowest rank until no pair has a rank. Each part
// keeps the rank of merging it with the next, so a merge recomputes two
// ranks instead of all of them.
func (e *cl100k) merge(p string, ids []int) []int {
	type part struct{ start, rank int }
	var small [34]part
	parts := small[:0]
	rank := func(i int) int {
		if i+2 < len(parts) {
			if r, ok := e.ranks[p[parts[i].start:parts[i+2].start]]; ok {
				return r
			}
		}
		return math.MaxInt
	}
	for i := 0; i <= len(p); i++ {
		parts = append(parts, part{i, math.MaxInt})
	}
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = rank(i)
	}
	for len(parts) > 2 {
		best, at := math.MaxInt, -1
		for i := 0; i+1 < len(parts); i++ {
			if parts[i].rank < best {
				best, at = parts[i].rank, i
			}
		}
		if at < 0 {
			break
		}
		parts = append(parts[:at+1], parts[at+2:]...)
		parts[at].rank = rank(at)
		if at > 0 {
			parts[at-1].rank = rank(at - 1)
		}
	}
	for i := 0; i+1 < len(parts); i++ {
		ids = append(ids, e.ranks[p[parts[i].start:parts[i+1].start]])
	}
	return ids
}

// splitLen is the byte length of the first piece of s (non-empty) under
// cl100k's split pattern, trying its alternatives in order.
func splitLen(s string) int {
	c, n := utf8.DecodeRuneInString(s)
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if c == '\'' && len(s) > 1 {
		for _, suf := range [...]string{"s", "t", "re", "ve", "m", "ll", "d"} {
			if len(s) > len(suf) && equalFoldASCII(s[1:1+len(suf)], suf) {
				return 1 + len(suf)
			}
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isL(c) {
		return n + runLen(s[n:], isL)
	}
	if c != '\r' && c != '\n' && !isN(c) {
		if c2, n2 := utf8.DecodeRuneInString(s[n:]); n < len(s) && isL(c2) {
			return n + n2 + runLen(s[n+n2:], isL)
		}
	}
	// \p{N}{1,3}
	if isN(c) {
		k := n
		for range 2 {
			c2, n2 := utf8.DecodeRuneInString(s[k:])
			if k >= len(s) || !isN(c2) {
				break
			}
			k += n2
		}
		return k
	}
	// ' '?[^\s\p{L}\p{N}]+[\r\n]*
	start := 0
	if c == ' ' {
		start = n
	}
	if k := runLen(s[start:], isPunct); k > 0 {
		k += start
		return k + runLen(s[k:], isNewline)
	}
	// \s*[\r\n]+ : up to and through the last newline of the space run.
	ws := runLen(s, unicode.IsSpace)
	if ws == 0 {
		// Not reached for valid UTF-8 (every rune is L, N, space or
		// punctuation); an invalid byte stands alone.
		return n
	}
	lastNL := -1
	for i := 0; i < ws; {
		r, rn := utf8.DecodeRuneInString(s[i:])
		if r == '\r' || r == '\n' {
			lastNL = i + rn
		}
		i += rn
	}
	if lastNL > 0 {
		return lastNL
	}
	// \s+(?!\S) then \s+: a space run before a non-space leaves its last
	// space to the next piece (" word"), unless it is a single space.
	if ws < len(s) {
		_, last := utf8.DecodeLastRuneInString(s[:ws])
		if ws-last > 0 {
			return ws - last
		}
	}
	return ws
}

func isL(r rune) bool { return unicode.IsLetter(r) }
func isN(r rune) bool { return unicode.IsNumber(r) }

func isNewline(r rune) bool { return r == '\r' || r == '\n' }

// isPunct is [^\s\p{L}\p{N}]: anything but space, letters and numbers
// (invalid UTF-8 decodes to U+FFFD, which counts here).
func isPunct(r rune) bool { return !unicode.IsSpace(r) && !isL(r) && !isN(r) }

// runLen is the byte length of the longest prefix of s whose runes satisfy f.
func runLen(s string, f func(rune) bool) int {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !f(r) {
			break
		}
		i += n
	}
	return i
}

func equalFoldASCII(a, b string) bool {
	for i := range len(a) {
		if a[i]|0x20 != b[i] {
			return false
		}
	}
	return true
}
