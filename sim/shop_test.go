package sim

import (
	"testing"
	"time"
)

// openApp launches pkg from the launcher by tapping its icon, dismissing a
// promotional popup if the seed shows one.
func openApp(t *testing.T, p *Phone, label string) {
	t.Helper()
	p.KeyEvent(KeycodeHome)
	tapOn(t, p, label)
}

func TestShopSearchAddToCartCheckout(t *testing.T) {
	p, clk := newTestPhone(t, 1)
	openApp(t, p, "Shop")
	clk.Advance(2 * time.Second) // let a promo popup show, if the seed wants one
	if d := dumpOf(t, p); d.find("Close") != nil {
		tapOn(t, p, "Close")
	}
	tapOn(t, p, "search")
	if !p.KeyboardShown() {
		t.Fatal("keyboard not shown after tapping the search field")
	}
	if n := dumpOf(t, p).must("search"); n.Focused != "true" {
		t.Errorf("search field not focused after tap: %+v", n)
	}
	p.InputText("espresso") // nothing matches
	if d := dumpOf(t, p); d.find("No products match espresso") == nil {
		t.Fatalf("want the empty-results text, got %s", d.texts())
	}
	for range len("espresso") {
		p.KeyEvent(KeycodeDel)
	}
	p.InputText("french")
	p.KeyEvent(KeycodeEnter)
	if p.KeyboardShown() {
		t.Error("keyboard still shown after ENTER")
	}
	d := dumpOf(t, p)
	items := d.all("product_item")
	if len(items) != 3 {
		t.Fatalf("search french: %d results, want 3; screen: %s", len(items), d.texts())
	}
	name := items[0].child("title")
	x, y := items[0].center()
	p.Tap(x, y)
	if _, act := p.Foreground(); act != ".ProductActivity" {
		t.Fatalf("activity after tapping a result = %s", act)
	}
	d = dumpOf(t, p)
	if d.must("product_name").Text != name {
		t.Errorf("product page shows %q, tapped %q", d.must("product_name").Text, name)
	}
	tapOn(t, p, "add_to_cart")
	tapOn(t, p, "add_to_cart")
	if d := dumpOf(t, p); d.find("Added to cart") == nil || d.find("Cart (2)") == nil {
		t.Errorf("after two adds: %s", d.texts())
	}
	st, _ := p.State("com.apex.shop")
	cart := st["cart"].([]any)
	if len(cart) != 1 || cart[0].(map[string]any)["name"] != name || cart[0].(map[string]any)["qty"] != 2.0 {
		t.Fatalf("cart = %v, want one line of %q × 2", cart, name)
	}

	tapOn(t, p, "cart_button")
	tapOn(t, p, "Increase quantity")
	if q := dumpOf(t, p).must("quantity").Text; q != "3" {
		t.Errorf("quantity after + = %s, want 3", q)
	}
	tapOn(t, p, "Decrease quantity")
	if q := dumpOf(t, p).must("quantity").Text; q != "2" {
		t.Errorf("quantity after − = %s, want 2", q)
	}
	tapOn(t, p, "checkout")
	tapOn(t, p, "place_order")
	if d := dumpOf(t, p); d.find("Please fill in all address fields") == nil {
		t.Fatalf("empty address accepted: %s", d.texts())
	}
	for _, f := range []struct{ id, text string }{
		{"ship_name", "Ada Lovelace"}, {"ship_street", "12 Analytical Way"}, {"ship_city", "London"}, {"ship_zip", "N1 9GU"},
	} {
		tapOn(t, p, f.id)
		p.InputText(f.text)
	}
	p.KeyEvent(KeycodeEscape)
	tapOn(t, p, "Express ($9.99, next day)")
	if n := dumpOf(t, p).must("shipping_express"); n.Checked != "true" {
		t.Errorf("express radio not checked: %+v", n)
	}
	tapOn(t, p, "place_order")
	d = dumpOf(t, p)
	if d.find("Thank you!") == nil || d.find("Order #1001 confirmed") == nil {
		t.Fatalf("no confirmation: %s", d.texts())
	}
	st, _ = p.State("com.apex.shop")
	if c := st["cart"].([]any); len(c) != 0 {
		t.Errorf("cart not emptied: %v", c)
	}
	orders := st["orders"].([]any)
	if len(orders) != 1 {
		t.Fatalf("orders = %v", orders)
	}
	o := orders[0].(map[string]any)
	if o["address"] != "Ada Lovelace, 12 Analytical Way, London N1 9GU" || o["shipping"] != "express" {
		t.Errorf("order = %v", o)
	}
	// BACK from the confirmation leaves the app: the stack was reset.
	p.KeyEvent(KeycodeBack)
	if pkg, _ := p.Foreground(); pkg != Launcher {
		t.Errorf("BACK from confirmation went to %s", pkg)
	}
}

