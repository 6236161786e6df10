package ios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apexagent/apex/scene"
	"github.com/google/go-cmp/cmp"
)

func TestScaleSource(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"element", `<XCUIElementTypeButton type="XCUIElementTypeButton" name="Go" x="16.5" y="120" width="120" height="44"/>`,
			`<XCUIElementTypeButton type="XCUIElementTypeButton" name="Go" x="50" y="360" width="360" height="132"/>`},
		{"other attributes untouched", `<a name="x" label='y="1"' value="width"/>`, `<a name="x" label='y="1"' value="width"/>`},
		{"markup kept", "<?xml version=\"1.0\"?>\n<!-- x=\"1\" --><a x=\"1\"><![CDATA[<b x=\"2\">]]></a>",
			"<?xml version=\"1.0\"?>\n<!-- x=\"1\" --><a x=\"3\"><![CDATA[<b x=\"2\">]]></a>"},
		{"spaces around =", "<a x = \"2\"\n\ty='3'>t</a>", "<a x = \"6\"\n\ty='9'>t</a>"},
		{"not a number", `<a x="NaN" y="" width="abc"/>`, `<a x="NaN" y="" width="abc"/>`},
		{"negative", `<a x="-10" y="-0.2"/>`, `<a x="-30" y="-1"/>`},
		{"escaped text", `<a label="&lt;x=&quot;1&quot;&gt;" x="1"/>`, `<a label="&lt;x=&quot;1&quot;&gt;" x="3"/>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ScaleSource([]byte(tt.in), 3)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{`<a x="1`, `<a x=1>`, `<a x>`, `<!-- open`, `<a`} {
		if _, err := ScaleSource([]byte(bad), 3); err == nil {
			t.Errorf("ScaleSource(%q) succeeded", bad)
		}
	}
	if _, err := ScaleSource([]byte("<a/>"), 0); err == nil {
		t.Error("scale 0 accepted")
	}
}

// TestScaledCorpus scales the real iOS sources and checks that scene reads
// the same tree, every bound multiplied.
func TestScaledCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/corpus/ios/*.xml")
	if len(files) == 0 {
		t.Skip("no real iOS sources: ../shared/corpus/ios is absent (it is kept outside the repository)")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			orig, err := scene.Parse(data)
			if err != nil {
				t.Skipf("scene cannot read the original: %v", err)
			}
			scaled, err := ScaleSource(data, 3)
			if err != nil {
				t.Fatalf("ScaleSource: %v", err)
			}
			got, err := scene.Parse(scaled)
			if err != nil {
				t.Fatalf("scene.Parse of the scaled source: %v", err)
			}
			if got.Nodes != orig.Nodes || got.Format != orig.Format {
				t.Fatalf("scaled tree has %d nodes (%s); original %d (%s)", got.Nodes, got.Format, orig.Nodes, orig.Format)
			}
			var walk func(a, b *scene.Node)
			walk = func(a, b *scene.Node) {
				if want := (scene.Rect{X0: a.Bounds.X0 * 3, Y0: a.Bounds.Y0 * 3, X1: a.Bounds.X1 * 3, Y1: a.Bounds.Y1 * 3}); !near(want, b.Bounds) {
					t.Errorf("%s %q: bounds %v; want about %v", a.Class, a.Text, b.Bounds, want)
				}
				if a.Text != b.Text || a.Class != b.Class {
					t.Errorf("node changed: %s %q → %s %q", a.Class, a.Text, b.Class, b.Text)
				}
				for i := range a.Children {
					walk(a.Children[i], b.Children[i])
				}
			}
			walk(orig.Root, got.Root)
			if !strings.Contains(string(scaled), "XCUIElementType") {
				t.Error("element types lost")
			}
		})
	}
}

// near allows the rounding of fractional points.
func near(a, b scene.Rect) bool {
	d := func(x, y int) bool { return x-y <= 3 && y-x <= 3 }
	return d(a.X0, b.X0) && d(a.Y0, b.Y0) && d(a.X1, b.X1) && d(a.Y1, b.Y1)
}

func FuzzScaleSource(f *testing.F) {
	f.Add([]byte(`<XCUIElementTypeButton x="16.5" y="120" width="120" height="44"/>`))
	f.Add([]byte("<?xml version=\"1.0\"?><!-- c --><a x='1'><![CDATA[x]]></a>"))
	f.Add([]byte(`<a x = "1" label="<b>"/>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := ScaleSource(data, 3)
		if err != nil {
			return
		}
		// Scaling by 1 keeps integers and everything that is not geometry.
		if _, err := ScaleSource(out, 1); err != nil {
			t.Fatalf("scaled output does not rescan: %v", err)
		}
		if !strings.Contains(string(data), "x") && !strings.Contains(string(data), "y") && !strings.Contains(string(data), "width") && !strings.Contains(string(data), "height") && string(out) != string(data) {
			t.Fatalf("a source without geometry changed: %q → %q", data, out)
		}
	})
}
