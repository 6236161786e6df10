package script

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestLoadMidsceneScriptUnchanged(t *testing.T) {
	s, err := LoadFile("testdata/midscene-android.yaml", &Options{LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	wantTarget := Target{Kind: "android", DeviceID: "emulator-5554", Launch: "com.android.settings",
		Extra: map[string]any{"imeStrategy": "yadb-for-non-ascii", "autoDismissKeyboard": true},
		Pos:   Pos{File: "testdata/midscene-android.yaml", Line: 3, Col: 1}}
	if d := cmp.Diff(wantTarget, s.Target); d != "" {
		t.Errorf("target (-want +got):\n%s", d)
	}
	if s.Agent["testId"] != "settings-smoke" {
		t.Errorf("agent = %v", s.Agent)
	}
	var kinds []string
	for _, st := range s.Tasks[0].Steps {
		kinds = append(kinds, string(st.Kind))
	}
	want := "aiAct aiAct aiAct aiTap aiInput aiInput aiInput aiKeyboardPress aiKeyboardPress aiScroll aiScroll " +
		"aiDoubleClick aiLongPress aiWaitFor aiWaitFor sleep aiAssert aiQuery aiQuery aiNumber aiString aiBoolean " +
		"aiAsk aiLocate logScreenshot logScreenshot runAdbShell launch"
	if d := cmp.Diff(want, strings.Join(kinds, " ")); d != "" {
		t.Errorf("kinds (-want +got):\n%s", d)
	}
	steps := s.Tasks[0].Steps
	checks := []struct {
		name      string
		got, want any
	}{
		{"ai prompt", steps[0].Prompt, "open the search page"},
		{"aiTap locator", string(steps[3].Target), `"the search icon"`},
		{"aiInput new form value", steps[4].Value, "Wi-Fi"},
		{"aiInput new form target", string(steps[4].Target), `"the search box"`},
		{"aiInput old form value", steps[5].Value, "Bluetooth"},
		{"aiInput old form target", string(steps[5].Target), `"the search box"`},
		{"aiInput clear", steps[6].Mode, "clear"},
		{"keyboard keyName", steps[7].Value, "Enter"},
		{"keyboard key target", string(steps[7].Target), `"the search box"`},
		{"keyboard bare key", steps[8].Value, "Enter"},
		{"scroll type", *steps[9].Scroll, Scroll{Direction: "down", Type: "untilBottom"}},
		{"scroll inline", *steps[10].Scroll, Scroll{Direction: "up", Type: "once", Distance: 600}},
		{"scroll without target", steps[10].Target == nil, true},
		{"waitFor timeout", steps[13].Timeout, 10 * time.Second},
		{"waitFor old form", steps[14].Prompt + "|" + steps[14].Timeout.String(), "the page settled|3s"},
		{"sleep", steps[15].Duration, 1500 * time.Millisecond},
		{"assert message", steps[16].ErrorMessage, "Wi-Fi is missing from the results"},
		{"query name", steps[17].Name, "results"},
		{"query old form", steps[18].Prompt + "|" + steps[18].Name, "the count of results|count"},
		{"log content", steps[24].Value, "after searching for wifi"},
		{"adb shell", steps[26].Value, "dumpsys battery"},
		{"continueOnError", s.Tasks[1].ContinueOnError, true},
		{"nested locate", string(s.Tasks[1].Steps[0].Target), `"the close button"`},
		{"hover kind", s.Tasks[1].Steps[1].Kind, AIHover},
		{"position", steps[3].Pos, Pos{File: "testdata/midscene-android.yaml", Line: 25, Col: 9}},
	}
	for _, c := range checks {
		if d := cmp.Diff(c.want, c.got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}

func knownActions(name string, params json.RawMessage) (bool, error) {
	switch name {
	case "open_notifications":
		return true, nil
	case "tap_xy":
		var p struct{ X, Y int }
		if err := json.Unmarshal(params, &p); err != nil {
			return true, err
		}
		if p.X == 0 {
			return true, errors.New("x: required")
		}
		return true, nil
	}
	return false, nil
}

func TestLoadDeterministicSteps(t *testing.T) {
	s, err := LoadFile("testdata/all-steps.yaml", &Options{Action: knownActions})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(Target{Kind: "sim", Platform: "android", Launch: "com.apex.shop", Pos: Pos{"testdata/all-steps.yaml", 1, 1}}, s.Target); d != "" {
		t.Errorf("target (-want +got):\n%s", d)
	}
	st := s.Tasks[0].Steps
	checks := []struct {
		name      string
		got, want any
	}{
		{"tap prompt", string(st[0].Target), `"Search"`},
		{"tap id", string(st[1].Target), `{"id":"com.apex.shop:id/search"}`},
		{"tap text index", string(st[2].Target), `{"text":"Add to cart","index":1}`},
		{"optional", st[2].Optional, true},
		{"timeout", st[2].Timeout, 2 * time.Second},
		{"doubleTap", st[3].Kind, DoubleTap},
		{"longPress", st[4].Duration, 800 * time.Millisecond},
		{"input", st[5].Value + "|" + st[5].Mode + "|" + string(st[5].Target), `shoes|replace|{"id":"com.apex.shop:id/query"}`},
		{"input append", st[6].Value + "|" + st[6].Mode, " more|append"},
		{"input clear", st[7].Mode + "|" + string(st[7].Target), `clear|{"type":"input"}`},
		{"assert exists", *st[8].Assert, Assert{Op: "exists"}},
		{"assert notExists", *st[9].Assert, Assert{Op: "notExists", Message: "the sale popup is still there"}},
		{"assert notExists target", string(st[9].Target), `{"text":"Sale"}`},
		{"assert textEquals", *st[10].Assert, Assert{Op: "textEquals", Text: "Cart (1)"}},
		{"assert textEquals element", string(st[10].Target), `{"id":"com.apex.shop:id/cart"}`},
		{"assert number", *st[11].Assert, Assert{Op: "numberGreater", Number: 0, Message: "no items"}},
		{"waitFor", st[12].Timeout, 5 * time.Second},
		{"waitFor gone", st[13].Mode, "gone"},
		{"launch", st[14].Value, "com.apex.notes"},
		{"terminate", st[15].Kind, Terminate},
		{"back", st[16].Kind, Back},
		{"home", st[17].Kind, Home},
		{"swipe dir", *st[18].Swipe, Swipe{Direction: "up"}},
		{"swipe points", *st[19].Swipe, Swipe{From: [2]int{540, 1800}, To: [2]int{540, 600}}},
		{"swipe duration", st[19].Duration, 300 * time.Millisecond},
		{"scrollUntilVisible", *st[20].Scroll, Scroll{Direction: "down", Type: "once", MaxSwipes: 5}},
		{"pressKey", st[21].Value, "enter"},
		{"wda", st[22].Method + " " + st[22].Endpoint + " " + string(st[22].Params), `POST /session/:sessionId/wda/pressButton {"name":"home"}`},
		{"generic", st[23].Kind, Action},
		{"generic params", string(st[24].Params), `{"x":10,"y":20}`},
		{"assert enabled", *st[25].Assert, Assert{Op: "enabled"}},
		{"assert enabled target", string(st[25].Target), `"Checkout"`},
		{"assert focused", st[26].Assert.Op + " " + string(st[26].Target), `focused {"id":"com.apex.shop:id/query"}`},
		{"assert count", *st[27].Assert, Assert{Op: "count", Number: 2}},
		{"assert count element", string(st[27].Target), `{"text":"Add to cart"}`},
	}
	for _, c := range checks {
		if d := cmp.Diff(c.want, c.got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}

func TestTargetsAreLocatorJSON(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"text is a prompt", `Search`, `"Search"`},
		{"prompt is trimmed", `"  the blue button "`, `"the blue button"`},
		{"quotes kept", `'the "Buy" button'`, `"the \"Buy\" button"`},
		{"prompt alone is the string form", `{prompt: the close button}`, `"the close button"`},
		{"fields in locator order", `{index: 1, type: button, text: Add to cart}`, `{"text":"Add to cart","type":"button","index":1}`},
		{"explicit index 0 kept", `{text: Add to cart, index: 0}`, `{"text":"Add to cart","index":0}`},
		{"prompt with index", `{prompt: Add, index: 2}`, `{"prompt":"Add","index":2}`},
		{"id aliases", `{resourceId: com.apex.shop:id/search}`, `{"id":"com.apex.shop:id/search"}`},
		{"desc aliases", `{contentDesc: Close}`, `{"desc":"Close"}`},
		{"interpolated", `{text: "${APEX_VAR_WHO}"}`, `{"text":"Ann"}`},
		{"reference images ignored", `{desc: Close, images: [a.png]}`, `{"desc":"Close"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "tasks:\n  - name: a\n    flow:\n      - tap: " + c.yaml + "\n"
			s, err := Load([]byte(src), "x.yaml", &Options{LookupEnv: env(map[string]string{"APEX_VAR_WHO": "Ann"})})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, string(s.Tasks[0].Steps[0].Target)); d != "" {
				t.Errorf("target (-want +got):\n%s", d)
			}
		})
	}
}

func TestInterpolation(t *testing.T) {
	src := "env: [SERIAL, USER_NAME, N, WAIT]\nandroid:\n  deviceId: ${SERIAL}\ntasks:\n  - name: t\n    flow:\n      - input: the user field\n        value: ${USER_NAME:-guest}-${N}\n      - sleep: ${WAIT}\n"
	s, err := Load([]byte(src), "x.yaml", &Options{LookupEnv: env(map[string]string{"SERIAL": "abc", "N": "7", "WAIT": "250"})})
	if err != nil {
		t.Fatal(err)
	}
	if s.Target.DeviceID != "abc" || s.Tasks[0].Steps[0].Value != "guest-7" || s.Tasks[0].Steps[1].Duration != 250*time.Millisecond {
		t.Fatalf("interpolated = %q %q %v", s.Target.DeviceID, s.Tasks[0].Steps[0].Value, s.Tasks[0].Steps[1].Duration)
	}
}

func TestErrorsHavePositions(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"not yaml", "tasks: [\n", "x.yaml:1: invalid YAML"},
		{"no tasks", "android: {}\n", "x.yaml:1:1: missing tasks"},
		{"tasks not list", "tasks: 3\n", "x.yaml:1:8: tasks: expected a list"},
		{"unknown top", "tasks: []\nandriod: {}\n", "x.yaml:2:1: unknown top-level key \"andriod\""},
		{"web", "web: {url: x}\ntasks: []\n", "x.yaml:1:1: target \"web\" is not supported"},
		{"two targets", "android: {}\nsim: {}\ntasks: []\n", "x.yaml:2:1: a second target block"},
		{"bad target key", "android:\n  serial: x\ntasks: []\n", "x.yaml:2:3: unknown key \"serial\" in android: expected deviceId"},
		{"bad sim platform", "sim: {platform: windows}\ntasks: []\n", "x.yaml:1:17: sim.platform: expected android or ios"},
		{"task no name", "tasks:\n  - flow: []\n", "x.yaml:2:5: task without a name"},
		{"task no flow", "tasks:\n  - name: a\n", "x.yaml:2:5: task \"a\" has no flow"},
		{"task bad key", "tasks:\n  - name: a\n    steps: []\n    flow: []\n", "x.yaml:3:5: unknown key \"steps\" in a task"},
		{"unknown step", "tasks:\n  - name: a\n    flow:\n      - clickIt: x\n", "x.yaml:4:9: unknown step \"clickIt\": expected one of"},
		{"two kinds", "tasks:\n  - name: a\n    flow:\n      - tap: x\n        input: y\n", "x.yaml:5:9: one step has two kinds, tap and input"},
		{"bad option", "tasks:\n  - name: a\n    flow:\n      - tap: x\n        wait: 3\n", "x.yaml:5:9: unknown option \"wait\" for tap: expected optional, timeout"},
		{"input no value", "tasks:\n  - name: a\n    flow:\n      - input: the box\n", "x.yaml:4:16: input needs the text to type"},
		{"bad mode", "tasks:\n  - name: a\n    flow:\n      - input: box\n        value: x\n        mode: overwrite\n", "x.yaml:6:15: input.mode: expected replace, append or clear"},
		{"bad sleep", "tasks:\n  - name: a\n    flow:\n      - sleep: soon\n", "x.yaml:4:16: sleep: expected milliseconds"},
		{"bad direction", "tasks:\n  - name: a\n    flow:\n      - swipe: sideways\n", "x.yaml:4:16: swipe.direction: expected up, down, left or right"},
		{"assert no op", "tasks:\n  - name: a\n    flow:\n      - assert: {element: x}\n", "x.yaml:4:17: assert: expected one check"},
		{"assert no element", "tasks:\n  - name: a\n    flow:\n      - assert: {textEquals: x}\n", "x.yaml:4:17: assert.textEquals: add element:"},
		{"count no element", "tasks:\n  - name: a\n    flow:\n      - assert: {count: 2}\n", "x.yaml:4:17: assert.count: add element:"},
		{"count not whole", "tasks:\n  - name: a\n    flow:\n      - assert: {count: 1.5, element: x}\n", "x.yaml:4:25: assert.count: expected a whole number"},
		{"count negative", "tasks:\n  - name: a\n    flow:\n      - assert: {count: -1, element: x}\n", "x.yaml:4:25: assert.count: expected how many"},
		{"enabled with element", "tasks:\n  - name: a\n    flow:\n      - assert: {enabled: x, element: y}\n", "assert.element: enabled already names the element"},
		{"unknown assert lists the checks", "tasks:\n  - name: a\n    flow:\n      - assert: {visible: x}\n", "focused, textEquals"},
		{"bad locator key", "tasks:\n  - name: a\n    flow:\n      - tap: {label: x}\n", "x.yaml:4:15: unknown key \"label\" in tap: expected text, id"},
		{"empty locator", "tasks:\n  - name: a\n    flow:\n      - tap: \"  \"\n", "x.yaml:4:14: tap: the target is empty"},
		{"locator names nothing", "tasks:\n  - name: a\n    flow:\n      - tap: {}\n", "x.yaml:4:14: tap: the target names nothing"},
		{"locator index alone", "tasks:\n  - name: a\n    flow:\n      - tap: {index: 2}\n", "x.yaml:4:14: tap: the target names nothing"},
		{"locator negative index", "tasks:\n  - name: a\n    flow:\n      - tap: {text: x, index: -1}\n", "x.yaml:4:31: tap.index: expected 0 or more, got -1"},
		{"locator index not a number", "tasks:\n  - name: a\n    flow:\n      - tap: {text: x, index: two}\n", "x.yaml:4:31: tap.index: expected a whole number"},
		{"locator not text", "tasks:\n  - name: a\n    flow:\n      - tap: [x]\n", "x.yaml:4:14: tap: expected a target"},
		{"unset env", "env: [NOPE]\ntasks:\n  - name: a\n    flow:\n      - launch: ${NOPE}\n", "x.yaml:5:17: environment variable NOPE is not set"},
		{"dup key", "tasks:\n  - name: a\n    name: b\n    flow: []\n", "x.yaml:3:5: task: key \"name\" repeated (first at line 2)"},
		{"bad bool", "tasks:\n  - name: a\n    continueOnError: maybe\n    flow: []\n", "x.yaml:3:22: continueOnError: expected true or false"},
		{"generic bad params", "tasks:\n  - name: a\n    flow:\n      - tap_xy: {y: 1}\n", "x.yaml:4:17: tap_xy: x: required"},
		{"back with value", "tasks:\n  - name: a\n    flow:\n      - back: twice\n", "x.yaml:4:15: back takes no value"},
		{"two documents", "tasks: []\n---\ntasks: []\n", "x.yaml:2:1: a second YAML document"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load([]byte(c.src), "x.yaml", &Options{LookupEnv: env(nil), Action: knownActions})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, c.want)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("err %T is not a *script.Error", err)
			}
		})
	}
}

func TestManyErrorsAreAllReported(t *testing.T) {
	src := "tasks:\n  - name: a\n    flow:\n      - tap: {label: x}\n      - sleep: never\n"
	_, err := Load([]byte(src), "x.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "x.yaml:4:15") || !strings.Contains(err.Error(), "x.yaml:5:16") {
		t.Fatalf("err = %v; want both problems", err)
	}
}

func FuzzLoad(f *testing.F) {
	for _, name := range []string{"testdata/midscene-android.yaml", "testdata/all-steps.yaml"} {
		s, err := LoadFile(name, nil)
		_ = s
		_ = err
	}
	f.Add([]byte("tasks:\n  - name: a\n    flow:\n      - tap: x\n"))
	f.Add([]byte("a: &a [*a, *a]\ntasks: *a\n"))
	f.Add([]byte("sim: {launch: ${X:-y}}\ntasks:\n  - {name: n, flow: [{aiInput: a, value: b}, back, {swipe: {from: [1,2], to: [3,4]}}]}\n"))
	f.Add([]byte("tasks:\n - name: x\n   flow:\n   - assert: {textEquals: 1, element: {id: q, index: -1}}\n"))
	f.Add([]byte("env: [X]\ntasks:\n - name: x\n   flow:\n   - read: {locate: a, as: v}\n   - if: {visible: ${v}}\n     flow: [{repeat: {until: {notVisible: $${X}}, max: 2}, flow: [back]}]\n     else: [{runFlow: {flow: [{tap: ${X}}], with: {a: b}}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Load(data, "fuzz.yaml", &Options{LookupEnv: env(map[string]string{"X": "1"}), Action: knownActions})
		if err == nil && s == nil {
			t.Fatal("nil script without error")
		}
		if err != nil && s != nil {
			t.Fatal("script and error both returned")
		}
		if s == nil {
			return
		}
		for _, task := range s.Tasks {
			for _, st := range task.Steps {
				// The runner decodes a target as a locator: it must be a
				// JSON string or object.
				if st.Target != nil && (!json.Valid(st.Target) || st.Target[0] != '"' && st.Target[0] != '{') {
					t.Fatalf("%s target %q is not a JSON string or object", st.Key, st.Target)
				}
			}
		}
	})
}
