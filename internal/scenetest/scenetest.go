// Package scenetest gives tests the Scene of a simulated app's screen,
// read straight from a simulated phone (no protocol in between).
package scenetest

import (
	"testing"

	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/sim"
)

// SimScene launches pkg on a simulated phone (seed 2: the Shop without
// its sale popup) and returns the Scene of its first screen.
func SimScene(t testing.TB, pkg string) *scene.Scene {
	t.Helper()
	p, err := sim.NewPhone(sim.Options{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Launch(pkg); err != nil {
		t.Fatal(err)
	}
	return Of(t, p)
}

// Of is the Scene of what p shows now.
func Of(t testing.TB, p *sim.Phone) *scene.Scene {
	t.Helper()
	xml, err := p.DumpUI()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scene.FromSource(xml, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
