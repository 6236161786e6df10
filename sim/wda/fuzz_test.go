package wda

import (
	"encoding/json"
	"image"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apexagent/apex/sim"
)

func fuzzTree() *sim.XCUIElement {
	leaf := func(typ, id, label string, y int) *sim.XCUIElement {
		return &sim.XCUIElement{Type: typ, Identifier: id, Label: label, Value: label, HasValue: true, Enabled: true, Visible: true,
			Rect: image.Rect(0, y, 390, y+44)}
	}
	table := &sim.XCUIElement{Type: "XCUIElementTypeTable", Enabled: true, Visible: true, Rect: image.Rect(0, 100, 390, 800)}
	for i, l := range []string{"Wi-Fi", "Bluetooth", "Café", "通知"} {
		cell := &sim.XCUIElement{Type: "XCUIElementTypeCell", Identifier: "row", Enabled: true, Visible: true, Rect: image.Rect(0, 100+44*i, 390, 144+44*i)}
		cell.Children = []*sim.XCUIElement{leaf("XCUIElementTypeStaticText", "", l, 100+44*i)}
		table.Children = append(table.Children, cell)
	}
	win := &sim.XCUIElement{Type: "XCUIElementTypeWindow", Enabled: true, Visible: true, Rect: image.Rect(0, 0, 390, 844),
		Children: []*sim.XCUIElement{table, leaf("XCUIElementTypeButton", "go", "Go", 50)}}
	return &sim.XCUIElement{Type: "XCUIElementTypeApplication", Label: "App", Enabled: true, Visible: true, Rect: win.Rect,
		Children: []*sim.XCUIElement{win}}
}

func TestPredicateSemantics(t *testing.T) {
	root := found{e: fuzzTree()}
	all := descendants(root.e, nil, nil)
	cases := []struct {
		pred string
		want int
	}{
		{"label == 'Wi-Fi'", 1},
		{`label == "Wi-Fi"`, 1},
		{"label = 'wi-fi'", 0},
		{"label ==[c] 'wi-fi'", 1},
		{"label ==[cd] 'cafe'", 1},
		{"label BEGINSWITH[c] 'b'", 1},
		{"label ENDSWITH 'Fi' || label == '通知'", 2},
		{"name == 'row'", 4},
		{"name == 'row' AND rect.y >= 188", 2},
		{"rect.height == 44 AND type == 'XCUIElementTypeButton'", 1},
		{"NOT name == 'row' AND type == 'XCUIElementTypeCell'", 0},
		{"!(type IN {'XCUIElementTypeCell', 'XCUIElementTypeStaticText'})", 3},
		{"label LIKE 'B?uetoo*'", 1},
		{"label MATCHES[c] 'wi-.*'", 1},
		{"enabled == true AND visible == YES AND accessible == NO", 11},
		{"value != 'Go' AND type == 'XCUIElementTypeButton'", 0},
		{"label < 'C' AND type == 'XCUIElementTypeStaticText'", 1},
		{"FALSEPREDICATE OR name == 'go'", 1},
		{"wdName == 'go'", 1},
	}
	for _, c := range cases {
		p, err := ParsePredicate(c.pred)
		if err != nil {
			t.Errorf("%s: %v", c.pred, err)
			continue
		}
		n := 0
		for _, f := range all {
			if p.Match(f.e) {
				n++
			}
		}
		if n != c.want {
			t.Errorf("%s: %d matches; want %d", c.pred, n, c.want)
		}
	}
	for _, bad := range []string{"", "name", "name ==", "name == 'x", "(name == 'x'", "name ~ 'x'", "colour == 'red'",
		"name IN 'x'", "name ==[q] 'x'", "name MATCHES '('", "name == 'x' AND", strings.Repeat("(", 100) + "name == 'x'" + strings.Repeat(")", 100)} {
		if _, err := ParsePredicate(bad); err == nil {
			t.Errorf("ParsePredicate(%q) = nil error", bad)
		}
	}
}

