package wda_test

import (
	"strings"
	"testing"
	"time"
)

func notes(t *testing.T, r *rig) []any {
	t.Helper()
	st, err := r.phone.State("com.apex.notes")
	if err != nil {
		t.Fatal(err)
	}
	return st["notes"].([]any)
}

func firstNoteTitle(t *testing.T, r *rig, s string) string {
	t.Helper()
	cell := r.find(s, "class chain", "**/XCUIElementTypeCell[1]/XCUIElementTypeStaticText[1]")
	return r.str("GET", s+"/element/"+cell+"/text", nil)
}

func pointer(moves ...map[string]any) map[string]any {
	items := make([]any, len(moves))
	for i, m := range moves {
		items[i] = m
	}
	return map[string]any{"actions": []any{map[string]any{"type": "pointer", "id": "finger1",
		"parameters": map[string]any{"pointerType": "touch"}, "actions": items}}}
}

func TestW3CActions(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.apex.notes"})
	n := len(notes(t, r))
	if first := firstNoteTitle(t, r, s); first != "Groceries 1" {
		t.Fatalf("first note %q", first)
	}
	// A swipe up scrolls the list.
	r.ok("POST", s+"/actions", pointer(
		map[string]any{"type": "pointerMove", "duration": 0, "x": 200, "y": 700},
		map[string]any{"type": "pointerDown", "button": 0},
		map[string]any{"type": "pointerMove", "duration": 300, "x": 200, "y": 300, "origin": "viewport"},
		map[string]any{"type": "pointerUp", "button": 0}))
	if first := firstNoteTitle(t, r, s); first == "Groceries 1" {
		t.Error("swipe up did not scroll the list")
	}
	// A relative move back down scrolls back.
	r.ok("POST", s+"/actions", pointer(
		map[string]any{"type": "pointerMove", "x": 200, "y": 200},
		map[string]any{"type": "pointerDown"},
		map[string]any{"type": "pointerMove", "duration": 300, "x": 0, "y": 500, "origin": "pointer"},
		map[string]any{"type": "pointerUp"}))
	if first := firstNoteTitle(t, r, s); first != "Groceries 1" {
		t.Errorf("swipe down: first note %q", first)
	}
	// A long press (down, pause 600 ms, up) on a cell opens its delete alert.
	cell := r.find(s, "class chain", "**/XCUIElementTypeCell[1]")
	r.ok("POST", s+"/actions", pointer(
		map[string]any{"type": "pointerMove", "x": 0, "y": 0, "origin": map[string]string{"element-6066-11e4-a52e-4f735466cecf": cell}},
		map[string]any{"type": "pointerDown"},
		map[string]any{"type": "pause", "duration": 600},
		map[string]any{"type": "pointerUp"}))
	text := r.str("GET", s+"/alert/text", nil)
	if text != "Delete note?\n“Groceries 1” will be deleted." {
		t.Fatalf("alert text %q", text)
	}
	r.ok("POST", s+"/alert/dismiss", nil)
	if len(notes(t, r)) != n {
		t.Fatal("dismiss deleted the note")
	}
	// A short down-up is a tap: it opens the note.
	r.ok("POST", s+"/actions", pointer(
		map[string]any{"type": "pointerMove", "x": 0, "y": 0, "origin": map[string]string{"ELEMENT": cell}},
		map[string]any{"type": "pointerDown"},
		map[string]any{"type": "pause", "duration": 50},
		map[string]any{"type": "pointerUp"}))
	if !strings.Contains(r.str("GET", "/source", nil), `name="note_title"`) {
		t.Fatal("tap did not open the note")
	}
	// Key actions type into the focused field.
	title := r.find(s, "accessibility id", "note_title")
	r.ok("POST", s+"/element/"+title+"/click", nil)
	r.ok("POST", s+"/actions", map[string]any{"actions": []any{map[string]any{"type": "key", "id": "kb", "actions": []any{
		map[string]any{"type": "keyDown", "value": "!"}, map[string]any{"type": "keyUp", "value": "!"},
		map[string]any{"type": "keyDown", "value": "\uE003"}, map[string]any{"type": "keyDown", "value": "?"},
	}}}})
	st, _ := r.phone.State("com.apex.notes")
	if st["draft_title"] != "Groceries 1?" {
		t.Errorf("key actions: draft title %q", st["draft_title"])
	}
	r.ok("DELETE", s+"/actions", nil)
}