func TestShopListScrollsOverAllProducts(t *testing.T) {
	p, _ := newTestPhone(t, 2)
	openApp(t, p, "Shop")
	seen := map[string]bool{}
	for range 60 {
		d := dumpOf(t, p)
		list := d.must("results")
		if list.Scrollable != "true" {
			t.Fatal("results list not scrollable")
		}
		for _, n := range d.all("product_item") {
			if s := n.child("title"); s != "" {
				seen[s] = true
			}
		}
		x, _ := list.center()
		p.Swipe(x, list.y1-50, x, list.y0+50, 300*time.Millisecond)
	}
	if len(seen) < 100 {
		t.Errorf("scrolled over %d distinct products, want ≥ 100", len(seen))
	}
}

func TestShopCrashLeavesApp(t *testing.T) {
	p, _ := newTestPhone(t, 3)
	openApp(t, p, "Shop")
	d := dumpOf(t, p)
	x, y := d.all("product_item")[0].center()
	p.Tap(x, y)
	tapOn(t, p, "write_review")
	if pkg, _ := p.Foreground(); pkg != Launcher {
		t.Fatalf("after crash foreground = %s, want launcher", pkg)
	}
	var fatal, npe bool
	for _, l := range p.Logcat() {
		fatal = fatal || contains(l, "E AndroidRuntime: FATAL EXCEPTION: main")
		npe = npe || contains(l, "java.lang.NullPointerException")
	}
	if !fatal || !npe {
		t.Errorf("logcat lacks the crash:\n%v", p.Logcat())
	}
}

func TestPromoPopupIsSeeded(t *testing.T) {
	shows := func(seed int64) bool {
		p, clk := newTestPhone(t, seed)
		openApp(t, p, "Shop")
		if dumpOf(t, p).find("promo_close") != nil {
			t.Fatal("popup shown before its delay")
		}
		clk.Advance(time.Second)
		return dumpOf(t, p).find("promo_close") != nil
	}
	var shown, hidden int
	for seed := int64(0); seed < 20; seed++ {
		a, b := shows(seed), shows(seed)
		if a != b {
			t.Fatalf("seed %d: popup shown %v then %v", seed, a, b)
		}
		if a {
			shown++
		} else {
			hidden++
		}
	}
	if shown == 0 || hidden == 0 {
		t.Errorf("over 20 seeds the popup showed %d times and hid %d: the chance is not applied", shown, hidden)
	}
}

func TestDelayedElementAppearsWithClock(t *testing.T) {
	p, clk := newTestPhone(t, 4)
	openApp(t, p, "Shop")
	if dumpOf(t, p).find("free_shipping") != nil {
		t.Fatal("delayed element shown at once")
	}
	shot1, _ := p.Screenshot()
	clk.Advance(1499 * time.Millisecond)
	if dumpOf(t, p).find("free_shipping") != nil {
		t.Fatal("delayed element shown before 1.5 s")
	}
	clk.Advance(time.Millisecond)
	if dumpOf(t, p).find("Free shipping on orders over $50") == nil {
		t.Fatal("delayed element missing after 1.5 s")
	}
	shot2, _ := p.Screenshot()
	if string(shot1) == string(shot2) {
		t.Error("screenshot cache served the old picture after a delayed element appeared")
	}
}
