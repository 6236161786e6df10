package scene

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse feeds arbitrary bytes to Parse and, when they parse, to Build:
// no panic, errors that say where, and a Text within budget.
func FuzzParse(f *testing.F) {
	// Small seeds only: the fuzzer minimises every new input it finds, and
	// minimising a 30 KB dump takes a minute per input.
	if data, err := os.ReadFile(filepath.Join("testdata", "systemui-only.xml")); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		``, `<`, `<hierarchy>`, `<hierarchy/>`, `<hierarchy><node bounds="[0,0][10,10]" text="a" clickable="true"/></hierarchy>`,
		`<hierarchy><node bounds="[-5,-5][99999999,3]"/></hierarchy>`, `<node bounds="[0,0][1,1]"><node/></node>`,
		`<AppiumAUT><XCUIElementTypeButton x="1.5" y="2" width="30" height="40" label="Go"/></AppiumAUT>`,
		`<XCUIElementTypeApplication x="0" y="0" width="0" height="0"><XCUIElementTypeWindow x="5" y="5" width="10" height="10"/></XCUIElementTypeApplication>`,
		`<hierarchy><node bounds="[0,0][1,1]"></hierarchy>`, `<?xml version="1.0" encoding="UTF-16"?><hierarchy/>`,
		`<hierarchy/><hierarchy/>`, shopSnippet, iosSnippet, `<!DOCTYPE x><hierarchy>&amp;&bogus;</hierarchy>`, "<hierarchy>\x00</hierarchy>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Parse(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "scene: ") {
				t.Fatalf("error without the scene prefix: %v", err)
			}
			if tr != nil {
				t.Fatal("Parse returned a tree with an error")
			}
			return
		}
		if tr.Root == nil || tr.Bytes != len(data) || tr.Nodes < 1 {
			t.Fatalf("tree root %v, bytes %d, nodes %d", tr.Root, tr.Bytes, tr.Nodes)
		}
		for _, budget := range []int{0, 200} {
			s := Build(tr, &Options{Budget: budget})
			want := budget
			if want == 0 {
				want = DefaultBudget
			}
			if n := len(s.Text()); n > want {
				t.Fatalf("budget %d: Text is %d bytes", want, n)
			}
			if s.Fingerprint() != s.Fingerprint() {
				t.Fatal("fingerprint is not stable")
			}
			_ = Diff(s, s)
		}
	})
}

const shopSnippet = `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.apex.shop" content-desc="" clickable="false" enabled="true" bounds="[0,0][1080,2400]">
<node index="0" text="wireless earbuds" resource-id="com.apex.shop:id/search_field" class="android.widget.EditText" package="com.apex.shop" content-desc="" clickable="true" enabled="true" focusable="true" bounds="[126,112][858,210]" />
<node index="1" text="" resource-id="com.apex.shop:id/results" class="androidx.recyclerview.widget.RecyclerView" package="com.apex.shop" content-desc="" scrollable="true" bounds="[0,452][1080,2064]">
<node index="0" text="" resource-id="com.apex.shop:id/product_card" class="android.widget.FrameLayout" package="com.apex.shop" content-desc="" clickable="true" bounds="[24,464][1056,900]">
<node index="0" text="$79.99" resource-id="com.apex.shop:id/price" class="android.widget.TextView" package="com.apex.shop" content-desc="" bounds="[392,688][640,752]" />
<node index="1" text="Add to cart" resource-id="com.apex.shop:id/add_to_cart" class="android.widget.Button" package="com.apex.shop" clickable="false" enabled="false" bounds="[392,818][760,892]" />
</node><node index="1" class="android.widget.FrameLayout" package="com.apex.shop" clickable="true" bounds="[24,2100][1056,2500]" />
</node></node>
<node index="1" text="9:41" resource-id="com.android.systemui:id/clock" class="android.widget.TextView" package="com.android.systemui" bounds="[48,10][170,74]" />
</hierarchy>`

