package sim

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"gopkg.in/yaml.v3"
)

const (
	schemaFile = "../docs/sim-app.schema.json"
	docFile    = "../docs/sim-apps.md"
)

// appSchema reads and resolves docs/sim-app.schema.json.
func appSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", schemaFile, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: resolve: %v", schemaFile, err)
	}
	return rs
}

// yamlToJSON turns a YAML document into the JSON value a schema validates
// (anchors resolved, numbers as float64).
func yamlToJSON(t *testing.T, src []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(src, &v); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("yaml to json: %v", err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func specFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, g := range []string{"apps/*.yaml", "testdata/*.yaml"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 7 {
		t.Fatalf("found %d app specs (%v); want the 6 built-in apps and the test app", len(files), files)
	}
	return files
}

// TestSchemaAcceptsEverySpec validates every built-in app and every spec of
// the tests against the schema; each must also be one ParseApp accepts.
func TestSchemaAcceptsEverySpec(t *testing.T) {
	rs := appSchema(t)
	for _, f := range specFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ParseApp(src, f); err != nil {
				t.Fatalf("ParseApp: %v", err)
			}
			if err := rs.Validate(yamlToJSON(t, src)); err != nil {
				t.Errorf("%s does not match %s: %v", f, schemaFile, err)
			}
		})
	}
}

// TestSchemaRejectsInvalidSpecs breaks the test app one way at a time:
// the schema must reject each, and so must ParseApp (they agree).
func TestSchemaRejectsInvalidSpecs(t *testing.T) {
	rs := appSchema(t)
	good, err := os.ReadFile("testdata/counter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, old, new string }{
		{"unknown element type", "{type: image, id: logo", "{type: imag, id: logo"},
		{"unknown field", "{type: spacer}", "{type: spacer, colour: red}"},
		{"version is a list", `version: "1.0"`, "version: [1]"},
		{"package without a dot", "package: com.example.counter", "package: counter"},
		{"no label", "label: Counter\n", ""},
		{"no screens", "screens:\n  - id: main", "pages:\n  - id: main"},
		{"icon without desc", "{type: icon, id: more, desc: More options,", "{type: icon, id: more,"},
		{"switch without bind", "{type: switch, id: loud, text: Loud, bind: loud}", "{type: switch, id: loud, text: Loud}"},
		{"radio without value", "bind: size, value: s}", "bind: size}"},
		{"list without item", "        item: {text: \"${item.name}\", on_tap: [{toast: \"${item.name} picked\"}]}\n", ""},
		{"row without children", "      - type: row\n        children:\n", "      - type: row\n        x_children:\n"},
		{"two verbs", "on_tap: [home]", "on_tap: [{home: true, back: true}]"},
		{"no verb", "on_tap: [home]", "on_tap: [{by: 2}]"},
		{"unknown bare action", "on_tap: [home]", "on_tap: [away]"},
		{"by without increment", "{type: button, id: boom, text: Crash, on_tap: [{crash: \"boom\"}]}", "{type: button, id: boom, text: Crash, on_tap: [{crash: \"boom\", by: 1}]}"},
		{"increment by text", "{increment: count}", "{increment: count, by: lots}"},
		{"bad duration", "delay: 2s", "delay: soon"},
		{"bad colour", "tabs:\n", "color: blue\n        tabs:\n"},
		{"bad element id", "id: late,", "id: 2late,"},
		{"bad bind path", "bind: agree}", "bind: a.b.c}"},
		{"screen without id", "  - id: other\n    title: Other", "  - title: Other"},
		{"tab without label", "{label: Other, screen: other}", "{screen: other}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := string(good)
			if !strings.Contains(src, tc.old) {
				t.Fatalf("test setup: %q not in counter.yaml", tc.old)
			}
			src = strings.Replace(src, tc.old, tc.new, 1)
			if err := rs.Validate(yamlToJSON(t, []byte(src))); err == nil {
				t.Errorf("schema accepts the spec with %s", tc.name)
			} else {
				t.Logf("schema: %v", err)
			}
			if _, err := ParseApp([]byte(src), "testdata/counter.yaml"); err == nil {
				t.Errorf("ParseApp accepts the spec with %s, the schema does not", tc.name)
			}
		})
	}
}

