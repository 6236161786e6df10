package agent

import (
	"testing"

	"github.com/apexagent/apex/internal/scenetest"
)

func TestRegionOf(t *testing.T) {
	sc := scenetest.SimScene(t, "com.apex.shop")
	for _, tt := range []struct {
		assertion, want string
	}{
		{"in the header: the cart shows one item", "header"},
		{"In the footer, a tab bar", "footer"},
		{"in the dialog the sale is over", "dialog"},
		{`in "Cart (0)": the badge is grey`, "Cart (0)"},
		{"in ‘Cart (0)’, the badge is grey", "Cart (0)"},
		{"在“Cart (0)”中：徽标是灰色的", "Cart (0)"},
		{"the cart shows one item", ""},
		{"in stock items are shown", ""},
		{`in "No such thing": anything`, ""},
	} {
		r := regionOf(tt.assertion, sc)
		got := ""
		if r != nil {
			got = r.name
			if r.rect.Empty() {
				t.Errorf("regionOf(%q): an empty region", tt.assertion)
			}
		}
		if got != tt.want {
			t.Errorf("regionOf(%q) = %q, want %q", tt.assertion, got, tt.want)
		}
	}
}
