package perceive_test

import (
	"testing"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/perceive"
)

// TestFocusAndTypingChangeTheScreen: on the Login app, through adbd,
// focusing the username field (the keyboard comes up) and typing into it
// each settle on a screen of its own fingerprint, and each such screen
// settles: two looks at a focused field agree.
func TestFocusAndTypingChangeTheScreen(t *testing.T) {
	dev, d, p, ctx := onApp(t, "com.apex.login")
	settle := func(what string) *perceive.Screen { return settled(t, ctx, p, what) }
	start := settle("start")
	x, y := centre(t, start.Scene, "Username")
	steps := []struct {
		name string
		act  func() error
	}{
		{"focus the field", func() error { return d.Tap(ctx, device.Point{X: x, Y: y}) }},
		{"type into it", func() error { return d.InputText(ctx, "demo") }},
		{"type more", func() error { return d.InputText(ctx, "x") }},
	}
	seen := map[string]string{start.FP: "start"}
	for _, st := range steps {
		if err := st.act(); err != nil {
			t.Fatal(err)
		}
		s := settle(st.name)
		if prev, ok := seen[s.FP]; ok {
			t.Errorf("after %q the fingerprint is the one of %q: screen judged unchanged\n%s", st.name, prev, s.Scene.Text())
		}
		seen[s.FP] = st.name
	}
	if !dev.Phone.KeyboardShown() {
		t.Error("the keyboard is not up: the test did not focus the field")
	}
}
