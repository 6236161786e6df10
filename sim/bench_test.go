package sim

import (
	"runtime"
	"testing"
)

func benchPhone(b *testing.B) *Phone {
	b.Helper()
	p, err := NewPhone(Options{Seed: 1, Clock: newFakeClock()})
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Launch("com.apex.shop"); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkScreenshot measures a full render and PNG encode of the Shop's
// results list (the cache is dropped every time).
func BenchmarkScreenshot(b *testing.B) {
	p := benchPhone(b)
	var size int
	for b.Loop() {
		p.mu.Lock()
		p.shot = shotCache{}
		p.mu.Unlock()
		data, err := p.Screenshot()
		if err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.ReportMetric(float64(size)/1024, "KiB/png")
}

// BenchmarkScreenshotCached is a screenshot of an unchanged screen.
func BenchmarkScreenshotCached(b *testing.B) {
	p := benchPhone(b)
	for b.Loop() {
		if _, err := p.Screenshot(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDumpUI(b *testing.B) {
	p := benchPhone(b)
	var size int
	for b.Loop() {
		data, err := p.DumpUI()
		if err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.ReportMetric(float64(size)/1024, "KiB/dump")
}

func BenchmarkTap(b *testing.B) {
	p := benchPhone(b)
	for b.Loop() {
		p.Tap(540, 400) // the search field: focus, no navigation
		p.KeyEvent(KeycodeEscape)
	}
}

// BenchmarkPhoneMemory reports the heap each phone keeps, measured over 50
// phones that each launched the Shop and took a screenshot and a dump.
func BenchmarkPhoneMemory(b *testing.B) {
	const n = 50
	BuiltinApps() // parsed specs are shared: load them before measuring
	warm := benchPhone(b)
	warm.Screenshot()
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		phones := make([]*Phone, n)
		for i := range phones {
			phones[i] = benchPhone(b)
			if _, err := phones[i].Screenshot(); err != nil {
				b.Fatal(err)
			}
			if _, err := phones[i].DumpUI(); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n/(1<<20), "MiB/phone")
		runtime.KeepAlive(phones)
	}
}
