package locate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/scene"
)

func el(id, typ, text, desc, rid string, x0, y0, x1, y1 int, clickable bool) scene.Element {
	return scene.Element{ID: id, Type: typ, Text: text, Desc: desc, ResourceID: rid,
		Bounds: scene.Rect{X0: x0, Y0: y0, X1: x1, Y1: y1}, Flags: scene.Flags{Clickable: clickable, Editable: typ == "input"}, Source: "tree", Confidence: 1}
}

// shop is a hand-made results screen of a shop app.
var shop = &scene.Scene{Width: 1080, Height: 2400, Package: "com.apex.shop", Elements: []scene.Element{
	el("e1", "input", "", "Search products", "com.apex.shop:id/search", 40, 100, 900, 200, true),
	el("e2", "button", "Search", "", "com.apex.shop:id/search_go", 900, 100, 1040, 200, true),
	el("e3", "text", "Running shoes", "", "com.apex.shop:id/title", 40, 300, 700, 360, false),
	el("e4", "button", "Add to cart", "", "com.apex.shop:id/add", 700, 300, 1040, 400, true),
	el("e5", "text", "Trail shoes", "", "com.apex.shop:id/title", 40, 500, 700, 560, false),
	el("e6", "button", "Add to cart", "", "com.apex.shop:id/add", 700, 500, 1040, 600, true),
	el("e7", "image", "", "Cart", "com.apex.shop:id/cart", 960, 2200, 1040, 2300, true),
	el("e8", "tab", "Home", "", "", 0, 2300, 360, 2400, true),
	el("e9", "text", "Cart (0)", "", "com.apex.shop:id/cart_count", 600, 2300, 900, 2400, false),
	el("e10", "button", "Checkout", "", "", 300, 2000, 780, 2100, true),
	el("e11", "text", "Checkout", "", "", 400, 2020, 680, 2080, false),
	el("e12", "switch", "", "Dark mode", "com.android.settings:id/dark", 900, 700, 1040, 780, true),
	el("e13", "text", "Hidden", "", "", 0, 0, 0, 0, false),
}}

var cjk = &scene.Scene{Width: 1080, Height: 2400, Package: "com.apex.cn", Elements: []scene.Element{
	el("e1", "input", "", "搜索商品", "com.apex.cn:id/search", 40, 100, 900, 200, true),
	el("e2", "button", "搜索", "", "com.apex.cn:id/go", 900, 100, 1040, 200, true),
	el("e3", "button", "加入购物车", "", "", 700, 300, 1040, 400, true),
	el("e4", "tab", "我的", "", "", 700, 2300, 1040, 2400, true),
}}

