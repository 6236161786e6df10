package report_test

// The size of a real 500-step run's report: the steps run on the simulated
// phone (the way `apex run --sim` runs them), so screenshots, Scenes and
// timings are real, not synthetic. Figures are in bench/README.md; run it
// with bench/run.sh.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/report"
	"github.com/apexagent/apex/runner"
	"github.com/apexagent/apex/script"
	"github.com/apexagent/apex/sim/lab"
	"github.com/apexagent/apex/store"
)

// fiveHundredSteps is a script of exactly 500 steps on the built-in
// Settings app: launch, open Network & internet, 124 rounds of Wi-Fi off
// and on (each a tap and an assert, twice), back, and an assert.
func fiveHundredSteps() string {
	var sb strings.Builder
	sb.WriteString("sim:\n  launch: com.android.settings\ntasks:\n  - name: Wi-Fi off and on, 124 times\n    flow:\n")
	sb.WriteString("      - tap: Network & internet\n")
	for range 124 {
		sb.WriteString("      - tap: {id: wifi}\n      - assert: {notChecked: {id: wifi}}\n")
		sb.WriteString("      - tap: {id: wifi}\n      - assert: {checked: {id: wifi}}\n")
	}
	sb.WriteString("      - back\n      - assert: {exists: Network & internet}\n")
	return sb.String()
}

// BenchmarkLongRunReport runs the 500-step script, writes its report and
// reports the HTML's size, the images it references (written as files next
// to it) and how long writing the report took.
func BenchmarkLongRunReport(b *testing.B) {
	s, err := script.Load([]byte(fiveHundredSteps()), "five-hundred-steps.yaml", nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		st, id := runSim(b, s)
		b.StartTimer()
		t0 := time.Now()
		path, err := report.Write(context.Background(), st, id)
		took := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		n, size := images(b, filepath.Dir(path))
		b.ReportMetric(float64(fi.Size())/(1<<20), "MiB-html")
		b.ReportMetric(float64(size)/(1<<20), "MiB-images")
		b.ReportMetric(float64(n), "images")
		b.ReportMetric(took.Seconds(), "s-write")
		b.Logf("500-step report %s: %d bytes of HTML, %d images of %d bytes, written in %v",
			path, fi.Size(), n, size, took.Round(time.Millisecond))

		// The same run as one standalone file (apex run --report inline).
		t0 = time.Now()
		_, page, err := report.Render(context.Background(), st, id, &report.Options{Inline: true})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(page))/(1<<20), "MiB-inline")
		b.ReportMetric(time.Since(t0).Seconds(), "s-inline")
		if len(page) > maxInlineReport {
			b.Errorf("500-step inline report: %d bytes, over %d", len(page), maxInlineReport)
		}
		b.StartTimer()
	}
}

// maxInlineReport is the most a 500-step inline report may weigh (issue 16).
const maxInlineReport = 25 << 20

// runSim runs s on a fresh simulated phone into a fresh store.
func runSim(b *testing.B, s *script.Script) (*store.Store, string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	l, err := lab.Start(context.WithoutCancel(ctx), lab.Options{Android: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	d, err := android.OpenDirect(ctx, l.Devices()[0].Addr, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	st, err := store.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	res, err := runner.Run(ctx, d, s, &runner.Options{Store: st, Device: "sim/" + l.Devices()[0].Serial})
	if err != nil {
		b.Fatal(err)
	}
	if res.Status != "passed" || res.Steps != 500 {
		b.Fatalf("500-step run: %s after %d steps: %s", res.Status, res.Steps, res.Reason)
	}
	return st, res.Run.ID
}

// images counts the PNG files under dir and their total size.
func images(b *testing.B, dir string) (n int, size int64) {
	b.Helper()
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || filepath.Ext(path) != ".png" {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		n++
		size += fi.Size()
		return nil
	})
	if err != nil {
		b.Fatal(fmt.Errorf("count the report's images: %w", err))
	}
	return n, size
}
