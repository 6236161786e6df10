// Package benchtest gives Apex's benchmarks medians and CPU time per call:
// the floors in the issues are medians, and on a machine shared with other
// builds the CPU a call burns is steadier than its wall time.
package benchtest

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Sampler collects the wall and CPU time of timed calls. It is not safe
// for concurrent use.
type Sampler struct {
	wall []time.Duration
	cpu  time.Duration
}

// Time runs f and records its wall time and the CPU time this process
// spent meanwhile (every goroutine's, user and system).
func (s *Sampler) Time(f func()) time.Duration {
	c0 := CPU()
	t0 := time.Now()
	f()
	d := time.Since(t0)
	s.cpu += CPU() - c0
	s.wall = append(s.wall, d)
	return d
}

// Add records a wall time measured elsewhere (no CPU time).
func (s *Sampler) Add(d time.Duration) { s.wall = append(s.wall, d) }

// Median is the median wall time so far (0 with no samples).
func (s *Sampler) Median() time.Duration { return Median(s.wall) }

// Len is the number of samples.
func (s *Sampler) Len() int { return len(s.wall) }

// Report adds the median wall time ("ms-median") and, when calls were timed
// with Time, the mean CPU time per call ("cpu-ms/call") to b's results,
// each unit prefixed by prefix when it is not empty.
func (s *Sampler) Report(b *testing.B, prefix string) {
	b.Helper()
	if len(s.wall) == 0 {
		return
	}
	if prefix != "" {
		prefix += "-"
	}
	b.ReportMetric(ms(s.Median()), prefix+"ms-median")
	if s.cpu > 0 {
		b.ReportMetric(ms(s.cpu)/float64(len(s.wall)), prefix+"cpu-ms/call")
	}
}

// Median returns the median of ds (0 for none); ds is sorted in place.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// CPU is the user plus system CPU time this process has used.
func CPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ProcStatus reads a size field such as "VmRSS" or "VmHWM" from
// /proc/self/status, in bytes; it skips b on systems without /proc.
func ProcStatus(b *testing.B, field string) int64 {
	b.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc/self/status (not Linux?): %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), field+":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		if err != nil {
			b.Fatalf("%s %q: %v", field, v, err)
		}
		return kb << 10
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}
