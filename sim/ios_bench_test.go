package sim

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/apexagent/apex/bench/benchtest"
)

// BenchmarkPNGEncoders encodes one frame of the iPhone's Shop list with
// image/png (BestSpeed, adaptive filters) and with encodeFlat, which both
// faces now use.
func BenchmarkPNGEncoders(b *testing.B) {
	p, err := NewPhone(Options{Seed: 1, Clock: newFakeClock(), Platform: PlatformIOS})
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Launch("com.apex.shop"); err != nil {
		b.Fatal(err)
	}
	frame, err := p.Frame()
	if err != nil {
		b.Fatal(err)
	}
	for _, enc := range []struct {
		name string
		fn   func(*bytes.Buffer) error
	}{
		{"image-png", func(w *bytes.Buffer) error { return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, frame) }},
		{"flat", func(w *bytes.Buffer) error { return encodeFlat(w, frame) }},
	} {
		b.Run(enc.name, func(b *testing.B) {
			var buf bytes.Buffer
			var s benchtest.Sampler
			for b.Loop() {
				buf.Reset()
				s.Time(func() {
					if err := enc.fn(&buf); err != nil {
						b.Fatal(err)
					}
				})
			}
			s.Report(b, "")
			b.ReportMetric(float64(buf.Len())/1024, "KiB/png")
		})
	}
}
