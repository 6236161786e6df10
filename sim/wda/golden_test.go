package wda_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n%s", path, got)
	}
}

func indent(t *testing.T, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// TestGoldenResponses pins the shapes of WebDriverAgent responses: the
// Login screen's source as XML and JSON, geometry, and errors.
func TestGoldenResponses(t *testing.T) {
	r := newRig(t)
	r.ok("POST", "/wda/apps/launch", map[string]string{"bundleId": "com.apex.login"})
	var xml string
	r.ok("GET", "/source", nil).decode(t, &xml)
	golden(t, "login-source.xml", []byte(xml))
	golden(t, "login-source.json", indent(t, r.ok("GET", "/source?format=json", nil).raw))

	var all []json.RawMessage
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/window/size", nil},
		{"GET", "/wda/screen", nil},
		{"GET", "/wda/activeAppInfo", nil},
		{"POST", "/wda/apps/state", map[string]string{"bundleId": "com.apex.login"}},
		{"GET", "/element/active", nil},
		{"POST", "/elements", map[string]string{"using": "predicate string", "value": "type == 'XCUIElementTypeSwitch'"}},
		{"POST", "/element", map[string]string{"using": "accessibility id", "value": "nope"}},
		{"GET", "/session/ABC/source", nil},
		{"POST", "/wda/tap", "{"},
		{"GET", "/nope", nil},
		{"GET", "/alert/text", nil},
	} {
		rep := r.do(c.method, c.path, c.body)
		entry, _ := json.Marshal(map[string]any{"request": c.method + " " + c.path, "status": rep.Status, "response": json.RawMessage(rep.raw)})
		all = append(all, entry)
	}
	out, _ := json.Marshal(all)
	golden(t, "responses.json", indent(t, out))
}