func TestFind(t *testing.T) {
	cases := []struct {
		name  string
		scene *scene.Scene
		loc   action.Locator
		want  string
	}{
		{"scene id", shop, action.Locator{Prompt: "e7"}, "e7"},
		{"scene id field", shop, action.Locator{ID: "e3"}, "e3"},
		{"exact text", shop, action.Locator{Prompt: "Search"}, "e2"},
		{"quoted with type", shop, action.Locator{Prompt: `the "Search" button`}, "e2"},
		{"exact desc", shop, action.Locator{Prompt: "Cart"}, "e7"},
		{"ignoring case", shop, action.Locator{Prompt: "checkOUT"}, "e10"},
		{"label inside its button", shop, action.Locator{Prompt: "Checkout"}, "e10"},
		{"resource id field", shop, action.Locator{ID: "com.apex.shop:id/search"}, "e1"},
		{"resource id entry name", shop, action.Locator{ID: "cart_count"}, "e9"},
		{"inline id prompt", shop, action.Locator{Prompt: "{id: com.apex.shop:id/search_go}"}, "e2"},
		{"the search box", shop, action.Locator{Prompt: "the search box"}, "e1"},
		{"fuzzy text", shop, action.Locator{Prompt: "Running"}, "e3"},
		{"fuzzy desc", shop, action.Locator{Prompt: "dark mode switch"}, "e12"},
		{"text field", shop, action.Locator{Text: "Trail shoes"}, "e5"},
		{"text field fuzzy", shop, action.Locator{Text: "trail"}, "e5"},
		{"desc field", shop, action.Locator{Desc: "Search products"}, "e1"},
		{"type only", shop, action.Locator{Type: "tab"}, "e8"},
		{"type and index", shop, action.Locator{Type: "button", Index: 2}, "e6"},
		{"text and index", shop, action.Locator{Text: "Add to cart", Index: 1}, "e6"},
		{"text and index 0", shop, action.Locator{Text: "Add to cart"}.WithIndex(0), "e4"},
		{"ordinal", shop, action.Locator{Prompt: `the second "Add to cart" button`}, "e6"},
		{"first ordinal", shop, action.Locator{Prompt: `the first "Add to cart" button`}, "e4"},
		{"last", shop, action.Locator{Prompt: `the last "Add to cart" button`}, "e6"},
		{"id and text", shop, action.Locator{ID: "com.apex.shop:id/title", Text: "Trail shoes"}, "e5"},
		{"cjk corner quotes", cjk, action.Locator{Prompt: "「搜索」"}, "e2"},
		{"cjk with verb", cjk, action.Locator{Prompt: "点击「加入购物车」按钮"}, "e3"},
		{"cjk fuzzy desc", cjk, action.Locator{Prompt: "搜索商品"}, "e1"},
		{"cjk box suffix", cjk, action.Locator{Prompt: "搜索框"}, "e1"},
		{"cjk plain", cjk, action.Locator{Prompt: "我的"}, "e4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := Find(c.scene, c.loc)
			if err != nil {
				t.Fatalf("Find(%v): %v", c.loc, err)
			}
			if e.ID != c.want {
				t.Fatalf("Find(%v) = %s (%s %q); want %s", c.loc, e.ID, e.Type, e.Text, c.want)
			}
		})
	}
}

// TestMatchExactness pins how exactly each kind of rule matched: checks
// weigh their evidence by it.
func TestMatchExactness(t *testing.T) {
	cases := []struct {
		name string
		loc  action.Locator
		want Exactness
	}{
		{"scene id", action.Locator{Prompt: "e7"}, Exact},
		{"exact text", action.Locator{Prompt: "Search"}, Exact},
		{"quoted with type", action.Locator{Prompt: `the "Search" button`}, Exact},
		{"exact desc", action.Locator{Prompt: "Cart"}, Exact},
		{"resource id entry name", action.Locator{Prompt: "cart_count"}, Exact},
		{"type only", action.Locator{Type: "tab"}, Exact},
		{"point", action.Locator{Point: &device.Point{X: 100, Y: 2350}}, Exact},
		{"ignoring case", action.Locator{Prompt: "checkOUT"}, IgnoringCase},
		{"text contains", action.Locator{Prompt: "Running"}, Contained},
		{"desc contains", action.Locator{Prompt: "products"}, Contained},
		{"all words", action.Locator{Prompt: "shoes trail"}, Loose},
		{"structured exact", action.Locator{Text: "Trail shoes"}, Exact},
		{"structured ignoring case", action.Locator{Text: "trail SHOES"}, IgnoringCase},
		{"structured contains", action.Locator{Text: "trail"}, Contained},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, how, err := Match(shop, c.loc)
			if err != nil {
				t.Fatalf("Match(%v): %v", c.loc, err)
			}
			if how != c.want {
				t.Fatalf("Match(%v) exactness %d, want %d", c.loc, how, c.want)
			}
		})
	}
	var amb *AmbiguousError
	if _, how, err := Match(shop, action.Locator{Prompt: "shoes"}); !errors.As(err, &amb) || amb.How != Contained || how != Contained {
		t.Errorf("ambiguous fuzzy match: exactness %d, %v", how, err)
	}
}