// TestSchemaMatchesSpecTypes keeps the schema in step with the Go types
// ParseApp fills: the same field names, element kinds and action verbs.
func TestSchemaMatchesSpecTypes(t *testing.T) {
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	defs := root["$defs"].(map[string]any)
	def := func(name string) map[string]any {
		d, ok := defs[name].(map[string]any)
		if !ok {
			t.Fatalf("schema has no $defs/%s", name)
		}
		return d
	}
	action := def("action")["oneOf"].([]any)[1].(map[string]any)
	for _, tc := range []struct {
		name   string
		schema map[string]any
		typ    reflect.Type
	}{
		{"app", root, reflect.TypeFor[AppSpec]()},
		{"icon", root["properties"].(map[string]any)["icon"].(map[string]any), reflect.TypeFor[Icon]()},
		{"theme", root["properties"].(map[string]any)["theme"].(map[string]any), reflect.TypeFor[Theme]()},
		{"links", root["properties"].(map[string]any)["links"].(map[string]any), reflect.TypeFor[Links]()},
		{"screen", def("screen"), reflect.TypeFor[Screen]()},
		{"popup", def("popup"), reflect.TypeFor[Popup]()},
		{"dialog", def("dialog"), reflect.TypeFor[Dialog]()},
		{"element", def("element"), reflect.TypeFor[Element]()},
		{"listItem", def("listItem"), reflect.TypeFor[ListItem]()},
		{"tab", def("tab"), reflect.TypeFor[Tab]()},
		{"action", action, reflect.TypeFor[Action]()},
		{"append", def("append"), reflect.TypeFor[Append]()},
	} {
		var want []string
		for f := range tc.typ.Fields() {
			if tag := strings.Split(f.Tag.Get("yaml"), ",")[0]; tag != "" && tag != "-" {
				want = append(want, tag)
			}
		}
		got := slices.Collect(maps.Keys(tc.schema["properties"].(map[string]any)))
		slices.Sort(want)
		slices.Sort(got)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: schema properties differ from %s's yaml fields (-want +got):\n%s", tc.name, tc.typ, d)
		}
	}
	var kinds []string
	for _, k := range def("element")["properties"].(map[string]any)["type"].(map[string]any)["enum"].([]any) {
		kinds = append(kinds, k.(string))
	}
	if d := cmp.Diff(elementKinds, kinds); d != "" {
		t.Errorf("element type enum differs from elementKinds (-want +got):\n%s", d)
	}
	var verbList []string
	for _, alt := range action["oneOf"].([]any) {
		verbList = append(verbList, alt.(map[string]any)["required"].([]any)[0].(string))
	}
	if d := cmp.Diff(strings.Split(verbs, ", "), verbList); d != "" {
		t.Errorf("action verbs differ from the parser's (-want +got):\n%s", d)
	}
}

// TestDocsCoverSpec checks docs/sim-apps.md names every element kind,
// action verb, template function and field of the spec.
func TestDocsCoverSpec(t *testing.T) {
	data, err := os.ReadFile(docFile)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	var missing []string
	need := func(what, s string) {
		if !strings.Contains(doc, s) {
			missing = append(missing, what+" "+s)
		}
	}
	for _, k := range elementKinds {
		need("element kind", "`"+k+"`")
	}
	for v := range strings.SplitSeq(verbs, ", ") {
		need("action", "`"+v+"`")
	}
	for name := range funcs {
		need("function", "`"+name+"(")
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[AppSpec](), reflect.TypeFor[Icon](), reflect.TypeFor[Theme](), reflect.TypeFor[Links](),
		reflect.TypeFor[Screen](), reflect.TypeFor[Popup](), reflect.TypeFor[Dialog](), reflect.TypeFor[Element](),
		reflect.TypeFor[ListItem](), reflect.TypeFor[Tab](), reflect.TypeFor[Action](), reflect.TypeFor[Append]()} {
		for f := range typ.Fields() {
			if tag := strings.Split(f.Tag.Get("yaml"), ",")[0]; tag != "" && tag != "-" {
				need(typ.Name()+" field", "`"+tag+"`")
			}
		}
	}
	slices.Sort(missing)
	missing = slices.Compact(missing)
	if len(missing) > 0 {
		t.Errorf("%s does not mention:\n  %s", docFile, strings.Join(missing, "\n  "))
	}
}
