package wda_test

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/sim"
)

func TestStatus(t *testing.T) {
	r := newRig(t)
	rep := r.ok("GET", "/status", nil)
	var v struct {
		Ready   bool   `json:"ready"`
		State   string `json:"state"`
		Message string `json:"message"`
		OS      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"os"`
		Build struct {
			Bundle string `json:"productBundleIdentifier"`
		} `json:"build"`
	}
	rep.decode(t, &v)
	if !v.Ready || v.State != "success" || v.OS.Name != "iOS" || v.OS.Version == "" || v.Build.Bundle == "" ||
		!strings.Contains(v.Message, "ready") {
		t.Errorf("status = %s", rep.raw)
	}
	if rep.SessionID != nil {
		t.Errorf("sessionId before any session = %q; want null", *rep.SessionID)
	}
	s := r.session(nil)
	rep = r.ok("GET", "/status", nil)
	if rep.SessionID == nil || "/session/"+*rep.SessionID != s {
		t.Errorf("status after POST /session: sessionId %v; want %s", rep.SessionID, s)
	}
	r.ok("GET", "/wda/healthcheck", nil)
}

func TestSessionLifecycle(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.apex.shop"})
	if r.fg() != "com.apex.shop" {
		t.Fatalf("bundleId capability: foreground %s; want com.apex.shop", r.fg())
	}
	var caps map[string]any
	r.ok("GET", s, nil).decode(t, &caps)
	if caps["CFBundleIdentifier"] != "com.apex.shop" {
		t.Errorf("GET %s = %v", s, caps)
	}
	r.ok("GET", s+"/window/size", nil)
	// A second session replaces the first, as WebDriverAgent keeps one.
	s2 := r.session(nil)
	if s2 == s {
		t.Fatalf("second session has the first's id %s", s)
	}
	for _, c := range []struct{ method, path string }{{"GET", s + "/source"}, {"DELETE", s}, {"GET", s}} {
		rep := r.do(c.method, c.path, nil)
		if rep.Status != http.StatusNotFound || rep.errorCode() != "invalid session id" {
			t.Errorf("%s %s with the old session: %d %s; want 404 invalid session id", c.method, c.path, rep.Status, rep.raw)
		}
	}
	r.ok("DELETE", s2, nil)
	if rep := r.do("GET", s2+"/source", nil); rep.errorCode() != "invalid session id" {
		t.Errorf("after DELETE: %s", rep.raw)
	}
	// desiredCapabilities (JSONWP clients) also launch.
	r.ok("POST", "/session", map[string]any{"desiredCapabilities": map[string]any{"bundleId": "com.apex.notes"}})
	if r.fg() != "com.apex.notes" {
		t.Errorf("desiredCapabilities bundleId: foreground %s", r.fg())
	}
}

func TestSourceXMLParsesAsXCUITest(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.apex.shop"})
	for _, path := range []string{"/source", s + "/source", "/source?format=xml"} {
		src := r.str("GET", path, nil)
		if !strings.HasPrefix(src, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<XCUIElementTypeApplication ") {
			t.Fatalf("%s starts %q", path, src[:min(len(src), 120)])
		}
		tr, err := scene.Parse([]byte(src))
		if err != nil {
			t.Fatalf("%s: scene.Parse: %v", path, err)
		}
		if tr.Format != scene.FormatXCUITest || tr.Width != 390 || tr.Height != 844 {
			t.Errorf("%s: tree %s %dx%d; want xcuitest 390x844 points", path, tr.Format, tr.Width, tr.Height)
		}
		sc := scene.Build(tr, nil)
		text := sc.Text()
		for _, want := range []string{"app=Shop", "Search", "Cart (0)"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: scene lacks %q:\n%s", path, want, text)
			}
		}
	}
	src := r.str("GET", "/source", nil)
	for _, want := range []string{
		`<XCUIElementTypeNavigationBar type="XCUIElementTypeNavigationBar" name="Shop"`,
		`<XCUIElementTypeTextField type="XCUIElementTypeTextField" value="Search" name="search" placeholderValue="Search" enabled="true" visible="true" accessible="true"`,
		`<XCUIElementTypeTable type="XCUIElementTypeTable" name="results"`,
		`<XCUIElementTypeCell type="XCUIElementTypeCell" name="product_item"`,
		`<XCUIElementTypeButton type="XCUIElementTypeButton" name="cart_button" label="Cart (0)"`,
	} {
		if !strings.Contains(src, want) {
			t.Errorf("source lacks %s", want)
		}
	}
	if strings.Contains(src, "android") {
		t.Errorf("source mentions android:\n%s", src)
	}
}

func TestSourceJSON(t *testing.T) {
	r := newRig(t)
	r.session(map[string]any{"bundleId": "com.apex.login"})
	type node struct {
		Type         string  `json:"type"`
		Name         *string `json:"name"`
		Label        *string `json:"label"`
		Value        *string `json:"value"`
		RawID        *string `json:"rawIdentifier"`
		Frame        string  `json:"frame"`
		Rect         struct{ X, Y, Width, Height int }
		IsEnabled    string  `json:"isEnabled"`
		IsVisible    string  `json:"isVisible"`
		IsAccessible string  `json:"isAccessible"`
		Children     []*node `json:"children"`
	}
	var root node
	r.ok("GET", "/source?format=json", nil).decode(t, &root)
	if root.Type != "Application" || root.Label == nil || *root.Label != "Login" || root.Frame != "{{0, 0}, {390, 844}}" ||
		root.Rect.Width != 390 || root.IsEnabled != "1" || root.IsVisible != "1" {
		t.Errorf("root = %+v", root)
	}
	var fields []*node
	var walk func(n *node)
	walk = func(n *node) {
		if n.Type == "TextField" || n.Type == "SecureTextField" {
			fields = append(fields, n)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(&root)
	if len(fields) < 2 || fields[1].Type != "SecureTextField" || fields[0].RawID == nil || fields[0].IsAccessible != "1" {
		t.Fatalf("fields = %+v", fields)
	}
	desc := r.str("GET", "/source?format=description", nil)
	if !strings.HasPrefix(desc, "Application, {{0.0, 0.0}, {390.0, 844.0}}, label: 'Login'") {
		t.Errorf("description starts %q", desc[:min(80, len(desc))])
	}
	if rep := r.do("GET", "/source?format=yaml", nil); rep.Status != 400 || rep.errorCode() != "invalid argument" {
		t.Errorf("format=yaml: %d %s", rep.Status, rep.raw)
	}
}

func TestScreenshotAndGeometry(t *testing.T) {
	r := newRig(t)
	s := r.session(nil)
	for _, path := range []string{"/screenshot", s + "/screenshot"} {
		b64 := r.str("GET", path, nil)
		data, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatalf("%s: base64: %v", path, err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: png: %v", path, err)
		}
		if b := img.Bounds(); b.Dx() != 1170 || b.Dy() != 2532 {
			t.Errorf("%s: %v; want 1170x2532 px", path, b)
		}
	}
	var size map[string]int
	r.ok("GET", "/window/size", nil).decode(t, &size)
	if size["width"] != 390 || size["height"] != 844 {
		t.Errorf("window size = %v; want 390x844 points", size)
	}
	r.ok("GET", s+"/window/rect", nil).decode(t, &size)
	if size["x"] != 0 || size["width"] != 390 {
		t.Errorf("window rect = %v", size)
	}
	var scr struct {
		Scale         int            `json:"scale"`
		StatusBarSize map[string]int `json:"statusBarSize"`
		ScreenSize    map[string]int `json:"screenSize"`
	}
	r.ok("GET", "/wda/screen", nil).decode(t, &scr)
	if scr.Scale != 3 || scr.StatusBarSize["height"] != 47 || scr.StatusBarSize["width"] != 390 || scr.ScreenSize["height"] != 844 {
		t.Errorf("/wda/screen = %+v", scr)
	}
	var info map[string]any
	r.ok("GET", "/wda/device/info", nil).decode(t, &info)
	if info["isSimulator"] != true || info["name"] == "" {
		t.Errorf("device info = %v", info)
	}
	if r.str("GET", s+"/orientation", nil) != "PORTRAIT" {
		t.Error("orientation")
	}
}

// TestTapTypeFlow drives Login with coordinate taps and /wda/keys, the
// calls a driver makes.
func TestTapTypeFlow(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.apex.login"})
	user := elementRect(t, r, s, "username")
	r.ok("POST", s+"/wda/tap", map[string]float64{"x": user[0] + user[2]/2, "y": user[1] + user[3]/2})
	if !r.phone.KeyboardShown() {
		t.Fatal("tap on the username field: no keyboard")
	}
	r.ok("POST", s+"/wda/keys", map[string]any{"value": []string{"a", "d", "m", "i", "n", "x", "\b"}, "frequency": 30})
	st, _ := r.phone.State("com.apex.login")
	if st["username"] != "admin" {
		t.Errorf("typed username = %v; want admin (x deleted by \\b)", st["username"])
	}
	// The legacy form: POST /wda/tap/0.
	pw := elementRect(t, r, s, "password")
	r.ok("POST", "/wda/tap/0", map[string]float64{"x": pw[0] + 10, "y": pw[1] + pw[3]/2})
	r.ok("POST", "/wda/keys", map[string]any{"value": []string{"密码🔑"}})
	st, _ = r.phone.State("com.apex.login")
	if st["password"] != "密码🔑" {
		t.Errorf("typed password = %q; want any Unicode", st["password"])
	}
	src := r.str("GET", "/source", nil)
	if !strings.Contains(src, `<XCUIElementTypeSecureTextField type="XCUIElementTypeSecureTextField" value="•••"`) {
		t.Errorf("secure field does not show bullets:\n%s", src)
	}
	if !strings.Contains(src, "XCUIElementTypeKeyboard") || !strings.Contains(src, `name="Return"`) {
		t.Error("keyboard missing from the source while typing")
	}
	r.ok("POST", s+"/wda/keyboard/dismiss", nil)
	if r.phone.KeyboardShown() {
		t.Error("keyboard still up after dismiss")
	}
	if rep := r.do("POST", "/wda/keys", map[string]any{"value": []string{"x"}}); rep.Status != 400 || rep.errorCode() != "invalid element state" {
		t.Errorf("keys without keyboard: %d %s", rep.Status, rep.raw)
	}
}

// elementRect finds an element by accessibility id and returns x, y, w, h.
func elementRect(t *testing.T, r *rig, s, id string) [4]float64 {
	t.Helper()
	el := r.find(s, "accessibility id", id)
	var rect struct{ X, Y, Width, Height float64 }
	r.ok("GET", s+"/element/"+el+"/rect", nil).decode(t, &rect)
	return [4]float64{rect.X, rect.Y, rect.Width, rect.Height}
}

func TestMalformedRequests(t *testing.T) {
	r := newRig(t)
	s := r.session(nil)
	cases := []struct {
		name, method, path string
		body               any
		status             int
		code, msg          string
	}{
		{"unknown path", "GET", "/nope", nil, 404, "unknown command", "Unhandled endpoint: GET /nope"},
		{"unknown session path", "GET", s + "/nope", nil, 404, "unknown command", "Unhandled endpoint"},
		{"wrong method", "GET", "/wda/tap", nil, 404, "unknown command", ""},
		{"bad session", "GET", "/session/XYZ/source", nil, 404, "invalid session id", "XYZ"},
		{"delete bad session", "DELETE", "/session/XYZ", nil, 404, "invalid session id", ""},
		{"not json", "POST", "/wda/tap", "{x:1", 400, "invalid argument", "JSON object"},
		{"json array", "POST", "/wda/tap", "[1,2]", 400, "invalid argument", "JSON object"},
		{"json null", "POST", "/wda/tap", "null", 400, "invalid argument", "JSON object"},
		{"tap without y", "POST", "/wda/tap", map[string]any{"x": 1}, 400, "invalid argument", "'y' is required"},
		{"tap string x", "POST", "/wda/tap", map[string]any{"x": "1", "y": 2}, 400, "invalid argument", "'x' must be a number"},
		{"tap off screen", "POST", "/wda/tap", map[string]any{"x": 500, "y": 2}, 400, "invalid argument", "outside the screen"},
		{"tap negative", "POST", "/wda/tap", map[string]any{"x": -1, "y": 2}, 400, "invalid argument", "outside the screen"},
		{"keys string", "POST", "/wda/keys", map[string]any{"value": "abc"}, 400, "invalid argument", "array of strings"},
		{"keys missing", "POST", "/wda/keys", map[string]any{}, 400, "invalid argument", "'value' is required"},
		{"find no using", "POST", s + "/element", map[string]any{"value": "x"}, 400, "invalid argument", "'using' is required"},
		{"find bad strategy", "POST", s + "/element", map[string]any{"using": "css selector", "value": "x"}, 400, "invalid argument", "not supported"},
		{"find bad predicate", "POST", s + "/elements", map[string]any{"using": "predicate string", "value": "name =="}, 400, "invalid selector", "invalid predicate"},
		{"find bad chain", "POST", s + "/elements", map[string]any{"using": "class chain", "value": "**/XCUIElementTypeCell[0]"}, 400, "invalid selector", "index"},
		{"find bad xpath", "POST", s + "/elements", map[string]any{"using": "xpath", "value": "//Cell["}, 400, "invalid selector", "invalid xpath"},
		{"no element", "POST", s + "/element", map[string]any{"using": "accessibility id", "value": "nothing"}, 404, "no such element", "unable to find an element using 'accessibility id', value 'nothing'"},
		{"unknown element id", "GET", s + "/element/ABC/rect", nil, 404, "no such element", "ABC"},
		{"press unknown button", "POST", "/wda/pressButton", map[string]any{"name": "power"}, 400, "invalid argument", "home, volumeUp, volumeDown"},
		{"launch without bundle", "POST", "/wda/apps/launch", map[string]any{}, 400, "invalid argument", "'bundleId' is required"},
		{"launch empty bundle", "POST", "/wda/apps/launch", map[string]any{"bundleId": ""}, 400, "invalid argument", "must not be empty"},
		{"launch unknown app", "POST", "/wda/apps/launch", map[string]any{"bundleId": "com.nope"}, 500, "unknown error", "not installed"},
		{"alert without one", "GET", "/alert/text", nil, 404, "no such alert", "modal dialog"},
		{"accept without alert", "POST", s + "/alert/accept", nil, 404, "no such alert", ""},
		{"actions missing", "POST", s + "/actions", map[string]any{}, 400, "invalid argument", "'actions' is required"},
		{"actions bad type", "POST", s + "/actions", map[string]any{"actions": []any{map[string]any{"type": "wheel"}}}, 400, "invalid argument", "source type"},
		{"actions bad item", "POST", s + "/actions", map[string]any{"actions": []any{map[string]any{"type": "pointer", "id": "f",
			"actions": []any{map[string]any{"type": "pointerMove", "x": 1}}}}}, 400, "invalid argument", "needs x and y"},
		{"actions off screen", "POST", s + "/actions", map[string]any{"actions": []any{map[string]any{"type": "pointer", "id": "f",
			"actions": []any{map[string]any{"type": "pointerMove", "x": 1, "y": 9000}}}}}, 400, "invalid argument", "actions[0].actions[0]"},
		{"hold negative", "POST", "/wda/touchAndHold", map[string]any{"x": 1, "y": 1, "duration": -1}, 400, "invalid argument", "duration"},
		{"session caps not object", "POST", "/session", map[string]any{"capabilities": 3}, 400, "invalid argument", "capabilities"},
		{"session bundle not string", "POST", "/session", map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{"bundleId": 5}}}, 400, "invalid argument", "bundleId"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := r.do(c.method, c.path, c.body)
			if rep.Status != c.status || rep.errorCode() != c.code || !strings.Contains(rep.message(), c.msg) {
				t.Errorf("%s %s: %d %s; want %d %q containing %q", c.method, c.path, rep.Status, rep.raw, c.status, c.code, c.msg)
			}
			var e struct {
				Traceback *string `json:"traceback"`
			}
			rep.decode(t, &e)
			if e.Traceback == nil {
				t.Errorf("error without traceback field: %s", rep.raw)
			}
		})
	}
}

func TestPlatformChrome(t *testing.T) {
	r := newRig(t)
	if r.phone.Platform() != sim.PlatformIOS {
		t.Fatalf("platform %s", r.phone.Platform())
	}
	src := r.str("GET", "/source", nil)
	// The home screen is SpringBoard with icons.
	if !strings.Contains(src, `<XCUIElementTypeApplication type="XCUIElementTypeApplication" name="SpringBoard"`) ||
		!strings.Contains(src, `<XCUIElementTypeIcon type="XCUIElementTypeIcon" name="Shop" label="Shop"`) {
		t.Errorf("home screen source:\n%s", src)
	}
}

// TestConcurrentClients has several clients observe and act at once (run
// with -race): every answer is WebDriverAgent JSON, and the phone ends in
// a consistent state.
func TestConcurrentClients(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.apex.notes"})
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				var rep reply
				switch (g + i) % 4 {
				case 0:
					rep = r.do("GET", s+"/source", nil)
				case 1:
					rep = r.do("GET", "/screenshot", nil)
				case 2:
					rep = r.do("POST", s+"/elements", map[string]string{"using": "class chain", "value": "**/XCUIElementTypeCell"})
				case 3:
					rep = r.do("POST", s+"/wda/dragfromtoforduration", map[string]any{"fromX": 200, "fromY": 600, "toX": 200, "toY": 400 + float64(i), "duration": 0.1})
				}
				if rep.Status != http.StatusOK {
					errs <- string(rep.raw)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if r.fg() != "com.apex.notes" {
		t.Errorf("foreground %s", r.fg())
	}
}