func TestCoordinateGestures(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.apex.notes"})
	r.ok("POST", s+"/wda/dragfromtoforduration", map[string]any{"fromX": 200, "fromY": 700, "toX": 200, "toY": 250, "duration": 0.3})
	if first := firstNoteTitle(t, r, s); first == "Groceries 1" {
		t.Error("drag did not scroll")
	}
	r.ok("POST", s+"/wda/dragfromtoforduration", map[string]any{"fromX": 200, "fromY": 250, "toX": 200, "toY": 800, "duration": 0.3})
	rect := elementRect(t, r, s, "note")
	r.ok("POST", s+"/wda/touchAndHold", map[string]any{"x": rect[0] + rect[2]/2, "y": rect[1] + rect[3]/2, "duration": 1.0})
	var buttons []string
	r.ok("GET", "/wda/alert/buttons", nil).decode(t, &buttons)
	if strings.Join(buttons, ",") != "Cancel,Delete" {
		t.Fatalf("alert buttons %v", buttons)
	}
	src := r.str("GET", "/source", nil)
	if !strings.Contains(src, `<XCUIElementTypeAlert type="XCUIElementTypeAlert" name="Delete note?"`) {
		t.Errorf("source has no alert:\n%s", src)
	}
	n := len(notes(t, r))
	r.ok("POST", s+"/alert/accept", nil)
	if len(notes(t, r)) != n-1 {
		t.Errorf("accept: %d notes; want %d", len(notes(t, r)), n-1)
	}
	// Named buttons, and element-relative legacy taps.
	el := r.find(s, "accessibility id", "note")
	r.ok("POST", s+"/wda/element/"+el+"/touchAndHold", map[string]any{"duration": 0.8})
	if rep := r.do("POST", s+"/alert/accept", map[string]any{"name": "Nope"}); rep.errorCode() != "invalid argument" {
		t.Errorf("accept with a missing button: %s", rep.raw)
	}
	r.ok("POST", s+"/alert/accept", map[string]any{"name": "cancel"})
	if len(notes(t, r)) != n-1 {
		t.Error("accept name=cancel deleted")
	}
	r.ok("POST", "/wda/tap/"+el, nil)
	if !strings.Contains(r.str("GET", "/source", nil), `name="note_title"`) {
		t.Fatal("element tap did not open the note")
	}
	r.ok("POST", "/wda/doubleTap", map[string]any{"x": 195, "y": 400})
}

func TestApps(t *testing.T) {
	r := newRig(t)
	s := r.session(nil)
	state := func(b string) int {
		var v int
		r.ok("POST", s+"/wda/apps/state", map[string]string{"bundleId": b}).decode(t, &v)
		return v
	}
	if got := state("com.apex.shop"); got != 1 {
		t.Errorf("state before launch = %d; want 1 (not running)", got)
	}
	r.ok("POST", s+"/wda/apps/launch", map[string]any{"bundleId": "com.apex.shop", "arguments": []string{}, "environment": map[string]string{}})
	if got := state("com.apex.shop"); got != 4 {
		t.Errorf("state after launch = %d; want 4", got)
	}
	r.ok("POST", "/wda/apps/activate", map[string]string{"bundleId": "com.apex.notes"})
	if state("com.apex.shop") != 3 || state("com.apex.notes") != 4 || state("com.nope") != 0 || state("com.apple.springboard") != 4 {
		t.Errorf("states: shop %d notes %d nope %d", state("com.apex.shop"), state("com.apex.notes"), state("com.nope"))
	}
	var info map[string]any
	r.ok("GET", "/wda/activeAppInfo", nil).decode(t, &info)
	if info["bundleId"] != "com.apex.notes" || info["pid"].(float64) == 0 {
		t.Errorf("active app = %v", info)
	}
	var was bool
	r.ok("POST", s+"/wda/apps/terminate", map[string]string{"bundleId": "com.apex.notes"}).decode(t, &was)
	if !was || state("com.apex.notes") != 1 {
		t.Errorf("terminate: %v, state %d", was, state("com.apex.notes"))
	}
	r.ok("POST", s+"/wda/apps/terminate", map[string]string{"bundleId": "com.apex.notes"}).decode(t, &was)
	if was {
		t.Error("terminating a stopped app reported true")
	}
	r.ok("GET", "/wda/activeAppInfo", nil).decode(t, &info)
	if info["bundleId"] != "com.apple.springboard" {
		t.Errorf("after terminate, active app %v; want SpringBoard", info["bundleId"])
	}
	if rep := r.do("POST", "/wda/apps/terminate", map[string]string{"bundleId": "com.nope"}); rep.errorCode() != "unknown error" {
		t.Errorf("terminate unknown: %s", rep.raw)
	}
}

