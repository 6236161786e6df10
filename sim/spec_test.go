package sim

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func loadCounter(t *testing.T) *AppSpec {
	t.Helper()
	data, err := os.ReadFile("testdata/counter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := ParseApp(data, "testdata/counter.yaml")
	if err != nil {
		t.Fatalf("ParseApp: %v", err)
	}
	return spec
}

func TestParseAppGood(t *testing.T) {
	spec := loadCounter(t)
	if spec.Package != "com.example.counter" || spec.Activity != ".MainActivity" || spec.Start != "main" {
		t.Errorf("defaults: package %q activity %q start %q", spec.Package, spec.Activity, spec.Start)
	}
	if got := spec.Screens[0].Elements[10]; got.Delay != Duration(2*time.Second) || got.Line != 40 {
		t.Errorf("delayed element: delay %v line %d", time.Duration(got.Delay), got.Line)
	}
	for _, s := range BuiltinApps() {
		if s.Label == "" || len(s.Screens) == 0 {
			t.Errorf("built-in %s incomplete", s.Package)
		}
	}
}

func TestCounterAppRuns(t *testing.T) {
	clk := newFakeClock()
	p, err := NewPhone(Options{Apps: []*AppSpec{loadCounter(t)}, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Launch("com.example.counter"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		tapOn(t, p, "plus")
	}
	tapOn(t, p, "minus")
	tapOn(t, p, "plus")
	d := dumpOf(t, p)
	if d.must("value").Text != "3" || d.find("Count 3") == nil || d.find("That is many") == nil {
		t.Fatalf("counter: %s", d.texts())
	}
	if d.find("SCORE 3") != nil {
		t.Error("canvas text leaked into the UI tree")
	}
	if n := d.must("game"); n.Class != "android.webkit.WebView" || len(n.Children) != 0 {
		t.Errorf("canvas node = %+v", n)
	}
	if n := d.must("More options"); n.Class != "android.widget.ImageButton" || n.Text != "" {
		t.Errorf("icon button = %+v", n)
	}
	tapOn(t, p, "name")
	p.InputText("blue")
	p.KeyEvent(KeycodeEnter)
	tapOn(t, p, "medium")
	tapOn(t, p, "small")
	tapOn(t, p, "agree")
	st, _ := p.State("com.example.counter")
	if st["size"] != "s" || st["agree"] != true || st["name"] != "" || len(st["tags"].([]any)) != 1 {
		t.Errorf("state = %v", st)
	}
	clk.Advance(2 * time.Second)
	if dumpOf(t, p).find("Hello later") == nil {
		t.Error("delayed text missing after 2 s")
	}
	tapOn(t, p, "Other")
	if _, act := p.Foreground(); act != ".MainActivity" || dumpOf(t, p).find("Tags: blue") == nil {
		t.Errorf("bottom tab did not switch screens: %s", dumpOf(t, p).texts())
	}
	tapOn(t, p, "Main")
	scrollTo(t, p, "ask")
	tapOn(t, p, "ask")
	if d := dumpOf(t, p); d.find("Count is 3") == nil {
		t.Fatalf("dialog: %s", d.texts())
	}
	tapOn(t, p, "yes")
	if st, _ := p.State("com.example.counter"); st["count"] != 0.0 {
		t.Errorf("count after reset = %v", st["count"])
	}
	scrollTo(t, p, "boom")
	tapOn(t, p, "boom")
	if pkg, _ := p.Foreground(); pkg != Launcher {
		t.Errorf("crash left %s in front", pkg)
	}
}

func TestParseAppErrors(t *testing.T) {
	good, _ := os.ReadFile("testdata/counter.yaml")
	tests := []struct {
		name, old, new, want string
	}{
		{"bad element type", "{type: image, id: logo", "{type: imag, id: logo",
			`counter.yaml:37: screens[0].elements[7].type: unknown element type "imag"`},
		{"unknown field", "{type: spacer}", "{type: spacer, colour: red}",
			`counter.yaml:39: screens[0].elements[9].colour: unknown field`},
		{"wrong kind", `version: "1.0"`, "version: [1]",
			`counter.yaml:4: version: expected string, got a list`},
		{"bad number", "{increment: count}", "{increment: count, by: lots}",
			`counter.yaml:31: screens[0].elements[1].children[1].on_tap[0].by: expected a number, got "lots"`},
		{"unknown screen", "{navigate: other}", "{navigate: elsewhere}",
			`counter.yaml:25: screens[0].actions[0].on_tap[0].navigate: unknown screen "elsewhere"`},
		{"two verbs", "on_tap: [home]", "on_tap: [{home: true, back: true}]",
			`counter.yaml:58: screens[1].elements[1].on_tap[0]: expected one action, got back and home`},
		{"bad template", `text: "${count}"`, `text: "${count +}"`,
			`counter.yaml:27: screens[0].elements[0].text: template "${count +}"`},
		{"missing desc", "{type: icon, id: more, desc: More options,", "{type: icon, id: more,",
			`counter.yaml:25: screens[0].actions[0].desc: required for a icon`},
		{"bad package", "package: com.example.counter", "package: counter",
			`counter.yaml:2: package: expected a package name like com.example.shop, got "counter"`},
		{"bad duration", "delay: 2s", "delay: soon",
			`counter.yaml:40: screens[0].elements[10].delay: expected a duration`},
		{"yaml syntax", "label: Counter", "label: [Counter",
			`counter.yaml:`},
		{"bad colour", "tabs:\n", "color: blue\n        tabs:\n",
			`counter.yaml:48: screens[0].elements[15].color: expected a colour like #1E88E5, got "blue"`},
		{"unknown dialog", "{dialog: reset}", "{dialog: resett}",
			`counter.yaml:43: screens[0].elements[13].on_tap[0].dialog: unknown dialog "resett"`},
		{"unknown function", `visible: "count >= 3"`, `visible: "avg(count) >= 3"`, `counter.yaml:41: screens[0].elements[11].visible: expression "avg(count) >= 3": at offset 4: unknown function avg`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := string(good)
			if !strings.Contains(src, tc.old) {
				t.Fatalf("test setup: %q not in counter.yaml", tc.old)
			}
			src = strings.Replace(src, tc.old, tc.new, 1)
			_, err := ParseApp([]byte(src), "testdata/counter.yaml")
			if err == nil {
				t.Fatalf("no error; want %q", tc.want)
			}
			var se *SpecError
			if !errors.As(err, &se) {
				t.Errorf("error %T is not a *SpecError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n  %v\nwant it to contain:\n  %s", err, tc.want)
			}
		})
	}
}

func TestParseAppEmptyAndMissing(t *testing.T) {
	for name, src := range map[string]string{
		"empty":       "",
		"no package":  "label: X\nscreens: [{id: a}]\n",
		"no screens":  "package: a.b\nlabel: X\n",
		"not a map":   "- 1\n- 2\n",
		"dup screens": "package: a.b\nlabel: X\nscreens: [{id: a}, {id: a}]\n",
	} {
		if _, err := ParseApp([]byte(src), "x.yaml"); err == nil || !strings.HasPrefix(err.Error(), "x.yaml") {
			t.Errorf("%s: error %v, want one starting with the file name", name, err)
		}
	}
}

func FuzzParseApp(f *testing.F) {
	good, _ := os.ReadFile("testdata/counter.yaml")
	f.Add(good)
	for _, s := range BuiltinApps() {
		if data, err := builtinFS.ReadFile(s.File); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("package: a.b\nlabel: X\nscreens: [{id: a, elements: [{type: text, text: '${'}]}]"))
	f.Add([]byte("a: &x [*x]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := ParseApp(data, "fuzz.yaml")
		if err != nil {
			return
		}
		// A spec that parses must run: launch it, look at it, poke it.
		p, err := NewPhone(Options{Apps: []*AppSpec{spec}, Clock: newFakeClock(), Width: 360, Height: 640, Density: 160})
		if err != nil {
			return
		}
		p.Launch(spec.Package)
		d, err := p.DumpUI()
		if err != nil || len(d) == 0 {
			t.Fatalf("DumpUI: %v", err)
		}
		for y := 80; y < 600; y += 60 {
			p.Tap(180, y)
			p.Swipe(180, 500, 180, 200, 100*time.Millisecond)
			p.InputText("x")
			p.KeyEvent(KeycodeEnter)
		}
		if _, err := p.Screenshot(); err != nil {
			t.Fatal(err)
		}
	})
}
