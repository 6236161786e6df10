package devicetest

import (
	"strings"
	"testing"

	"github.com/apexagent/apex/device"
	"github.com/google/go-cmp/cmp"
)

func TestParseSource(t *testing.T) {
	const ui = `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0">
  <node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.apex.conformance" bounds="[0,0][1080,2400]">
    <node index="0" text="it's" resource-id="com.apex.conformance:id/note" class="android.widget.EditText" focused="true" bounds="[40,200][1040,320]" />
  </node>
</hierarchy>`
	const xcui = `<?xml version="1.0" encoding="UTF-8"?>
<XCUIElementTypeApplication type="XCUIElementTypeApplication" name="Conformance" label="Conformance" x="0" y="0" width="390" height="844">
  <XCUIElementTypeTextField type="XCUIElementTypeTextField" name="note" label="" value="Type here" placeholderValue="Type here" x="16" y="100.4" width="358" height="44" focused="true"/>
  <XCUIElementTypeButton type="XCUIElementTypeButton" name="counter" label="Tapped 1 times" x="16" y="160" width="358" height="44"/>
  <XCUIElementTypeCell type="XCUIElementTypeCell" name="Row 01" label="Row 01" x="0" y="220" width="390" height="44"/>
</XCUIElementTypeApplication>`
	tests := []struct {
		name    string
		src     device.Source
		want    *sourceTree
		wantErr string
	}{
		{"uiautomator", device.Source{Format: device.FormatUIAutomator, Data: []byte(ui)},
			&sourceTree{Format: device.FormatUIAutomator, Width: 1080, Height: 2400, Root: &node{Children: []*node{
				{Bounds: rect{0, 0, 1080, 2400}, sized: true, Children: []*node{
					{ID: "com.apex.conformance:id/note", Text: "it's", Focused: true, Bounds: rect{40, 200, 1040, 320}, sized: true}}}}}}, ""},
		{"xcuitest", device.Source{Format: device.FormatXCUITest, Data: []byte(xcui)},
			&sourceTree{Format: device.FormatXCUITest, Root: &node{ID: "", Text: "Conformance", Bounds: rect{0, 0, 390, 844}, sized: true, Children: []*node{
				{ID: "note", Focused: true, Bounds: rect{16, 100, 374, 144}, sized: true},
				{ID: "counter", Text: "Tapped 1 times", Bounds: rect{16, 160, 374, 204}, sized: true},
				{Text: "Row 01", Bounds: rect{0, 220, 390, 264}, sized: true}}}}, ""},
		{"not well-formed", device.Source{Format: device.FormatUIAutomator, Data: []byte(`<hierarchy><node></hierarchy>`)}, nil, "not well-formed XML"},
		{"XCUITest sent as uiautomator", device.Source{Format: device.FormatUIAutomator, Data: []byte(xcui)}, nil, "root element <XCUIElementTypeApplication>"},
		{"uiautomator sent as XCUITest", device.Source{Format: device.FormatXCUITest, Data: []byte(ui)}, nil, "root element <hierarchy>"},
		{"two roots", device.Source{Format: device.FormatUIAutomator, Data: []byte(`<hierarchy/><hierarchy/>`)}, nil, "second root"},
		{"no element", device.Source{Format: device.FormatUIAutomator, Data: []byte(` `)}, nil, "no element"},
		{"bad bounds", device.Source{Format: device.FormatUIAutomator, Data: []byte(`<hierarchy><node bounds="[0,0]"/></hierarchy>`)}, nil, "bounds"},
		{"unknown format", device.Source{Format: "html", Data: []byte(`<html/>`)}, nil, `format "html"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSource(tc.src)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseSource = %v; want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(node{})); diff != "" {
				t.Errorf("parseSource (-want +got):\n%s", diff)
			}
		})
	}
}
