package wda_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestFindStrategies(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.android.settings"})
	count := func(using, value string) int {
		var refs []map[string]string
		r.ok("POST", s+"/elements", map[string]string{"using": using, "value": value}).decode(t, &refs)
		return len(refs)
	}
	cases := []struct {
		using, value string
		want         int
	}{
		{"accessibility id", "search", 1},
		{"id", "search", 1},
		{"name", "Settings", 2}, // navigation bar and its title
		{"accessibility id", "nothing", 0},
		{"class name", "XCUIElementTypeTextField", 1},
		{"class name", "XCUIElementTypeCell", 6},
		{"predicate string", "type == 'XCUIElementTypeCell'", 6},
		{"predicate string", "label == 'Display'", 1},
		{"predicate string", "label ==[c] 'display'", 1},
		{"predicate string", "label BEGINSWITH 'Dis' AND type == 'XCUIElementTypeStaticText'", 1},
		{"predicate string", "label CONTAINS[cd] 'INTERNET' OR label ENDSWITH 'phone'", 2},
		{"predicate string", "label LIKE '*ocation'", 2}, // "Location" and its summary "Use location"
		{"predicate string", "label MATCHES '^(Apps|Display).*'", 2},
		{"predicate string", "label IN {'Display', 'Location', 'Nope'}", 2},
		{"predicate string", "visible == 1 AND enabled == YES AND type == 'XCUIElementTypeTextField'", 1},
		{"predicate string", "rect.y > 800", 0},
		{"predicate string", "TRUEPREDICATE AND type == 'XCUIElementTypeTable'", 1},
		{"class chain", "**/XCUIElementTypeCell", 6},
		{"class chain", "**/XCUIElementTypeCell[2]", 1},
		{"class chain", "**/XCUIElementTypeCell[-1]/XCUIElementTypeStaticText", 2},
		{"class chain", "**/XCUIElementTypeCell[`name == 'entry'`]/XCUIElementTypeStaticText[`label == 'Display'`]", 1},
		{"class chain", "**/XCUIElementTypeCell[$label == 'Location'$]", 1},
		{"class chain", "XCUIElementTypeWindow/*", 1},
		{"class chain", "**/Table/Cell[1]", 1},
		{"class chain", "**/XCUIElementTypeCell[9]", 0},
		{"-ios class chain", "**/XCUIElementTypeCell", 6},
		{"xpath", "//XCUIElementTypeCell", 6},
		{"xpath", `//XCUIElementTypeCell/XCUIElementTypeStaticText[@label="Display"]`, 1},
		{"xpath", "/XCUIElementTypeApplication/XCUIElementTypeWindow//XCUIElementTypeTable/XCUIElementTypeCell[last()]", 1},
		{"-ios predicate string", "label == 'Display'", 1},
	}
	for _, c := range cases {
		if got := count(c.using, c.value); got != c.want {
			t.Errorf("%s %q: %d elements; want %d", c.using, c.value, got, c.want)
		}
	}
	all := count("predicate string", "type == 'XCUIElementTypeStaticText'")
	with := count("predicate string", "type == 'XCUIElementTypeStaticText' AND label CONTAINS 'a'")
	without := count("predicate string", "type == 'XCUIElementTypeStaticText' && !(label CONTAINS 'a')")
	if all == 0 || with == 0 || without == 0 || with+without != all {
		t.Errorf("static texts: %d, with 'a' %d, without %d", all, with, without)
	}
}

