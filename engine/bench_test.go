package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/internal/labtest"
	"github.com/apexagent/apex/sim/lab"
)

// BenchmarkStep runs a tap step (find, act, settle, screenshots, record)
// on the simulated phone with the shipped defaults, and reports the
// engine's own time per step: the step's wall time minus the time spent
// waiting on the device.
func BenchmarkStep(b *testing.B) {
	_, d := labtest.Android(b, lab.Options{})
	ctx := context.Background()
	if err := d.LaunchApp(ctx, "com.android.settings"); err != nil {
		b.Fatal(err)
	}
	var kept int
	s := engine.New(d, &engine.Options{Recorder: engine.RecorderFunc(func(context.Context, *engine.Record) error {
		kept++
		return nil
	})})
	defer s.Close()
	toggle := action.Locator{ID: "dark_mode"}
	open := s.Run(ctx, engine.Step{Call: action.Tap.MustCall(&action.TapParams{Locate: action.Locator{Text: "Display"}})})
	if open.Err != nil {
		b.Fatal(open.Err)
	}
	var own time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := s.Run(ctx, engine.Step{Call: action.Tap.MustCall(&action.TapParams{Locate: toggle})})
		if r.Err != nil {
			b.Fatal(r.Err)
		}
		own += r.Duration - r.DeviceTime - r.Waited
	}
	b.ReportMetric(float64(own.Microseconds())/1000/float64(b.N), "engine-ms/step")
	if kept != b.N+1 {
		b.Fatalf("recorded %d steps, ran %d", kept, b.N+1)
	}
}
