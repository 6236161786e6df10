package ios_test

import (
	"context"
	"testing"

	"github.com/apexagent/apex/bench/benchtest"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/devicetest"
	"github.com/apexagent/apex/device/ios"
	"github.com/apexagent/apex/scene"
)

// BenchmarkSourceScreenshot is one observation of the simulated iPhone as
// the runner makes it: Source then Screenshot, each time of a screen
// changed (untimed) by a tap on the conformance app's counter.
func BenchmarkSourceScreenshot(b *testing.B) {
	dev := startLab(b)
	d := openLab(b, dev, nil)
	cx := ctx(b)
	if err := d.LaunchApp(cx, devicetest.App); err != nil {
		b.Fatal(err)
	}
	counter := counterPoint(b, d)
	for _, what := range []string{"Source+Screenshot", "Source", "Screenshot"} {
		b.Run(what, func(b *testing.B) {
			var s benchtest.Sampler
			var err error
			for b.Loop() {
				b.StopTimer()
				if err := d.Tap(cx, counter); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				s.Time(func() { err = observe(cx, d, what) })
				if err != nil {
					b.Fatal(err)
				}
			}
			s.Report(b, "")
		})
	}
}

func observe(ctx context.Context, d *ios.Driver, what string) error {
	if what != "Screenshot" {
		if _, err := d.Source(ctx); err != nil {
			return err
		}
	}
	if what != "Source" {
		_, err := d.Screenshot(ctx)
		return err
	}
	return nil
}

func counterPoint(b *testing.B, d *ios.Driver) device.Point {
	src, err := d.Source(ctx(b))
	if err != nil {
		b.Fatal(err)
	}
	tr, err := scene.Parse(src.Data)
	if err != nil {
		b.Fatal(err)
	}
	var find func(n *scene.Node) *scene.Node
	find = func(n *scene.Node) *scene.Node {
		if n.ResourceID == "counter" {
			return n
		}
		for _, c := range n.Children {
			if f := find(c); f != nil {
				return f
			}
		}
		return nil
	}
	n := find(tr.Root)
	if n == nil {
		b.Fatal("no counter on the conformance app's screen")
	}
	x, y := n.Bounds.Center()
	return device.Point{X: x, Y: y}
}

// BenchmarkScaleSource is the cost of turning a source's points into
// pixels, on the simulated iPhone's conformance screen.
func BenchmarkScaleSource(b *testing.B) {
	dev := startLab(b)
	d := openLab(b, dev, nil)
	if err := d.LaunchApp(ctx(b), devicetest.App); err != nil {
		b.Fatal(err)
	}
	raw, err := d.Client().Source(ctx(b))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := ios.ScaleSource(raw, 3); err != nil {
			b.Fatal(err)
		}
	}
}
