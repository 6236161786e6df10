package runner_test

// Benchmarks of `apex run --sim` as the CLI does it: a fresh in-process
// simulated phone per run, driven over the device protocol (direct mode),
// every step recorded in a store. Figures are in bench/README.md; run them
// with bench/run.sh.

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/bench/benchtest"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/runner"
	"github.com/apexagent/apex/script"
	"github.com/apexagent/apex/sim/lab"
	"github.com/apexagent/apex/store"
)

// BenchmarkRunSim runs bench/twenty-steps.yaml and every example on a
// fresh simulated phone each time and reports, per script: the run's wall
// time, its step count, Apex's own overhead per step (the step's time minus
// the time spent in device calls, as the store records it) as a median
// over all steps and over the steps that act on the device, and the CPU
// this process (runner and simulated phone together) burnt per step.
func BenchmarkRunSim(b *testing.B) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil {
		b.Fatal(err)
	}
	type variant struct {
		file, name string
		settle     time.Duration
	}
	// The runner waits SettleInterval (5 ms by default) between the two
	// observations that show a settled screen; that wait counts as Apex's
	// time. The settle-1ms variant shows how much of the overhead it is.
	vs := []variant{{file: "../bench/twenty-steps.yaml"}, {file: "../bench/twenty-steps.yaml", name: "twenty-steps/settle-1ms", settle: time.Millisecond}}
	for _, f := range files {
		vs = append(vs, variant{file: f})
	}
	for _, v := range vs {
		file := v.file
		s, err := script.LoadFile(file, nil)
		if err != nil {
			b.Fatal(err)
		}
		name := v.name
		if name == "" {
			name = strings.TrimSuffix(filepath.Base(file), ".yaml")
		}
		b.Run(name, func(b *testing.B) {
			var all, acting, wall []time.Duration
			var cpu time.Duration
			steps := 0
			for b.Loop() {
				c0 := benchtest.CPU()
				res, st := runOnce(b, s, v.settle)
				cpu += benchtest.CPU() - c0
				if res.Status != "passed" {
					b.Fatalf("%s: %s: %s", file, res.Status, res.Reason)
				}
				b.StopTimer()
				wall = append(wall, res.Duration)
				recs, err := st.Steps(context.Background(), res.Run.ID)
				if err != nil {
					b.Fatal(err)
				}
				steps = len(recs)
				for _, r := range recs {
					own := r.Duration - r.DeviceTime
					all = append(all, own)
					if r.DeviceTime > 0 {
						acting = append(acting, own)
					}
				}
				b.StartTimer()
			}
			b.ReportMetric(benchtest.Median(wall).Seconds(), "s/run-median")
			b.ReportMetric(float64(steps), "steps")
			b.ReportMetric(ms(benchtest.Median(all)), "overhead-ms-median")
			b.ReportMetric(ms(benchtest.Median(acting)), "acting-overhead-ms-median")
			b.ReportMetric(ms(cpu)/float64(steps*len(wall)), "cpu-ms/step")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// runOnce runs s the way `apex run --sim` does (settle 0: the default gap): one simulated phone started
// in this process, the Android driver in direct mode, a fresh store.
func runOnce(b *testing.B, s *script.Script, settle time.Duration) (*runner.Result, *store.Store) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
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
	res, err := runner.Run(ctx, d, s, &runner.Options{Store: st, Device: "sim/" + l.Devices()[0].Serial, Perception: perceive.Options{Timing: perceive.Timing{SettleInterval: settle}}})
	if err != nil {
		b.Fatal(err)
	}
	return res, st
}
