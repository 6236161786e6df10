package locate

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/scene"
	"github.com/google/go-cmp/cmp"
)

// popup is the Shop's sale popup as fused from a dialog-only dump and
// OCR of the whole screen: the status bar read as words, a wrapped
// fragment read with little confidence, labels in the tree and in pixels.
var popup = &scene.Scene{Width: 1080, Height: 2400, Package: "com.apex.shop", Elements: []scene.Element{
	{ID: "e1", Type: "text", Text: "04:35", Bounds: scene.Rect{X0: 40, Y0: 30, X1: 127, Y1: 60}, Source: scene.SourceOCR, Confidence: 0.96},
	{ID: "e2", Type: "text", Text: "will 100%", Bounds: scene.Rect{X0: 798, Y0: 20, X1: 955, Y1: 60}, Source: scene.SourceOCR, Confidence: 0.79},
	{ID: "e3", Type: "text", Text: "Summer Sale: 20% off", Bounds: scene.Rect{X0: 140, Y0: 1006, X1: 748, Y1: 1052}, Source: scene.SourceOCR, Confidence: 0.96},
	{ID: "e4", Type: "text", Text: "Summer Sale: 20% off", Bounds: scene.Rect{X0: 137, Y0: 977, X1: 943, Y1: 1052}, Source: scene.SourceTree, Confidence: 1},
	el("e5", "button", "", "Close", "com.apex.shop:id/promo_close", 859, 935, 985, 1061, true),
	el("e6", "text", "Use code SUN20 at checkout. Offer ends Sunday.", "", "", 137, 1084, 943, 1201, false),
	{ID: "e7", Type: "text", Text: "e", Bounds: scene.Rect{X0: 500, Y0: 1500, X1: 520, Y1: 1530}, Source: scene.SourceOCR, Confidence: 0.9},
	{ID: "e8", Type: "text", Text: "ShOp n0w", Bounds: scene.Rect{X0: 693, Y0: 1270, X1: 964, Y1: 1350}, Source: scene.SourceOCR, Confidence: 0.6},
	el("e9", "button", "Shop now", "", "com.apex.shop:id/promo_shop", 693, 1249, 964, 1375, true),
	{ID: "e10", Type: "button", Desc: "Back", Bounds: scene.Rect{X0: 100, Y0: 2300, X1: 300, Y1: 2400}, System: true, Source: scene.SourceTree, Confidence: 1},
}}

func TestMissingCandidates(t *testing.T) {
	tests := []struct {
		name string
		loc  action.Locator
		want []string // the closest candidates' ids, closest first
		near bool
	}{
		{"a label like none shown", action.Locator{Prompt: "Checkout now"}, []string{"e6", "e9"}, false},
		{"a label close to one shown", action.Locator{Text: "Shop now!"}, []string{"e9"}, true},
		{"a count about to change", action.Locator{Prompt: "Summer Sale: 25% off"}, []string{"e4"}, true},
		{"a resource id", action.Locator{ID: "promo_shopping"}, []string{"e9", "e5"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Find(popup, tt.loc)
			var miss *MissingError
			if !errors.As(err, &miss) || !errors.Is(err, action.ErrNotFound) {
				t.Fatalf("err = %v; want a MissingError", err)
			}
			var got []string
			for _, c := range miss.Candidates {
				got = append(got, c.Element.ID)
			}
			if diff := cmp.Diff(tt.want, got[:min(len(got), len(tt.want))]); diff != "" {
				t.Errorf("closest candidates (-want +got):\n%s\n%v", diff, err)
			}
			// Each label once (the tree's copy, e4, over OCR's, e3), no noise.
			slices.Sort(got)
			if want := []string{"e4", "e5", "e6", "e9"}; !slices.Equal(got, want) {
				t.Errorf("candidates %v; want %v", got, want)
			}
			if miss.Near() != tt.near {
				t.Errorf("Near = %v; want %v (scores %+v)", miss.Near(), tt.near, miss.Candidates)
			}
			for _, noise := range []string{"04:35", "100%", `"e"`, "n0w", "Back"} {
				if strings.Contains(err.Error(), noise) {
					t.Errorf("message lists %s: %v", noise, err)
				}
			}
		})
	}
}

// Past ten candidates the message says how many more there are.
func TestMissingMessageIsBounded(t *testing.T) {
	s := &scene.Scene{Width: 1080, Height: 2400}
	for i := range 14 {
		s.Elements = append(s.Elements, el("e"+string(rune('a'+i)), "text", "Row "+string(rune('A'+i)), "", "", 0, 200+i*100, 1080, 290+i*100, false))
	}
	_, err := Find(s, action.Locator{Text: "Row Z"})
	_, list, _ := strings.Cut(err.Error(), "closest first")
	if !strings.HasSuffix(list, `"Row J", … 4 more: not found`) || strings.Count(list, `"Row `) != 10 {
		t.Errorf("err = %v", err)
	}
}
