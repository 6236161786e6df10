package agent

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apexagent/apex/internal/scenetest"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/sim"
	"github.com/google/go-cmp/cmp"
)

// stepClock is a simulated phone's clock that moves only when told.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestScreenSummaryGolden pins the summary of screens of every built-in
// app, reached the way a task reaches them: app, title, key state, in at
// most 50 characters (-update rewrites the golden file).
func TestScreenSummaryGolden(t *testing.T) {
	type visit struct {
		name string
		pkg  string // "" stays on the launcher
		seed int64
		taps []string // texts or descriptions tapped in turn
		wait time.Duration
	}
	visits := []visit{
		{name: "launcher"},
		{name: "shop", pkg: "com.apex.shop", seed: 2},
		{name: "shop sale popup", pkg: "com.apex.shop", seed: 1, wait: 2 * time.Second},
		{name: "shop product", pkg: "com.apex.shop", seed: 2, taps: []string{"Premium Wireless Earbuds · $118.99 ★ 3.1 (4392)"}},
		{name: "shop cart", pkg: "com.apex.shop", seed: 2, taps: []string{"Premium Wireless Earbuds · $118.99 ★ 3.1 (4392)", "Buy now"}},
		{name: "settings", pkg: "com.apex.settings", seed: 2},
		{name: "settings network", pkg: "com.apex.settings", seed: 2, taps: []string{"Network & internet · Wi-Fi, airplane mode"}},
		{name: "settings about", pkg: "com.apex.settings", seed: 2, taps: []string{"About phone · Apex Sim"}},
		{name: "login", pkg: "com.apex.login", seed: 2},
		{name: "login focused", pkg: "com.apex.login", seed: 2, taps: []string{"Username"}},
		{name: "notes", pkg: "com.apex.notes", seed: 2},
		{name: "notes new", pkg: "com.apex.notes", seed: 2, taps: []string{"Add note"}},
		{name: "shopping list", pkg: "com.apex.zhongwen", seed: 2},
	}
	var got strings.Builder
	for _, v := range visits {
		clk := &stepClock{now: time.Date(2026, 12, 1, 9, 41, 0, 0, time.UTC)}
		p, err := sim.NewPhone(sim.Options{Seed: v.seed, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		if v.pkg != "" {
			if err := p.Launch(v.pkg); err != nil {
				t.Fatal(err)
			}
		}
		clk.add(v.wait)
		sc := scenetest.Of(t, p)
		for _, text := range v.taps {
			e, ok := findLabel(sc, text)
			if !ok {
				t.Fatalf("%s: no %q on screen:\n%s", v.name, text, sc.Text())
			}
			x, y := e.Bounds.Center()
			p.Tap(x, y)
			clk.add(time.Second)
			sc = scenetest.Of(t, p)
		}
		s := screenSummary(sc)
		if n := utf8.RuneCountInString(s); n == 0 || n > summaryLen {
			t.Errorf("%s: summary %q has %d characters", v.name, s, n)
		}
		got.WriteString(v.name + ": " + s + "\n")
	}
	file := filepath.Join("testdata", "summaries.golden")
	if *update {
		if err := os.WriteFile(file, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if d := cmp.Diff(string(want), got.String()); d != "" {
		t.Errorf("summaries changed (-want +got; -update to accept):\n%s", d)
	}
}

func findLabel(sc *scene.Scene, text string) (scene.Element, bool) {
	for _, e := range sc.Elements {
		if e.Text == text || e.Desc == text {
			return e, true
		}
	}
	return scene.Element{}, false
}
