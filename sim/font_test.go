package sim

import "testing"

// TestStarGlyphs checks the rating stars are drawn even when no font has
// them (the Go fonts do not; Noto CJK does, when installed).
func TestStarGlyphs(t *testing.T) {
	for _, tc := range []struct {
		r            rune
		centreFilled bool
	}{{'★', true}, {'☆', false}} {
		g := shapeGlyph(tc.r, 60)
		b := g.mask.Bounds()
		centre := g.mask.AlphaAt(b.Dx()/2, b.Dy()/2+b.Dy()/20).A > 128
		corner := g.mask.AlphaAt(1, 1).A > 0
		top := g.mask.AlphaAt(b.Dx()/2, b.Dy()/10).A > 128 // the upper point's edge
		if centre != tc.centreFilled || corner || !top {
			t.Errorf("%c: centre filled %v (want %v), corner %v, top point %v", tc.r, centre, tc.centreFilled, corner, top)
		}
	}
	if g := shapeGlyph('☃', 60); g.mask.AlphaAt(0, 0).A != 255 {
		t.Error("a rune no font has and no shape draws is not tofu")
	}
}
