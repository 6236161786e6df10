package benchtest

import (
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []time.Duration
		want time.Duration
	}{{nil, 0}, {[]time.Duration{5}, 5}, {[]time.Duration{9, 1, 5}, 5}, {[]time.Duration{4, 1, 3, 2}, 3}} {
		if got := Median(tt.in); got != tt.want {
			t.Errorf("Median(%v) = %v; want %v", tt.in, got, tt.want)
		}
	}
}

func TestSamplerTimesCPU(t *testing.T) {
	var s Sampler
	s.Time(func() {
		// Burn a little CPU so the process's rusage moves.
		x := 0
		for i := range 20_000_000 {
			x ^= i
		}
		_ = x
	})
	if s.Len() != 1 || s.Median() <= 0 {
		t.Fatalf("samples %d, median %v; want 1 sample with a positive median", s.Len(), s.Median())
	}
	if s.cpu <= 0 {
		t.Errorf("CPU time %v after a busy loop; want > 0", s.cpu)
	}
}
