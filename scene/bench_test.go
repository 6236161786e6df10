package scene

import (
	"os"
	"testing"
)

// BenchmarkScene measures what an agent pays per observation: parse,
// prune and render Text, for the largest corpus dump, for the whole
// corpus, and for a generated megabyte-scale dump.
func BenchmarkScene(b *testing.B) {
	files := corpusFiles(b)
	var largest []byte
	var all [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, data)
		if len(data) > len(largest) {
			largest = data
		}
	}
	run := func(b *testing.B, inputs ...[]byte) {
		total := 0
		for _, in := range inputs {
			total += len(in)
		}
		b.SetBytes(int64(total))
		b.ReportAllocs()
		for b.Loop() {
			for _, in := range inputs {
				s, err := FromSource(in, nil)
				if err != nil {
					b.Fatal(err)
				}
				_ = s.Text()
			}
		}
	}
	b.Run("largest", func(b *testing.B) { run(b, largest) })
	b.Run("corpus", func(b *testing.B) { run(b, all...) })
	b.Run("generated-2MB", func(b *testing.B) { run(b, genUIAutomator(1500, 20)) })
}

// BenchmarkParse isolates the XML pass on the largest corpus dump.
func BenchmarkParse(b *testing.B) {
	var largest []byte
	for _, f := range corpusFiles(b) {
		if data, err := os.ReadFile(f); err == nil && len(data) > len(largest) {
			largest = data
		}
	}
	b.SetBytes(int64(len(largest)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(largest); err != nil {
			b.Fatal(err)
		}
	}
}