func TestClassChainSemantics(t *testing.T) {
	root := found{e: fuzzTree()}
	cases := []struct {
		chain string
		want  []string // labels of the matches, or types when unlabelled
	}{
		{"XCUIElementTypeWindow", []string{"XCUIElementTypeWindow"}},
		{"XCUIElementTypeWindow/XCUIElementTypeButton", []string{"Go"}},
		{"**/XCUIElementTypeStaticText", []string{"Wi-Fi", "Bluetooth", "Café", "通知"}},
		{"**/XCUIElementTypeStaticText[2]", []string{"Bluetooth"}},
		{"**/XCUIElementTypeStaticText[-1]", []string{"通知"}},
		{"**/XCUIElementTypeCell[`name == 'row'`][3]/*", []string{"Café"}},
		{"**/XCUIElementTypeCell[$label == 'Bluetooth'$]/XCUIElementTypeStaticText", []string{"Bluetooth"}},
		{"**/*[`label BEGINSWITH 'B'`]", []string{"Bluetooth"}},
		{"**/XCUIElementTypeTable/**/XCUIElementTypeStaticText[1]", []string{"Wi-Fi"}},
		{"XCUIElementTypeButton", nil},
		{"**/XCUIElementTypeCell[5]", nil},
	}
	for _, c := range cases {
		ch, err := ParseClassChain(c.chain)
		if err != nil {
			t.Errorf("%s: %v", c.chain, err)
			continue
		}
		var got []string
		for _, f := range ch.find(root) {
			got = append(got, pickLabel(f.e))
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: %q; want %q", c.chain, got, c.want)
		}
	}
	for _, bad := range []string{"", "/", "**/", "Window/", "**/Cell[0]", "**/Cell[x]", "**/Cell[`name == 'x'", "**/Cell[`name ==`]",
		"**/Cell]", "**/Ce ll", "**/Cell[$name == 'x'$"} {
		if _, err := ParseClassChain(bad); err == nil {
			t.Errorf("ParseClassChain(%q) = nil error", bad)
		}
	}
}

func pickLabel(e *sim.XCUIElement) string {
	if e.Label != "" {
		return e.Label
	}
	return e.Type
}

func FuzzPredicate(f *testing.F) {
	for _, s := range []string{"label == 'Wi-Fi'", "name BEGINSWITH[c] 'x' AND NOT (value IN {'a', 1})", "label MATCHES '.*'",
		"rect.x >= 10 || visible == NO", "label LIKE '*?*'", "((TRUEPREDICATE))", `label == "a\"b"`} {
		f.Add(s)
	}
	tree := fuzzTree()
	all := descendants(tree, nil, nil)
	f.Fuzz(func(t *testing.T, src string) {
		p, err := ParsePredicate(src)
		if err != nil {
			if p != nil {
				t.Fatal("predicate with an error")
			}
			return
		}
		for _, fd := range all {
			p.Match(fd.e)
		}
	})
}

func FuzzClassChain(f *testing.F) {
	for _, s := range []string{"**/XCUIElementTypeCell[2]/XCUIElementTypeStaticText", "XCUIElementTypeWindow/*[-1]",
		"**/Cell[`label == 'x'`][$name == 'row'$]", "**/*"} {
		f.Add(s)
	}
	root := found{e: fuzzTree()}
	f.Fuzz(func(t *testing.T, src string) {
		ch, err := ParseClassChain(src)
		if err != nil {
			return
		}
		ch.find(root)
	})
}

