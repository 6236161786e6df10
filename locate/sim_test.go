package locate_test

import (
	"testing"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/locate"
	"github.com/apexagent/apex/scene"
	"github.com/apexagent/apex/sim"
)

// stillClock never moves, so no timed popup (the Shop's sale) opens.
type stillClock struct{}

func (stillClock) Now() time.Time { return time.Date(2026, 1, 5, 9, 41, 0, 0, time.UTC) }

// phone is a simulated Android phone with the built-in apps, pkg in front.
func phone(t *testing.T, pkg string) *sim.Phone {
	t.Helper()
	p, err := sim.NewPhone(sim.Options{Clock: stillClock{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Launch(pkg); err != nil {
		t.Fatal(err)
	}
	return p
}

// look is the phone's Scene, built from its uiautomator dump.
func look(t *testing.T, p *sim.Phone) *scene.Scene {
	t.Helper()
	dump, err := p.DumpUI()
	if err != nil {
		t.Fatal(err)
	}
	s, err := scene.FromSource(dump, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tapOn finds l on the phone's screen and taps the element's centre.
func tapOn(t *testing.T, p *sim.Phone, l action.Locator) {
	t.Helper()
	s := look(t, p)
	e, err := locate.Find(s, l)
	if err != nil {
		t.Fatalf("%v\n%s", err, s.Text())
	}
	p.Tap(e.Bounds.Center())
}

// TestResourceIDInARow: the Shop's cart row absorbs the quantity text
// ({id: quantity} is a TextView of its own in the dump); the row still
// reads as one element, and the resource id still finds the quantity.
func TestResourceIDInARow(t *testing.T) {
	p := phone(t, "com.apex.shop")
	tapOn(t, p, action.Locator{Prompt: "Premium Wireless Earbuds"})
	tapOn(t, p, action.Locator{Prompt: "Add to cart"})
	tapOn(t, p, action.Locator{ID: "cart_button"})
	s := look(t, p)

	for _, tc := range []struct {
		name string
		loc  action.Locator
		text string
	}{
		{"id", action.Locator{ID: "quantity"}, "1"},
		{"full resource id", action.Locator{ID: "com.apex.shop:id/quantity"}, "1"},
		{"id and text", action.Locator{ID: "quantity", Text: "1"}, "1"},
		{"id in a prompt", action.Locator{Prompt: "{id: quantity}"}, "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := locate.Find(s, tc.loc)
			if err != nil {
				t.Fatalf("%v\n%s", err, s.Text())
			}
			if e.Text != tc.text || e.Part == "" {
				t.Errorf("found %+v, want the quantity %q, a part of its row", e, tc.text)
			}
			row, ok := s.Element(e.Part)
			if !ok || !row.Bounds.Contains(e.Bounds.Center()) {
				t.Errorf("part of %s (%+v), which does not hold it", e.Part, row)
			}
		})
	}
	// By text, the row answers, as before: it says what tapping it means.
	row, err := locate.Find(s, action.Locator{Prompt: "Premium Wireless Earbuds"})
	if err != nil || row.Type != "item" || row.Part != "" {
		t.Errorf("Premium Wireless Earbuds = %+v, %v; want the cart row", row, err)
	}
	// Its increase button is addressable as ever, and the part follows it.
	tapOn(t, p, action.Locator{Desc: "Increase quantity"})
	if e, err := locate.Find(look(t, p), action.Locator{ID: "quantity"}); err != nil || e.Text != "2" {
		t.Errorf("after increase: quantity %+v, %v; want 2", e, err)
	}
}

// TestTapPrefersWhatIsNotTheFieldBeingTyped: after typing "compact
// toaster" in the Shop's search field, a tap on "Compact Toaster" opens the
// product (the field's text matches more closely, but it is the text just
// typed), while typing "into Compact Toaster" still goes to the field.
func TestTapPrefersWhatIsNotTheFieldBeingTyped(t *testing.T) {
	p := phone(t, "com.apex.shop")
	tapOn(t, p, action.Locator{ID: "search"})
	p.InputText("compact toaster")
	s := look(t, p)

	tap := action.Tap.MustCall(&action.TapParams{Locate: action.Locator{Prompt: "Compact Toaster"}})
	input := action.Input.MustCall(&action.InputParams{Value: "x", Locate: &action.Locator{Prompt: "Compact Toaster"}})
	for _, tc := range []struct {
		name     string
		call     action.Call
		editable bool
	}{
		{"tap", tap, false},
		{"input", input, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.call.Locators()[0].Locator
			e, err := locate.Find(s, *l)
			if err != nil {
				t.Fatalf("%v\n%s", err, s.Text())
			}
			if e.Flags.Editable != tc.editable {
				t.Errorf("%s found %s %s %q, want editable=%v\n%s", tc.name, e.ID, e.Type, e.Text, tc.editable, s.Text())
			}
		})
	}
	tapOn(t, p, *tap.Locators()[0].Locator)
	st, err := p.State("com.apex.shop")
	if err != nil {
		t.Fatal(err)
	}
	if prod, _ := st["product"].(map[string]any); prod["name"] != "Compact Toaster" {
		t.Errorf("the tap opened product %v, want Compact Toaster", st["product"])
	}
}
