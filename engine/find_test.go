package engine_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/internal/labtest"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/ocr"
	"github.com/apexagent/apex/perceive"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/sim"
	"github.com/apexagent/apex/sim/lab"
)

// TestMissingLabelOnAStillScreen: a tap on a label the Shop's sale popup
// does not show fails once the screen has kept still and been read whole
// by OCR (tesseract), not after FindTimeout; its list of what the screen
// shows has what is closest first, no OCR noise (the status bar read as
// words) and every label once (the popup's texts are in the tree and in
// the pixels). A label close to one shown is waited for until
// FindTimeout: the screen may be about to show it.
func TestMissingLabelOnAStillScreen(t *testing.T) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		t.Skip("tesseract is not installed (make deps-apt installs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, sd := labtest.Android(t, lab.Options{Seed: 1}) // seed 1: the sale popup opens
	if err := sd.LaunchApp(ctx, "com.apex.shop"); err != nil {
		t.Fatal(err)
	}
	eng := ocr.NewLazy(nil)
	t.Cleanup(func() { eng.Close() })
	s := engine.New(sd, &engine.Options{FindTimeout: 10 * time.Minute, Perception: perceive.Options{Engine: eng}})
	t.Cleanup(s.Close)
	if _, ferr, err := s.Find(ctx, nil, []action.Locator{{Text: "Shop now"}}, time.Minute, true); err != nil || ferr != nil {
		t.Fatalf("the sale popup did not open: %v %v", ferr, err)
	}

	r := s.Run(ctx, engine.Step{Call: tap("Checkout now")})
	var miss *locate.MissingError
	if !errors.As(r.Err, &miss) || miss.Near() {
		t.Fatalf("err = %v; want a MissingError with nothing near", r.Err)
	}
	var labels []string
	seen := map[string]bool{}
	for _, c := range miss.Candidates {
		e := c.Element
		lab := e.Text + e.Desc
		labels = append(labels, lab)
		if seen[scene.Fold(lab)] {
			t.Errorf("%q listed twice", lab)
		}
		seen[scene.Fold(lab)] = true
		if e.System || e.Source == scene.SourceOCR && (e.Confidence < 0.85 || e.Bounds.Y1 < 100) {
			t.Errorf("noise listed: %+v", e)
		}
	}
	if len(labels) == 0 || !strings.HasPrefix(labels[0], "Use code SUN20 at checkout") || !seen[scene.Fold("Shop now")] {
		t.Errorf("candidates %q; want the one with checkout first, Shop now among them", labels)
	}
	if strings.Contains(r.Err.Error(), "100%") || !strings.Contains(r.Err.Error(), "closest first") {
		t.Errorf("message: %v", r.Err)
	}

	opts := &engine.Options{FindTimeout: 4 * time.Second, FindQuiet: 500 * time.Millisecond, Perception: perceive.Options{Engine: eng}}
	s2 := engine.New(sd, opts)
	t.Cleanup(s2.Close)
	r = s2.Run(ctx, engine.Step{Call: tap("Shop now!")})
	if !errors.As(r.Err, &miss) || !miss.Near() || miss.Candidates[0].Element.Text != "Shop now" {
		t.Fatalf("err = %v; want a MissingError near Shop now", r.Err)
	}
	if r.Duration < opts.FindTimeout {
		t.Errorf("gave up on a label close to one shown after %v; want the whole FindTimeout %v", r.Duration, opts.FindTimeout)
	}
}

// changingDriver shows another app after each of the first n reads of
// the screen, then Settings: a screen that keeps changing for a while.
type changingDriver struct {
	device.Driver
	phone *sim.Phone
	n     int
	reads atomic.Int32
}

func (c *changingDriver) Source(ctx context.Context) (device.Source, error) {
	src, err := c.Driver.Source(ctx)
	apps := []string{"com.apex.notes", "com.apex.login", "com.apex.zhongwen"}
	switch i := int(c.reads.Add(1)); {
	case i < c.n:
		c.phone.Launch(apps[i%len(apps)])
	case i == c.n:
		c.phone.Launch("com.android.settings")
	}
	return src, err
}

// TestFindWaitsWhileTheScreenChanges: a target that shows only after the
// screen has changed for longer than FindQuiet is still found: only a
// still screen ends the wait early.
func TestFindWaitsWhileTheScreenChanges(t *testing.T) {
	dev, d := labtest.App(t, "com.apex.login")
	cd := &changingDriver{Driver: d, phone: dev.Phone, n: 15}
	quiet := 300 * time.Millisecond
	s := engine.New(cd, &engine.Options{FindQuiet: quiet, Perception: perceive.Options{Mode: perceive.Off}})
	t.Cleanup(s.Close)
	start := time.Now()
	_, ferr, err := s.Find(testCtx(t), nil, []action.Locator{{Text: "Network & internet"}}, time.Minute, false)
	if err != nil || ferr != nil {
		t.Fatalf("not found after %d reads in %v: %v %v", cd.reads.Load(), time.Since(start), ferr, err)
	}
	if cd.reads.Load() < int32(cd.n) {
		t.Errorf("found after %d reads; Settings opens after %d", cd.reads.Load(), cd.n)
	}
}
