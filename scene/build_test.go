package scene

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apexagent/apex/ocr"
	"github.com/google/go-cmp/cmp"
)

func mustScene(t testing.TB, data []byte, budget int) *Scene {
	t.Helper()
	s, err := FromSource(data, &Options{Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func find(s *Scene, pred func(e Element) bool) []Element {
	var out []Element
	for _, e := range s.Elements {
		if pred(e) {
			out = append(out, e)
		}
	}
	return out
}

func TestBuildShopResults(t *testing.T) {
	s := mustScene(t, readFile(t, "../examples/shop-results.xml"), 0)
	if s.Package != "com.apex.shop" || s.Empty || s.Width != 1080 || s.Height != 2400 || s.Dropped != "" {
		t.Fatalf("scene header: package %q empty %v %dx%d dropped %q", s.Package, s.Empty, s.Width, s.Height, s.Dropped)
	}
	lists := find(s, func(e Element) bool { return e.ResourceID == "com.apex.shop:id/results" })
	if len(lists) != 1 || lists[0].Type != "list" || lists[0].Note != "more below" || !lists[0].Flags.Scrollable {
		t.Errorf("results list = %+v; want one scrollable list noting more below", lists)
	}
	cards := find(s, func(e Element) bool { return e.ResourceID == "com.apex.shop:id/product_card" })
	if len(cards) != 4 || !strings.Contains(cards[0].Text, "$79.99") || cards[0].Type != "item" {
		t.Errorf("product cards = %+v; want 4 items whose text holds the price", cards)
	}
	add := find(s, func(e Element) bool { return e.Text == "Add to cart" })
	if len(add) != 3 || !add[2].Flags.Disabled || add[0].Flags.Disabled {
		t.Errorf("Add to cart buttons = %+v; want 3, the third disabled", add)
	}
	if strings.Contains(s.Text(), `"Currently unavailable"`) {
		t.Error("a card's own text is listed again as a separate element")
	}
	for _, e := range s.Elements {
		want := strings.HasPrefix(e.ResourceID, "com.android.systemui:")
		if e.System != want {
			t.Errorf("%s %q System=%v; want %v", e.ID, e.Text+e.Desc, e.System, want)
		}
	}
	// Reading order: the toolbar reads left to right, then down the page.
	var order []string
	for _, e := range s.Elements {
		order = append(order, e.Desc+e.Text)
	}
	if i, j, k := slices.Index(order, "Navigate up"), slices.Index(order, "wireless earbuds"), slices.Index(order, "Voice search"); !(i >= 0 && i < j && j < k) {
		t.Errorf("toolbar order %d %d %d in %q", i, j, k, order)
	}
	for i, e := range s.Elements {
		if e.Part != "" {
			if !strings.HasPrefix(e.ID, e.Part+".") {
				t.Errorf("part %s of %s", e.ID, e.Part)
			}
			continue
		}
		if e.ID != "e"+itoa(i+1) {
			t.Fatalf("element %d has id %s", i, e.ID)
		}
	}
	if !strings.Contains(s.Text(), "\ne20 button \"Add to cart\" id=add_to_cart [576,855]\n") {
		t.Errorf("Text lacks the Add to cart line:\n%s", s.Text())
	}
	if !strings.Contains(s.Text(), `e26 button "Add to cart" id=add_to_cart [576,1775] disabled`) {
		t.Errorf("Text lacks the disabled Add to cart line:\n%s", s.Text())
	}
}

func TestBuildListNotes(t *testing.T) {
	s := mustScene(t, readFile(t, "testdata/settings-appium.xml"), 0)
	l := find(s, func(e Element) bool { return e.Type == "list" })
	if len(l) != 1 || l[0].Note != "+2 items below" {
		t.Errorf("list = %+v; want note +2 items below", l)
	}
	ios := mustScene(t, readFile(t, "../examples/ios-login.xml"), 0)
	tables := find(ios, func(e Element) bool { return e.Type == "list" && e.Note == "+3 items below" })
	if len(tables) != 1 || ios.Format != FormatXCUITest || !strings.HasPrefix(ios.Text(), "screen 393x852pt app=Apex Shop\n") {
		t.Errorf("ios scene:\n%s", ios.Text())
	}
	if sw := find(ios, func(e Element) bool { return e.Type == "switch" }); len(sw) != 1 || !sw[0].Flags.Checked {
		t.Errorf("ios switch = %+v", sw)
	}
	if pw := find(ios, func(e Element) bool { return e.Flags.Password }); len(pw) != 1 || pw[0].Text != "" || pw[0].Type != "input" {
		t.Errorf("ios password field = %+v; want an empty input (value was the placeholder)", pw)
	}
}

func TestBuildVisibility(t *testing.T) {
	src := `<hierarchy rotation="0">
<node class="android.widget.FrameLayout" package="a" bounds="[0,0][1000,2000]">
  <node class="android.widget.FrameLayout" package="a" bounds="[0,0][1000,500]">
    <node class="android.widget.Button" text="inside" clickable="true" package="a" bounds="[10,10][200,100]"/>
    <node class="android.widget.Button" text="outside parent" clickable="true" package="a" bounds="[10,600][200,700]"/>
    <node class="android.widget.Button" text="partly" clickable="true" package="a" bounds="[10,450][200,550]"/>
  </node>
  <node class="android.widget.Button" text="zero" clickable="true" package="a" bounds="[10,800][10,900]"/>
  <node class="android.widget.Button" text="off screen" clickable="true" package="a" bounds="[1200,10][1300,100]"/>
  <node class="android.widget.TextView" text="hidden" package="a" visible-to-user="false" bounds="[10,1000][500,1100]"/>
  <node class="android.widget.LinearLayout" package="a" bounds="[0,1200][1000,1300]">
    <node class="android.widget.TextView" text="wrapped text" package="a" bounds="[10,1200][500,1300]"/>
  </node>
</node></hierarchy>`
	s := mustScene(t, []byte(src), 0)
	var got []string
	for _, e := range s.Elements {
		got = append(got, e.Text)
	}
	want := []string{"inside", "partly", "wrapped text"}
	if !slices.Equal(got, want) {
		t.Fatalf("elements %q; want %q\n%s", got, want, s.Text())
	}
	if p := s.Elements[1].Bounds; p != (Rect{10, 450, 200, 500}) {
		t.Errorf("partly visible button bounds %v; want clipped to its parent", p)
	}
}

func TestEmpty(t *testing.T) {
	for name, src := range map[string][]byte{
		"no nodes":  []byte(`<?xml version="1.0"?><hierarchy rotation="0"/>`),
		"system ui": readFile(t, "testdata/systemui-only.xml"),
	} {
		s := mustScene(t, src, 0)
		if !s.Empty || !strings.Contains(s.Text(), "empty") {
			t.Errorf("%s: Empty=%v\n%s", name, s.Empty, s.Text())
		}
	}
	if s := mustScene(t, readFile(t, "../examples/shop-results.xml"), 0); s.Empty {
		t.Error("shop results scene is Empty")
	}
}

func TestBudgetAlwaysHolds(t *testing.T) {
	data := readFile(t, "../examples/shop-results.xml")
	full := mustScene(t, data, 1<<20)
	prev := len(full.Elements)
	for budget := 3000; budget >= 1; budget -= 7 {
		s := mustScene(t, data, budget)
		if n := len(s.Text()); n > budget {
			t.Fatalf("budget %d: Text is %d bytes", budget, n)
		}
		if len(s.Elements) > prev {
			t.Fatalf("budget %d keeps %d elements, more than a larger budget kept (%d)", budget, len(s.Elements), prev)
		}
		prev = len(s.Elements)
		if len(s.Elements) < len(full.Elements) && !strings.HasPrefix(s.Dropped, "dropped ") && budget > 200 {
			t.Fatalf("budget %d dropped elements without saying so: %q", budget, s.Dropped)
		}
	}
	// Interactive elements outlive every text: at 900 bytes all text is gone
	// and controls remain.
	s := mustScene(t, data, 900)
	for _, e := range s.Elements {
		if !e.Control() && e.Part == "" {
			t.Errorf("budget 900 kept non-interactive %s %q while dropping: %s", e.Type, e.Text, s.Dropped)
		}
	}
	if len(s.Elements) == 0 || !strings.Contains(s.Dropped, "system-bar") {
		t.Errorf("budget 900: %d elements, dropped %q", len(s.Elements), s.Dropped)
	}
}

func TestFingerprintAndDiff(t *testing.T) {
	base := readFile(t, "../examples/shop-results.xml")
	a := mustScene(t, base, 0)
	clock := bytes.ReplaceAll(base, []byte(`text="9:41"`), []byte(`text="10:02"`))
	clock = bytes.ReplaceAll(clock, []byte(`content-desc="9:41 AM"`), []byte(`content-desc="10:02 AM"`))
	clock = bytes.ReplaceAll(clock, []byte(`content-desc="Battery 87 percent."`), []byte(`content-desc="Battery 86 percent."`))
	clock = bytes.ReplaceAll(clock, []byte(`text="87%"`), []byte(`text="86%"`))
	b := mustScene(t, clock, 0)
	if a.Fingerprint() != b.Fingerprint() {
		t.Error("fingerprint changed with the status-bar clock and battery")
	}
	if d := Diff(a, b); !d.Empty() {
		t.Errorf("Diff over a clock change = %+v; want empty", d)
	}

	price := bytes.Replace(base, []byte(`text="$79.99"`), []byte(`text="$74.99"`), 1)
	c := mustScene(t, price, 0)
	if a.Fingerprint() == c.Fingerprint() {
		t.Error("fingerprint ignores a price change")
	}
	d := Diff(a, c)
	if len(d.Changed) != 1 || !slices.Equal(d.Changed[0].Fields, []string{"text"}) || !strings.Contains(d.Changed[0].After.Text, "$74.99") || len(d.Appeared)+len(d.Disappeared) != 0 {
		t.Errorf("Diff over a price change = %+v", d)
	}

	toggled := bytes.Replace(base, []byte(`text="Under $50" resource-id="" class="com.google.android.material.chip.Chip" package="com.apex.shop" content-desc="" checkable="true" checked="true"`),
		[]byte(`text="Under $50" resource-id="" class="com.google.android.material.chip.Chip" package="com.apex.shop" content-desc="" checkable="true" checked="false"`), 1)
	if bytes.Equal(toggled, base) {
		t.Fatal("test setup: chip not found")
	}
	d = Diff(a, mustScene(t, toggled, 0))
	if len(d.Changed) != 1 || !slices.Equal(d.Changed[0].Fields, []string{"checked"}) {
		t.Errorf("Diff over a toggled chip = %+v", d)
	}

	settings := mustScene(t, readFile(t, "testdata/settings-appium.xml"), 0)
	d = Diff(a, settings)
	if len(d.Appeared) == 0 || len(d.Disappeared) == 0 {
		t.Errorf("Diff between two apps: %d appeared, %d disappeared", len(d.Appeared), len(d.Disappeared))
	}
	for _, e := range append(d.Appeared, d.Disappeared...) {
		if e.System {
			t.Errorf("Diff reports system-bar element %+v", e)
		}
	}
}

func TestLooksVolatile(t *testing.T) {
	for s, want := range map[string]bool{
		"9:41": true, "12:45 PM": true, "87%": true, "Battery 87 percent.": true, "下午3:45": true,
		"$79.99": false, "Order 12": false, "Meeting at 9:30 with Ana": false, "": false,
	} {
		if got := looksVolatile(s); got != want {
			t.Errorf("looksVolatile(%q) = %v; want %v", s, got, want)
		}
	}
}

// TestPartsKeepResourceIDs: a text with a resource id that its row absorbs
// stays in Elements as a part of the row (id "eN.k"), out of Text, and
// follows its row through Fuse's renumbering and the budget's cuts.
func TestPartsKeepResourceIDs(t *testing.T) {
	data := readFile(t, "../examples/shop-results.xml")
	check := func(name string, s *Scene) map[string]string {
		t.Helper()
		ids := map[string]string{} // part's resource id → its row's text
		for _, e := range s.Elements {
			if e.Part == "" {
				continue
			}
			row, ok := s.Element(e.Part)
			if !ok || !strings.HasPrefix(e.ID, e.Part+".") || !contains(row.Bounds, e.Bounds) {
				t.Errorf("%s: part %s of %s (%+v) is not inside its row", name, e.ID, e.Part, row)
			}
			if strings.Contains(s.Text(), e.ID+" ") {
				t.Errorf("%s: Text shows part %s", name, e.ID)
			}
			ids[shortID(e.ResourceID)+"="+e.Text] = row.Text
		}
		return ids
	}
	s := mustScene(t, data, DefaultBudget)
	parts := check("built", s)
	if row, ok := parts["price=$79.99"]; !ok || !strings.Contains(row, "$79.99") {
		t.Fatalf("no price part in a row that says it: %v", parts)
	}
	fused := Fuse(s, &ocr.Result{Width: 1080, Height: 2400, Lines: []ocr.Line{line("Hello", 0.9, 10, 2300, 200, 2350)}}, nil)
	if d := cmp.Diff(parts, check("fused", fused)); d != "" {
		t.Errorf("Fuse changed the parts (-built +fused):\n%s", d)
	}
	tight := mustScene(t, data, 900)
	check("budget 900", tight)
}