func TestElementCommands(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.apex.login"})
	user := r.find(s, "accessibility id", "username")
	if got := r.str("GET", s+"/element/"+user+"/name", nil); got != "XCUIElementTypeTextField" {
		t.Errorf("name (type) = %q", got)
	}
	if got := r.str("GET", s+"/element/"+user+"/text", nil); got != "Username" {
		t.Errorf("text of an empty field = %q; want its placeholder", got)
	}
	attrs := map[string]any{}
	for _, a := range []string{"name", "label", "value", "type", "placeholderValue", "enabled", "visible", "accessible", "hittable", "nonsense"} {
		var v any
		r.ok("GET", s+"/element/"+user+"/attribute/"+a, nil).decode(t, &v)
		attrs[a] = v
	}
	want := map[string]any{"name": "username", "label": nil, "value": "Username", "type": "XCUIElementTypeTextField",
		"placeholderValue": "Username", "enabled": true, "visible": true, "accessible": true, "hittable": true, "nonsense": nil}
	for k, v := range want {
		if attrs[k] != v {
			t.Errorf("attribute %s = %v; want %v", k, attrs[k], v)
		}
	}
	var b bool
	r.ok("GET", s+"/element/"+user+"/enabled", nil).decode(t, &b)
	if !b {
		t.Error("enabled = false")
	}
	r.ok("GET", s+"/element/"+user+"/displayed", nil).decode(t, &b)
	if !b {
		t.Error("displayed = false")
	}
	// value focuses the field and types; {"text"} is the other form.
	r.ok("POST", s+"/element/"+user+"/value", map[string]any{"value": []string{"de", "mo"}})
	pw := r.find(s, "class chain", "**/XCUIElementTypeSecureTextField")
	r.ok("POST", s+"/element/"+pw+"/value", map[string]any{"text": "apex12"})
	r.ok("POST", s+"/element/"+pw+"/value", map[string]any{"text": "3"})
	st, _ := r.phone.State("com.apex.login")
	if st["username"] != "demo" || st["password"] != "apex123" {
		t.Fatalf("typed %v / %v", st["username"], st["password"])
	}
	if got := r.str("GET", s+"/element/"+user+"/text", nil); got != "demo" {
		t.Errorf("text after typing = %q", got)
	}
	r.ok("POST", s+"/element/"+user+"/clear", nil)
	if st, _ := r.phone.State("com.apex.login"); st["username"] != "" {
		t.Errorf("after clear: %v", st["username"])
	}
	r.ok("POST", s+"/element/"+user+"/value", map[string]any{"value": []string{"demo"}})
	remember := r.find(s, "accessibility id", "remember")
	if v := r.str("GET", s+"/element/"+remember+"/attribute/value", nil); v != "0" {
		t.Errorf("switch value = %q; want 0", v)
	}
	r.ok("POST", s+"/element/"+remember+"/click", nil)
	if v := r.str("GET", s+"/element/"+remember+"/attribute/value", nil); v != "1" {
		t.Errorf("switch value after click = %q; want 1", v)
	}
	r.ok("GET", s+"/element/"+remember+"/selected", nil).decode(t, &b)
	if !b {
		t.Error("an on switch is not selected")
	}
	if rep := r.do("POST", s+"/element/"+remember+"/value", map[string]any{"text": "x"}); rep.Status != 400 || rep.errorCode() != "invalid element state" {
		t.Errorf("typing into a switch: %d %s", rep.Status, rep.raw)
	}
	// Child lookup from an element.
	nav := r.find(s, "class name", "XCUIElementTypeNavigationBar")
	title := r.find(s+"/element/"+nav, "class name", "XCUIElementTypeStaticText")
	if got := r.str("GET", s+"/element/"+title+"/text", nil); got != "Sign in" {
		t.Errorf("nav bar title = %q", got)
	}
	sign := r.find(s, "accessibility id", "sign_in")
	r.ok("POST", s+"/element/"+sign+"/click", nil)
	if st, _ := r.phone.State("com.apex.login"); st["user"] != "demo" {
		t.Fatalf("sign in: user %v", st["user"])
	}
	// The form is gone: its elements are stale now.
	for _, path := range []string{"/rect", "/text", "/click"} {
		method := "GET"
		if path == "/click" {
			method = "POST"
		}
		rep := r.do(method, s+"/element/"+user+path, nil)
		if rep.Status != http.StatusNotFound || rep.errorCode() != "stale element reference" {
			t.Errorf("%s on a gone element: %d %s", path, rep.Status, rep.raw)
		}
	}
	if !strings.Contains(r.str("GET", "/source", nil), "Welcome, demo!") {
		t.Error("welcome page not shown")
	}
}

// TestNavigationBack: iOS has no back key; pushed screens get a Back button
// in the navigation bar.
func TestNavigationBack(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.android.settings"})
	cell := r.find(s, "predicate string", "label == 'Display'")
	r.ok("POST", s+"/element/"+cell+"/click", nil)
	if !strings.Contains(r.str("GET", "/source", nil), `name="dark_mode"`) {
		t.Fatal("Display page did not open")
	}
	back := r.find(s, "predicate string", "type == 'XCUIElementTypeButton' AND label == 'Back'")
	r.ok("POST", s+"/element/"+back+"/click", nil)
	if !strings.Contains(r.str("GET", "/source", nil), `name="categories"`) {
		t.Error("Back did not return to the list")
	}
}

func TestActiveElement(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.apex.login"})
	pw := r.find(s, "accessibility id", "password")
	r.ok("POST", s+"/element/"+pw+"/click", nil)
	var ref map[string]string
	r.ok("GET", s+"/element/active", nil).decode(t, &ref)
	if name := r.str("GET", s+"/element/"+ref["ELEMENT"]+"/attribute/name", nil); name != "password" {
		t.Errorf("active element %q; want password", name)
	}
}
