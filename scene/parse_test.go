package scene

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseUIAutomator(t *testing.T) {
	src := "<hierarchy rotation=\"0\">\r\n" +
		`<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.x" content-desc="" clickable="false" enabled="true" bounds="[0,0][1080,2400]">` + "\r\n" +
		`<node index="0" text="Add to cart" resource-id="com.x:id/add" class="android.widget.Button" package="com.x" content-desc="" checkable="false" checked="false" clickable="true" enabled="false" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[100,1100][980,1300]" NAF="true" drawing-order="3"/>` +
		"</node>\r\n</hierarchy>\r\n"
	tr, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != FormatUIAutomator || tr.Width != 1080 || tr.Height != 2400 || tr.Nodes != 3 || tr.Bytes != len(src) {
		t.Fatalf("tree = %s %dx%d nodes=%d bytes=%d", tr.Format, tr.Width, tr.Height, tr.Nodes, tr.Bytes)
	}
	b := tr.Root.Children[0].Children[0]
	want := &Node{Class: "android.widget.Button", Text: "Add to cart", ResourceID: "com.x:id/add", Package: "com.x",
		Bounds: Rect{100, 1100, 980, 1300}, Clickable: true, Focusable: true, Visible: true,
		Attrs: map[string]string{"NAF": "true", "drawing-order": "3"}, Offset: b.Offset, hasBounds: true}
	if d := cmp.Diff(want, b, cmp.AllowUnexported(Node{})); d != "" {
		t.Errorf("button node (-want +got):\n%s", d)
	}
}

func TestParseAppiumAndMultiWindow(t *testing.T) {
	src := `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy index="0" class="hierarchy" rotation="0" width="1080" height="2274">
  <android.widget.FrameLayout index="0" package="com.x" class="android.widget.FrameLayout" text="" bounds="[0,0][1080,2400]" displayed="true">
    <android.widget.EditText index="0" package="com.x" text="hello" clickable="true" bounds="[0,100][1080,200]" displayed="true"/>
    <android.widget.TextView index="1" package="com.x" text="hidden" bounds="[0,300][1080,400]" displayed="false"/>
  </android.widget.FrameLayout>
  <android.widget.FrameLayout index="1" package="com.google.android.inputmethod.latin" bounds="[0,1600][1080,2400]"/>
</hierarchy>`
	tr, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Width != 1080 || tr.Height != 2400 || len(tr.Root.Children) != 2 {
		t.Fatalf("size %dx%d windows %d; want 1080x2400 (nodes reach past the declared height) and 2", tr.Width, tr.Height, len(tr.Root.Children))
	}
	edit := tr.Root.Children[0].Children[0]
	if edit.Class != "android.widget.EditText" || !edit.Editable || edit.Attrs["displayed"] != "true" {
		t.Errorf("edit node = %+v; want class from the tag name, editable, displayed kept", edit)
	}
	if tr.Root.Children[0].Children[1].Visible {
		t.Errorf(`displayed="false" node is Visible`)
	}
}

func TestParseXCUITest(t *testing.T) {
	src := `<AppiumAUT><XCUIElementTypeApplication type="XCUIElementTypeApplication" name="Shop" label="Shop" enabled="true" visible="true" x="0" y="0" width="390" height="844">
<XCUIElementTypeSwitch type="XCUIElementTypeSwitch" name="wifi" label="Wi-Fi" value="1" enabled="true" visible="true" x="319" y="355" width="51" height="31" accessible="true"/>
<XCUIElementTypeSecureTextField type="XCUIElementTypeSecureTextField" name="pw" label="Password" value="Password" placeholderValue="Password" enabled="true" visible="true" x="20" y="400" width="350" height="40"/>
<XCUIElementTypeButton type="XCUIElementTypeButton" name="Buy" label="Buy" enabled="false" visible="false" x="20" y="500" width="350" height="40"/>
</XCUIElementTypeApplication></AppiumAUT>`
	tr, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != FormatXCUITest || tr.Width != 390 || tr.Height != 844 {
		t.Fatalf("tree %s %dx%d; want xcuitest 390x844 (points)", tr.Format, tr.Width, tr.Height)
	}
	app := tr.Root.Children[0]
	sw, pw, buy := app.Children[0], app.Children[1], app.Children[2]
	if !sw.Checkable || !sw.Checked || sw.Text != "Wi-Fi" || sw.ResourceID != "wifi" || sw.Bounds != (Rect{319, 355, 370, 386}) || sw.Attrs["accessible"] != "true" {
		t.Errorf("switch = %+v", sw)
	}
	if !pw.Password || !pw.Editable || pw.Text != "" || pw.Desc != "Password" {
		t.Errorf("secure field = %+v; want password, editable, no text (value is the placeholder)", pw)
	}
	if !buy.Clickable || buy.Enabled || buy.Visible {
		t.Errorf("button = %+v; want clickable, disabled, invisible", buy)
	}
}

func TestParseMac2(t *testing.T) {
	src := `<?xml version="1.0" encoding="UTF-8"?>
<XCUIElementTypeApplication elementType="2" identifier="" label="" title="WeCom" enabled="false" selected="false" x="0" y="0" width="0" height="0">
  <XCUIElementTypeWindow elementType="4" identifier="" title="WeCom" enabled="false" x="100" y="50" width="800" height="600">
    <XCUIElementTypeTextField elementType="49" identifier="search" value="" label="" title="" enabled="true" x="120" y="60" width="180" height="34"></XCUIElementTypeTextField>
  </XCUIElementTypeWindow>
</XCUIElementTypeApplication>`
	tr, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Width != 900 || tr.Height != 650 {
		t.Errorf("size %dx%d; want the windows' extent 900x650", tr.Width, tr.Height)
	}
	s := Build(tr, nil)
	if e, ok := s.Element("e1"); !ok || e.Type != "input" || e.ResourceID != "search" {
		t.Errorf("scene = %s; want e1 an input id=search", s.Text())
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"html", `<html><body>hi</body></html>`, []string{"not a uiautomator or XCUITest source", "<html>"}},
		{"empty", ``, []string{"not a uiautomator or XCUITest source"}},
		{"text only", `just words`, []string{"not a uiautomator or XCUITest source"}},
		{"truncated", `<hierarchy><node bounds="[0,0][1,1]">`, []string{"byte 37", "expected </node>", "opened at byte 11"}},
		{"mismatched", `<hierarchy><node bounds="[0,0][1,1]"></hierarchy>`, []string{"byte 37", "expected </node>"}},
		{"bad attr", `<hierarchy><node bounds=></node></hierarchy>`, []string{"malformed XML at byte", "line 1"}},
		{"bad bounds", `<hierarchy><node bounds="[0,0][x,1]"/></hierarchy>`, []string{"byte 11", "expected [x0,y0][x1,y1]"}},
		{"bad number", `<XCUIElementTypeApplication x="a" y="0" width="1" height="1"/>`, []string{"byte 0", `x="a": expected a number`}},
		{"charset", `<?xml version="1.0" encoding="latin1"?><hierarchy/>`, []string{"UTF-8"}},
		{"mixed", `<hierarchy/><AppiumAUT/>`, []string{"cannot continue"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src))
			if err == nil {
				t.Fatal("Parse succeeded; want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, err := Parse([]byte(`<html/>`)); !errors.Is(err, ErrNotUISource) {
		t.Errorf("error %v does not wrap ErrNotUISource", err)
	}
}