func TestButtonsLockHome(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.apex.shop"})
	r.ok("POST", s+"/wda/pressButton", map[string]string{"name": "volumeUp"})
	r.ok("POST", s+"/wda/pressButton", map[string]string{"name": "volumeDown"})
	if r.fg() != "com.apex.shop" {
		t.Fatal("volume buttons left the app")
	}
	r.ok("POST", s+"/wda/pressButton", map[string]string{"name": "home"})
	if r.fg() != "com.apex.launcher" {
		t.Errorf("home button: foreground %s", r.fg())
	}
	r.ok("POST", "/wda/apps/launch", map[string]string{"bundleId": "com.apex.shop"})
	r.ok("POST", "/wda/homescreen", nil)
	if r.fg() != "com.apex.launcher" {
		t.Errorf("homescreen: foreground %s", r.fg())
	}
	locked := func() bool {
		var v bool
		r.ok("GET", "/wda/locked", nil).decode(t, &v)
		return v
	}
	if locked() {
		t.Fatal("locked at start")
	}
	r.ok("POST", s+"/wda/lock", nil)
	if !locked() {
		t.Fatal("not locked after /wda/lock")
	}
	src := r.str("GET", "/source", nil)
	if !strings.Contains(src, `name="SpringBoard"`) || strings.Contains(src, "XCUIElementTypeIcon") {
		t.Errorf("locked source shows the home screen:\n%s", src)
	}
	if rep := r.do("POST", "/wda/homescreen", nil); rep.errorCode() != "unknown error" || !strings.Contains(rep.message(), "unlock") {
		t.Errorf("homescreen while locked: %s", rep.raw)
	}
	r.ok("POST", s+"/wda/pressButton", map[string]string{"name": "home"})
	if !r.phone.Awake() || !locked() {
		t.Errorf("home on a dark screen: awake %v locked %v; want the lock screen", r.phone.Awake(), locked())
	}
	shot := r.str("GET", "/screenshot", nil)
	r.ok("POST", "/wda/unlock", nil)
	if locked() {
		t.Fatal("still locked after /wda/unlock")
	}
	if r.str("GET", "/screenshot", nil) == shot {
		t.Error("unlock did not change the screen")
	}
	// Launching while locked unlocks, as XCUITest's launch does.
	r.ok("POST", "/wda/lock", nil)
	r.ok("POST", "/wda/apps/launch", map[string]string{"bundleId": "com.apex.notes"})
	if locked() || r.fg() != "com.apex.notes" {
		t.Errorf("launch while locked: locked %v fg %s", locked(), r.fg())
	}
}

// TestDelayedPopupAlert: Shop's sale popup appears after its delay and is
// answered through the alert endpoints.
func TestDelayedPopupAlert(t *testing.T) {
	for seed := int64(0); seed < 8; seed++ {
		r := newRigSeed(t, seed)
		s := r.session(map[string]any{"bundleId": "com.apex.shop"})
		r.clock.t = r.clock.t.Add(time.Second)
		rep := r.do("GET", s+"/alert/text", nil)
		if rep.Status == 404 {
			continue
		}
		var text string
		rep.decode(t, &text)
		if !strings.HasPrefix(text, "Summer Sale: 20% off\n") {
			t.Fatalf("popup text %q", text)
		}
		var buttons []string
		r.ok("GET", "/wda/alert/buttons", nil).decode(t, &buttons)
		if strings.Join(buttons, ",") != "Shop now,Close" {
			t.Errorf("buttons %v; want the row, then the corner close", buttons)
		}
		r.ok("POST", s+"/alert/dismiss", nil)
		if rep := r.do("GET", "/alert/text", nil); rep.errorCode() != "no such alert" {
			t.Errorf("after dismiss: %s", rep.raw)
		}
		return
	}
	t.Fatal("no seed of 0–7 showed Shop's popup")
}

// TestEdgeGestures: up from the home indicator goes home (a flick) or
// opens the app switcher (a rest before lifting); right from the left edge
// goes back.
func TestEdgeGestures(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.android.settings"})
	cell := r.find(s, "predicate string", "label == 'Display'")
	r.ok("POST", s+"/element/"+cell+"/click", nil)
	r.ok("POST", s+"/actions", pointer(
		map[string]any{"type": "pointerMove", "x": 2, "y": 400},
		map[string]any{"type": "pointerDown"},
		map[string]any{"type": "pointerMove", "duration": 250, "x": 300, "y": 410},
		map[string]any{"type": "pointerUp"}))
	if !strings.Contains(r.str("GET", "/source", nil), `name="categories"`) {
		t.Fatal("edge swipe right did not go back")
	}
	up := func(rest float64) {
		r.ok("POST", s+"/actions", pointer(
			map[string]any{"type": "pointerMove", "x": 195, "y": 843},
			map[string]any{"type": "pointerDown"},
			map[string]any{"type": "pointerMove", "duration": 400, "x": 195, "y": 560},
			map[string]any{"type": "pause", "duration": rest},
			map[string]any{"type": "pointerUp"}))
	}
	up(800)
	if src := r.str("GET", "/source", nil); !strings.Contains(src, `label="Settings"`) || !strings.Contains(src, `name="SpringBoard"`) {
		t.Errorf("up and rest: not the app switcher with Settings:\n%.600s", src)
	}
	r.ok("POST", "/wda/apps/activate", map[string]string{"bundleId": "com.android.settings"})
	up(0)
	if r.fg() != "com.apex.launcher" {
		t.Errorf("flick up from the bottom: foreground %s; want home", r.fg())
	}
	r.ok("POST", "/wda/apps/activate", map[string]string{"bundleId": "com.android.settings"})
	r.ok("POST", "/wda/dragfromtoforduration", map[string]any{"fromX": 195, "fromY": 840, "toX": 195, "toY": 500, "duration": 0.2})
	if r.fg() != "com.apex.launcher" {
		t.Errorf("drag up from the bottom: foreground %s; want home", r.fg())
	}
}