// FuzzRequest sends arbitrary bodies to every POST route: the server must
// answer with WebDriverAgent JSON and never panic.
func FuzzRequest(f *testing.F) {
	f.Add("/wda/tap", `{"x":10,"y":20}`)
	f.Add("/actions", `{"actions":[{"type":"pointer","id":"f","actions":[{"type":"pointerMove","x":5,"y":5},{"type":"pointerDown"},{"type":"pointerUp"}]}]}`)
	f.Add("/elements", `{"using":"class chain","value":"**/XCUIElementTypeIcon"}`)
	f.Add("/wda/keys", `{"value":["a","\n"]}`)
	f.Add("/session", `{"capabilities":{"alwaysMatch":{"bundleId":"com.apex.shop"}}}`)
	f.Add("/wda/apps/launch", `{"bundleId":"com.apex.notes"}`)
	p, err := sim.NewPhone(sim.Options{Platform: sim.PlatformIOS})
	if err != nil {
		f.Fatal(err)
	}
	s := NewServer(p, nil)
	f.Fuzz(func(t *testing.T, path, body string) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8100"+sanitizePath(path), strings.NewReader(body))
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		var env map[string]json.RawMessage
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
			t.Fatalf("POST %s %q: body %q is not JSON", path, body, w.Body.String())
		}
		if _, ok := env["value"]; !ok {
			t.Fatalf("no value: %s", w.Body.String())
		}
		if w.Code != http.StatusOK {
			var e struct{ Error string }
			json.Unmarshal(env["value"], &e)
			if e.Error == "" {
				t.Fatalf("status %d without an error code: %s", w.Code, w.Body.String())
			}
		}
	})
}

// sanitizePath keeps a fuzzed path a valid request target.
func sanitizePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if r > ' ' && r < 0x7f && r != '?' && r != '#' && r != '%' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestXPathSemantics(t *testing.T) {
	root := found{e: fuzzTree()}
	cases := []struct {
		xpath string
		want  []string
	}{
		{"/XCUIElementTypeApplication", []string{"App"}},
		{"/XCUIElementTypeApplication/XCUIElementTypeWindow/XCUIElementTypeButton", []string{"Go"}},
		{"//XCUIElementTypeStaticText", []string{"Wi-Fi", "Bluetooth", "Café", "通知"}},
		// Positions count per parent: every cell's first text.
		{"//XCUIElementTypeStaticText[1]", []string{"Wi-Fi", "Bluetooth", "Café", "通知"}},
		{"//XCUIElementTypeCell[2]/*", []string{"Bluetooth"}},
		{"//XCUIElementTypeCell[last()]/XCUIElementTypeStaticText", []string{"通知"}},
		{`//*[@label="Café"]`, []string{"Café"}},
		{"//*[@name='go' or @label='Wi-Fi']", []string{"Wi-Fi", "Go"}},
		{"//XCUIElementTypeStaticText[contains(@label, 'tooth') and @enabled='true']", []string{"Bluetooth"}},
		{"//XCUIElementTypeStaticText[starts-with(@value, 'W')]", []string{"Wi-Fi"}},
		{"//XCUIElementTypeCell[not(@index='0')][1]", []string{"XCUIElementTypeCell"}},
		{"//XCUIElementTypeButton[@placeholderValue]", nil},
		{"//XCUIElementTypeTable[@y='100' and @height!='0']", []string{"XCUIElementTypeTable"}},
		{"//XCUIElementTypeSwitch", nil},
	}
	for _, c := range cases {
		x, err := ParseXPath(c.xpath)
		if err != nil {
			t.Errorf("%s: %v", c.xpath, err)
			continue
		}
		var got []string
		for _, f := range x.find(root) {
			got = append(got, pickLabel(f.e))
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: %q; want %q", c.xpath, got, c.want)
		}
	}
	for _, bad := range []string{"", "Button", "//", "//Button[", "//Button[0]", "//Button[@]", `//Button[@name="x]`,
		"//Button[contains(name, 'x')]", "//Button[foo()]", "//Button[not @x]", "/a/b//", strings.Repeat("//*[(", 40)} {
		if _, err := ParseXPath(bad); err == nil {
			t.Errorf("ParseXPath(%q) = nil error", bad)
		}
	}
}

func FuzzXPath(f *testing.F) {
	for _, s := range []string{"//XCUIElementTypeCell[2]/*", `//*[@label="x" or contains(@name, 'y')]`, "/XCUIElementTypeApplication//*[last()]",
		"//*[not(@value) and (@enabled='true')]"} {
		f.Add(s)
	}
	root := found{e: fuzzTree()}
	f.Fuzz(func(t *testing.T, src string) {
		x, err := ParseXPath(src)
		if err != nil {
			return
		}
		x.find(root)
	})
}