func TestAmbiguousListsCandidates(t *testing.T) {
	_, err := Find(shop, action.Locator{Prompt: "Add to cart"})
	var amb *AmbiguousError
	if !errors.As(err, &amb) {
		t.Fatalf("err = %v; want *AmbiguousError", err)
	}
	if len(amb.Candidates) != 2 || amb.Candidates[0].ID != "e4" || amb.Candidates[1].ID != "e6" {
		t.Fatalf("candidates = %+v", amb.Candidates)
	}
	for _, want := range []string{"e4 button \"Add to cart\"", "[700,300][1040,400]", "e6", "[700,500][1040,600]", "index: N"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if errors.Is(err, action.ErrNotFound) {
		t.Error("ambiguity must not read as not found")
	}
	if _, err := Find(shop, action.Locator{Prompt: "shoes"}); !errors.As(err, &amb) || len(amb.Candidates) != 2 {
		t.Errorf("fuzzy ambiguity: err = %v", err)
	}
}

func TestNotFound(t *testing.T) {
	cases := []struct {
		name   string
		loc    action.Locator
		noRule bool
	}{
		{"absent text", action.Locator{Prompt: `the "Pay now" button`}, false},
		{"description", action.Locator{Prompt: "the blue icon at the top right"}, true},
		{"absent id", action.Locator{ID: "com.apex.shop:id/nope"}, false},
		{"stale scene id", action.Locator{ID: "e99"}, false},
		{"invisible element", action.Locator{Text: "Hidden"}, false},
		{"index past the end", action.Locator{Text: "Add to cart", Index: 5}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Find(shop, c.loc)
			if !errors.Is(err, action.ErrNotFound) || !errors.Is(err, device.ErrNotFound) {
				t.Fatalf("err = %v; want ErrNotFound", err)
			}
			if errors.Is(err, ErrNoRule) != c.noRule {
				t.Fatalf("err = %v; ErrNoRule = %v, want %v", err, !c.noRule, c.noRule)
			}
		})
	}
	_, err := Find(shop, action.Locator{Prompt: `"Pay now"`})
	if !strings.Contains(err.Error(), `e2 "Search"`) {
		t.Errorf("not-found error should show what is on screen: %v", err)
	}
}

func TestResolverTargetsCentre(t *testing.T) {
	tg, err := New(shop).Resolve(context.Background(), action.Locator{Prompt: "Search"})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Point != (device.Point{X: 970, Y: 150}) || tg.Element == nil || tg.Element.ID != "e2" {
		t.Fatalf("target = %+v", tg)
	}
}

func TestLiveObservesAgainAfterFirstUse(t *testing.T) {
	calls := 0
	lv := &Live{Scene: shop, Observe: func(ctx context.Context) (*scene.Scene, error) { calls++; return cjk, nil }}
	if _, err := lv.Resolve(context.Background(), action.Locator{Prompt: "Search"}); err != nil || calls != 0 {
		t.Fatalf("first resolve: err=%v observes=%d", err, calls)
	}
	if _, err := lv.Resolve(context.Background(), action.Locator{Prompt: "搜索"}); err != nil || calls != 1 {
		t.Fatalf("second resolve: err=%v observes=%d", err, calls)
	}
}

func FuzzPrompt(f *testing.F) {
	for _, s := range []string{"e1", `the "Add" button`, "「搜索」", "{id: x, index: 2}", "the second item", "搜索框", "“x”", "{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		_, err := Find(shop, action.Locator{Prompt: p})
		_ = err
	})
}

