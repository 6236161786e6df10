package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/ocr"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/sim/lab"
)

// TestGoalOnPixelOnlyButton: the Arcade's "Start game" exists only in the
// screenshot (a canvas); the runtime's observations fuse OCR, so a goal
// that names it runs without a model, and the tap starts a game. With OCR
// off the same goal cannot find it.
func TestGoalOnPixelOnlyButton(t *testing.T) {
	tess, err := ocr.NewTesseract(context.Background(), nil)
	if err != nil {
		t.Skipf("tesseract unavailable: %v", err)
	}
	defer tess.Close()
	for _, mode := range []perceive.Mode{perceive.Auto, perceive.Off} {
		name := map[perceive.Mode]string{perceive.Auto: "ocr auto", perceive.Off: "ocr off"}[mode]
		t.Run(name, func(t *testing.T) {
			p := startPhoneWith(t, lab.Options{Android: 1, AppFiles: []string{"../examples/apps/arcade.yaml"}})
			dev, d := p.dev, p.drv
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := d.LaunchApp(ctx, "com.apex.arcade"); err != nil {
				t.Fatal(err)
			}
			rt, err := agent.New(agent.Config{Perception: perceive.Options{Engine: tess, Mode: mode}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := rt.Act(ctx, agent.Task{Goal: `tap "Play", tap "Start game", then check "Level one" exists`, Driver: d})
			if err != nil {
				t.Fatal(err)
			}
			st, err := dev.Phone.State("com.apex.arcade")
			if err != nil {
				t.Fatal(err)
			}
			started := st["games"] == 1.0 || st["games"] == 1
			if mode == perceive.Off {
				if res.Status == agent.Done || started {
					t.Errorf("with OCR off the goal ended %s (games %v): it cannot see the button", res.Status, st["games"])
				}
				return
			}
			if res.Status != agent.Done || !started {
				t.Errorf("goal ended %s: %s; games = %v, want a started game", res.Status, res.Summary, st["games"])
			}
		})
	}
}

// TestGoalOnLabelInsideImage: the Arcade's Bonus label is drawn inside an
// image whose node has no text, so the tree looks sound; the executor's
// miss reads the screen once and taps it.
func TestGoalOnLabelInsideImage(t *testing.T) {
	tess, err := ocr.NewTesseract(context.Background(), nil)
	if err != nil {
		t.Skipf("tesseract unavailable: %v", err)
	}
	defer tess.Close()
	p := startPhoneWith(t, lab.Options{Android: 1, AppFiles: []string{"../examples/apps/arcade.yaml"}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.drv.LaunchApp(ctx, "com.apex.arcade"); err != nil {
		t.Fatal(err)
	}
	rt, err := agent.New(agent.Config{Perception: perceive.Options{Engine: tess}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.Act(ctx, agent.Task{Goal: `tap "Bonus", then check "Tap Start game to play" exists`, Driver: p.drv})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.Done {
		t.Errorf("goal ended %s: %s", res.Status, res.Summary)
	}
}
