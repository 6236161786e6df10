package scene_test

import (
	"testing"

	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/sim"
)

// TestKeyboard: a Scene says when a soft keyboard shows, from an input
// method's window in an Android dump of all windows or from iOS's keyboard
// element, and its fingerprint changes with it.
func TestKeyboard(t *testing.T) {
	const field = `<node class="android.widget.EditText" package="com.apex.login" text="demo" resource-id="com.apex.login:id/username" clickable="true" focused="true" bounds="[0,100][1080,200]"/>`
	android := func(ime string) string {
		return `<hierarchy rotation="0"><node class="android.widget.FrameLayout" package="com.apex.login" bounds="[0,0][1080,2400]">` + field + `</node>` + ime + `</hierarchy>`
	}
	tests := []struct {
		name, src string
		want      bool
	}{
		{"android without an IME window", android(""), false},
		{"android with Gboard", android(`<node class="android.widget.FrameLayout" package="com.google.android.inputmethod.latin" bounds="[0,1600][1080,2400]"><node class="android.widget.FrameLayout" package="com.google.android.inputmethod.latin" content-desc="q" clickable="true" bounds="[0,1700][108,1800]"/></node>`), true},
		{"android with Sogou", android(`<node class="android.widget.FrameLayout" package="com.sohu.inputmethod.sogou" bounds="[0,1600][1080,2400]"/>`), true},
		{"ios without a keyboard", `<XCUIElementTypeApplication type="XCUIElementTypeApplication" name="Login" x="0" y="0" width="390" height="844" visible="true"><XCUIElementTypeTextField type="XCUIElementTypeTextField" value="demo" x="20" y="100" width="350" height="44" visible="true"/></XCUIElementTypeApplication>`, false},
		{"ios with a keyboard", `<XCUIElementTypeApplication type="XCUIElementTypeApplication" name="Login" x="0" y="0" width="390" height="844" visible="true"><XCUIElementTypeTextField type="XCUIElementTypeTextField" value="demo" x="20" y="100" width="350" height="44" visible="true"/><XCUIElementTypeKeyboard type="XCUIElementTypeKeyboard" x="0" y="550" width="390" height="294" visible="true"><XCUIElementTypeKey type="XCUIElementTypeKey" name="q" label="q" x="0" y="560" width="39" height="42" visible="true"/></XCUIElementTypeKeyboard></XCUIElementTypeApplication>`, true},
	}
	fps := map[string]bool{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := scene.FromSource([]byte(tc.src), nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.Keyboard != tc.want {
				t.Errorf("Keyboard = %v, want %v\n%s", s.Keyboard, tc.want, s.Text())
			}
			fps[s.Fingerprint()] = true
		})
	}
	if len(fps) != len(tests) {
		t.Errorf("%d fingerprints for %d screens", len(fps), len(tests))
	}
}

// TestKeyboardOnTheSimulatedIPhone: tapping a field on the simulated
// iPhone brings up its keyboard, and the Scene of its XCUITest source
// says so.
func TestKeyboardOnTheSimulatedIPhone(t *testing.T) {
	p, err := sim.NewPhone(sim.Options{Platform: sim.PlatformIOS})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Launch("com.apex.login"); err != nil {
		t.Fatal(err)
	}
	look := func() *scene.Scene {
		s, err := scene.FromSource(p.SourceXCUI(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := look()
	if before.Keyboard {
		t.Fatalf("keyboard before any field was tapped:\n%s", before.Text())
	}
	var field *scene.Element
	for i, e := range before.Elements {
		if e.Flags.Editable {
			field = &before.Elements[i]
			break
		}
	}
	if field == nil {
		t.Fatalf("no field:\n%s", before.Text())
	}
	x, y := field.Bounds.Center()
	p.Tap(x*3, y*3) // the source is in points; the phone is touched in pixels at scale 3
	after := look()
	if !after.Keyboard || !p.KeyboardShown() {
		t.Errorf("Keyboard = %v (phone shows one: %v)\n%s", after.Keyboard, p.KeyboardShown(), after.Text())
	}
	if after.Fingerprint() == before.Fingerprint() {
		t.Error("the keyboard coming up left the fingerprint as it was")
	}
}
