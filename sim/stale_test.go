package sim

import (
	"bytes"
	"os"
	"testing"
)

// arcadePhone opens the Arcade example app (examples/apps/arcade.yaml),
// whose board is a canvas holding buttons that exist only in pixels.
func arcadePhone(t *testing.T) *Phone {
	t.Helper()
	data, err := os.ReadFile("../examples/apps/arcade.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := ParseApp(data, "arcade.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPhone(Options{Apps: []*AppSpec{spec}, Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Launch("com.apex.arcade"); err != nil {
		t.Fatal(err)
	}
	return p
}

// drawn returns the view showing text, found in the layout as the pixels
// show it (the tree may not have it).
func drawn(t *testing.T, p *Phone, text string) *view {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var found *view
	p.layout().app.walk(func(v *view) bool {
		if v.text == text {
			found = v
			return false
		}
		return true
	})
	if found == nil {
		t.Fatalf("nothing drawn with text %q", text)
	}
	return found
}

func TestCanvasButtonsOnlyInPixels(t *testing.T) {
	p := arcadePhone(t)
	tapOn(t, p, "Play")
	d := dumpOf(t, p)
	if d.find("Start game") != nil || d.find("start") != nil || d.find("Pick a level") != nil {
		t.Fatalf("canvas content leaked into the tree: %s", d.texts())
	}
	d.must("board") // the canvas itself is one node
	v := drawn(t, p, "Start game")
	if !v.noNode {
		t.Error("canvas button is not marked noNode")
	}
	x, y := (v.r.Min.X+v.r.Max.X)/2, (v.r.Min.Y+v.r.Max.Y)/2
	p.Tap(x, y)
	if _, act := p.Foreground(); dumpOf(t, p).find("Game") == nil {
		t.Fatalf("tap on the drawn Start game at (%d,%d) did not open the game (activity %s): %s", x, y, act, dumpOf(t, p).texts())
	}
	st, err := p.State("com.apex.arcade")
	if err != nil || st["games"] != float64(1) && st["games"] != 1 {
		t.Errorf("games = %v (%v), want 1", st["games"], err)
	}
}

func TestStaleTreeMode(t *testing.T) {
	p := arcadePhone(t)
	home, _ := p.DumpUI()
	shotHome, _ := p.Screenshot()
	p.SetStaleTree(true)
	if !p.StaleTree() {
		t.Fatal("StaleTree() false after SetStaleTree(true)")
	}
	tapOn(t, p, "Play")
	stale, _ := p.DumpUI()
	shotBoard, _ := p.Screenshot()
	if !bytes.Equal(stale, home) {
		t.Errorf("after navigation the stale tree changed:\n%s", stale)
	}
	if bytes.Equal(shotHome, shotBoard) {
		t.Error("the screenshot did not change: it must show the truth")
	}
	// Navigating back to the kept screen makes the tree fresh again.
	p.KeyEvent(KeycodeBack)
	tapOn(t, p, "Word wall")
	if d := dumpOf(t, p); d.find("wall") != nil {
		t.Errorf("stale mode showed the new screen's tree: %s", d.texts())
	}
	p.SetStaleTree(false)
	if d := dumpOf(t, p); d.find("wall") == nil {
		t.Errorf("with stale mode off the tree still lags: %s", d.texts())
	}
}