const iosSnippet = `<AppiumAUT><XCUIElementTypeApplication type="XCUIElementTypeApplication" name="Shop" label="Shop" enabled="true" visible="true" x="0" y="0" width="390" height="844">
<XCUIElementTypeTable type="XCUIElementTypeTable" enabled="true" visible="true" x="0" y="100" width="390" height="744">
<XCUIElementTypeCell type="XCUIElementTypeCell" name="a" label="Row" enabled="true" visible="true" x="0" y="100" width="390" height="44"><XCUIElementTypeStaticText type="XCUIElementTypeStaticText" value="Row" label="Row" visible="true" x="16" y="112" width="300" height="20"/></XCUIElementTypeCell>
<XCUIElementTypeCell type="XCUIElementTypeCell" name="b" label="Hidden" enabled="true" visible="false" x="0" y="900" width="390" height="44"/>
</XCUIElementTypeTable>
<XCUIElementTypeSwitch type="XCUIElementTypeSwitch" name="wifi" label="Wi-Fi" value="1" enabled="true" visible="true" x="319" y="55" width="51" height="31"/>
<XCUIElementTypeSecureTextField type="XCUIElementTypeSecureTextField" label="Password" value="Password" placeholderValue="Password" enabled="true" visible="true" x="20" y="60" width="200" height="40"/>
</XCUIElementTypeApplication></AppiumAUT>`

// FuzzFastParse checks the fast scanner against encoding/xml: whenever
// the fast path accepts an input, encoding/xml accepts it too and builds
// the same tree.
func FuzzFastParse(f *testing.F) {
	for _, s := range []string{
		shopSnippet, iosSnippet, `<hierarchy/>`, `<a b='&#10;&lt;&#x4e2d;' c="d"/>`, `<a b="1"c="2"></a >`,
		"<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\r\n<hierarchy>\r\n</hierarchy>\r\n",
		`<hierarchy><node text="&#0;"/></hierarchy>`, `<hierarchy><node text="a&b"/></hierarchy>`, `<x:y/>`, `<hierarchy>text</hierarchy>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := parseFast(data)
		if !ok {
			return
		}
		slow, err := parseDecoder(data)
		if err != nil {
			t.Fatalf("fast scanner accepted what encoding/xml rejects: %v", err)
		}
		if d := cmp.Diff(slow, fast.tree(), cmp.AllowUnexported(Node{})); d != "" {
			t.Fatalf("trees differ (-encoding/xml +fast):\n%s", d)
		}
	})
}

// TestFastParseCorpus checks that the fast scanner handles every corpus
// and own dump, and builds the same tree as encoding/xml.
func TestFastParseCorpus(t *testing.T) {
	files := ownDumpsQuiet()
	if _, err := os.Stat(filepath.Join("..", "..", "shared", "corpus")); err == nil {
		files = append(files, corpusFiles(t)...)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		fast, ok := parseFast(data)
		if !ok {
			t.Errorf("%s: the fast scanner gave up", file)
			continue
		}
		slow, err := parseDecoder(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if d := treeDiff(slow, fast.tree()); d != "" {
			t.Errorf("%s: trees differ (-encoding/xml +fast):\n%s", file, d)
		}
	}
}

func ownDumpsQuiet() []string {
	var files []string
	for _, pattern := range []string{"../examples/*.xml", "testdata/*.xml"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	return files
}

// treeDiff compares two trees node by node in document order. cmp.Diff on
// whole corpus trees is far too slow under the race detector, so it only
// words the first differing node.
func treeDiff(a, b *Tree) string {
	if a.Format != b.Format || a.Width != b.Width || a.Height != b.Height || a.Bytes != b.Bytes || a.Nodes != b.Nodes {
		return fmt.Sprintf("format %q/%q, size %dx%d/%dx%d, bytes %d/%d, nodes %d/%d",
			a.Format, b.Format, a.Width, a.Height, b.Width, b.Height, a.Bytes, b.Bytes, a.Nodes, b.Nodes)
	}
	na, nb := flatten(a.Root), flatten(b.Root)
	if len(na) != len(nb) {
		return fmt.Sprintf("%d nodes reachable / %d", len(na), len(nb))
	}
	for i := range na {
		x, y := *na[i], *nb[i]
		if len(x.Children) != len(y.Children) {
			return fmt.Sprintf("node %d: %d children / %d", i, len(x.Children), len(y.Children))
		}
		x.Children, y.Children = nil, nil
		if !reflect.DeepEqual(x, y) {
			return fmt.Sprintf("node %d: %s", i, cmp.Diff(x, y, cmp.AllowUnexported(Node{})))
		}
	}
	return ""
}

func flatten(root *Node) []*Node {
	var all []*Node
	if root != nil {
		root.Walk(func(n *Node) bool { all = append(all, n); return true })
	}
	return all
}
