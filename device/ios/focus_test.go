package ios

import (
	"testing"

	"github.com/apexagent/apex/wda"
	"github.com/google/go-cmp/cmp"
)

func TestMarkFocused(t *testing.T) {
	src := `<XCUIElementTypeTextFieldX x="16" y="180" width="358" height="36"/>` +
		`<XCUIElementTypeTextField type="XCUIElementTypeTextField" x="16" y="100" width="358" height="36"/>` +
		`<XCUIElementTypeTextField type="XCUIElementTypeTextField" label="a>b" x="16" y="180" width="358" height="36.2"></XCUIElementTypeTextField>`
	got := MarkFocused([]byte(src), "XCUIElementTypeTextField", wda.Rect{X: 16, Y: 180, Width: 358, Height: 36})
	want := `<XCUIElementTypeTextFieldX x="16" y="180" width="358" height="36"/>` +
		`<XCUIElementTypeTextField type="XCUIElementTypeTextField" x="16" y="100" width="358" height="36"/>` +
		`<XCUIElementTypeTextField type="XCUIElementTypeTextField" label="a>b" x="16" y="180" width="358" height="36.2" focused="true"></XCUIElementTypeTextField>`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	self := `<XCUIElementTypeSearchField x="1" y="2" width="3" height="4"/>`
	if got := MarkFocused([]byte(self), "XCUIElementTypeSearchField", wda.Rect{X: 1, Y: 2, Width: 3, Height: 4}); string(got) != `<XCUIElementTypeSearchField x="1" y="2" width="3" height="4" focused="true"/>` {
		t.Errorf("self-closing: %s", got)
	}
	if got := MarkFocused([]byte(self), "XCUIElementTypeSearchField", wda.Rect{X: 9}); string(got) != self {
		t.Errorf("no match changed the source: %s", got)
	}
}