// TestFieldsAndTaps: a tap's target is not the text field that matches as
// well (or better, while it is being typed into); a field's locator
// prefers the field; an ambiguity error names the field it passed over.
func TestFieldsAndTaps(t *testing.T) {
	typed := el("e1", "input", "Trail shoes", "", "com.apex.shop:id/search", 40, 100, 900, 200, true)
	typed.Flags.Focused = true
	idle := typed
	idle.Flags.Focused = false
	one := &scene.Scene{Width: 1080, Height: 2400, Elements: []scene.Element{typed,
		el("e2", "item", "Trail shoes · $59", "", "", 0, 300, 1080, 400, true)}}
	hint := &scene.Scene{Width: 1080, Height: 2400, Elements: []scene.Element{idle,
		el("e2", "item", "Trail shoes · $59", "", "", 0, 300, 1080, 400, true)}}
	two := &scene.Scene{Width: 1080, Height: 2400, Elements: []scene.Element{typed,
		el("e2", "button", "Trail shoes", "", "", 0, 300, 1080, 400, true),
		el("e3", "button", "Trail shoes", "", "", 0, 500, 1080, 600, true)}}
	pw := el("e1", "input", "••••", "", "com.apex.login:id/password", 40, 100, 900, 200, true)
	pw.Flags.Focused = true
	ids := &scene.Scene{Width: 1080, Height: 2400, Elements: []scene.Element{pw,
		el("e2", "button", "Forgot password?", "", "com.apex.login:id/forgot_password", 0, 300, 1080, 400, true)}}
	tapOf := func(p string) action.Locator {
		return *action.Tap.MustCall(&action.TapParams{Locate: action.Locator{Prompt: p}}).Locators()[0].Locator
	}
	fieldOf := func(p string) action.Locator {
		return *action.Input.MustCall(&action.InputParams{Value: "x", Locate: &action.Locator{Prompt: p}}).Locators()[0].Locator
	}
	cases := []struct {
		name  string
		scene *scene.Scene
		loc   action.Locator
		want  string
	}{
		{"tap passes over the field being typed", one, tapOf("Trail shoes"), "e2"},
		{"tap takes an idle field that matches best", hint, tapOf("Trail shoes"), "e1"},
		{"input takes the field", one, fieldOf("Trail shoes"), "e1"},
		{"input prefers the field over a closer label", two, fieldOf("Trail shoes"), "e1"},
		{"an index counts fields too", two, tapOf("Trail shoes").WithIndex(0), "e1"},
		{"a resource id names the field being typed", ids, action.Locator{ID: "password"}, "e1"},
		{"a resource id prompt names it too", ids, action.Locator{Prompt: "password"}, "e1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Find(tc.scene, tc.loc)
			if err != nil {
				t.Fatal(err)
			}
			if e.ID != tc.want {
				t.Errorf("found %s %q, want %s", e.ID, e.Text, tc.want)
			}
		})
	}
	_, err := Find(two, tapOf("Trail shoes"))
	var amb *AmbiguousError
	if !errors.As(err, &amb) {
		t.Fatalf("err = %v, want an ambiguity between e2 and e3", err)
	}
	if len(amb.Candidates) != 2 || len(amb.SetAside) != 1 || amb.SetAside[0].ID != "e1" ||
		!strings.Contains(err.Error(), "also matched, text fields, passed over for a target that is not one: e1 input") {
		t.Errorf("candidates %v, set aside %v: %v", amb.Candidates, amb.SetAside, err)
	}
}

// TestFocusedFieldByID: a field being typed into is still the element its
// own id names, not a control whose id merely contains it.
func TestFocusedFieldByID(t *testing.T) {
	field := el("e1", "input", "secret", "", "com.apex.login:id/password", 40, 100, 900, 200, true)
	field.Flags.Focused = true
	sc := &scene.Scene{Width: 1080, Height: 2400, Elements: []scene.Element{field,
		el("e2", "button", "Forgot password?", "", "com.apex.login:id/forgot_password", 0, 300, 1080, 400, true)}}
	e, err := Find(sc, action.Locator{ID: "password"})
	if err != nil || e.ID != "e1" {
		t.Fatalf("{id: password} found %s (%v), want the focused field e1", e.ID, err)
	}
}
